"""Interleaved threads: two jobs through one search core, one clock each in turn (C-slow).

Why: the core's longest path runs from its registers through the move generator's square arrays
(GenVictim, GenAggressor, TestCheck, CastleStatus, the evaluation's adders) and on through the
FSM's choice and the make into the same registers. A register in the middle of that loop halves
the path, but the search needs each step's answer in the next cycle. C-slow retiming (Leiserson
and Saxe) pays for it with a second, independent job: every register of the core becomes two in
series, so the core holds two threads of state, each a clock apart, and the extra register of
every loop can be moved to the cut between the two halves. Each job then advances every other
clock, at the higher clock: the core still makes one step a clock (of one job or the other), so
what it gains is the clock alone (22.74 -> 36.24 MHz on the ECP5-85F, docs/synthesis.md).

The two halves ("stages") of a core cycle:

* **generate**: the datapath blocks read the first copy of each register (``early``): the board,
  the top frame, the job. Their outputs are registered (``cut``).
* **decide**: the FSM, the make, the stack and the counters read the second copy (``now``) and
  the cut, and write the first copy (``next``), which the generate stage sees one clock later.

A register the block memories of the decide stage feed (the evaluation table's reads, the
stack's read port) is the cut of its own loop already, so they stay single: the thread of an
address given by the decide stage at clock t is the thread of the generate stage at t + 1.

With ``threads=1`` the same description is the plain core: ``early`` and ``now`` are one
register and ``cut`` is a wire, so the single-thread netlist is exactly the one written without
this module.
"""

from amaranth.hdl import Const, Signal

__all__ = ["THREAD_COUNTS", "Interleave", "Staged"]

#: Threads a core may interleave: 1 (the plain core) or 2 (the C-slow core).
THREAD_COUNTS = (1, 2)


class Staged:
    """One architectural register of the core: ``early`` (what the generate stage reads),
    ``now`` (what the decide stage reads) and ``next`` (what the decide stage writes; it holds
    ``now`` unless assigned)."""

    def __init__(self, early, now, next):
        self.early, self.now, self.next = early, now, next


class Interleave:
    """Makes the registers and cuts of a core of ``threads`` threads in module ``m``.

    ``thread`` is the thread in the decide stage (a register that counts round the threads; the
    constant 0 for one thread). Assign a ``Staged.next`` only in ``m`` and after ``register``
    made it (its default, hold, is the first assignment)."""

    def __init__(self, m, threads):
        if threads not in THREAD_COUNTS:
            raise ValueError(f"threads must be one of {THREAD_COUNTS}, got {threads}")
        self.m, self.threads = m, threads
        self._thread = None

    @property
    def thread(self):
        if self._thread is None:
            if self.threads == 1:
                self._thread = Const(0, 1)
            else:
                self._thread = Signal(range(self.threads), name="thread")
                self.m.d.sync += self._thread.eq(self._thread + 1)
        return self._thread

    def register(self, shape, name):
        m = self.m
        early = Signal(shape, name=name)
        if self.threads == 1:
            now = early
        else:
            now = Signal(shape, name=f"{name}_now")
            m.d.sync += now.eq(early)
        next_ = Signal(shape, name=f"{name}_next")
        m.d.comb += next_.eq(now)
        m.d.sync += early.eq(next_)
        return Staged(early, now, next_)

    def cut(self, value, name):
        """``value`` (computed in the generate stage) as the decide stage reads it."""
        seen = Signal(value.shape(), name=f"{name}_cut")
        if self.threads == 1:
            self.m.d.comb += seen.eq(value)
        else:
            self.m.d.sync += seen.eq(value)
        return seen

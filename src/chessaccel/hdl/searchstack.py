"""SearchStack: the local variables of every ply of the search, one ``Frame`` per ply.

The frame of the node being searched (the top) lives in registers, where the AlphaBetaFSM reads
and rewrites it every cycle; the frames of its ancestors live in a memory of MAX_PLY entries
(block RAM on an FPGA), written when a child is pushed and read back when it returns. The memory's
read port always addresses the parent of the top, and is transparent to the write port, so the
parent's frame is on ``parent`` in every cycle, including the one right after a push or a pop:
returning a value to the parent costs no wait state.

``Frame`` mirrors ``sim/model/search.py``'s ``Frame`` plus the state of ``MovePicker``
(sim/model/movegen.py) the hardware must keep per ply; the model's ``legal`` count is kept as the
one bit the search reads (``has_legal``) and its ``pv`` is not kept (the core reports the best
root move only). ``sums`` is the node's evaluation state (``EvalSums``: the incremental
Evaluate's running sums), so an unmake restores it with the frame and needs no subtraction.
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import (GenStage, MAX_DEPTH, MAX_PLY, Move, PieceType, PROMOTION_ORDER,
                             Score, Square, UndoRecord)
from chessaccel.contract.evaltables import EvalSums

from .interleave import Interleave

__all__ = ["Frame", "StackOp", "SearchStack"]


class Frame(data.Struct):
    """One ply of the search: window, best so far, generation state, and the move made."""
    depth:         range(MAX_DEPTH + 1)
    alpha:         Score
    beta:          Score
    best:          Score
    best_move:     Move
    in_check:      1
    captures_only: 1
    has_legal:     1   # a legal move was found (mate / stalemate test)
    mask:          64  # GenVictim / GenAggressor disable mask
    evasions:      64  # in check: the squares a move of another piece than the king may reach
    victim:        Square  # the victim whose aggressors are being walked (found in advance)
    victim_valid:  1   # ``victim`` is one (else the victims are exhausted: castling next)
    king_only:     1   # in check, and ``victim`` off the evasions: only the king may take it
    more:          1   # another aggressor follows the promoting pawn (``GenAggressor.more``)
    stage:         GenStage
    promoting:     1   # the move's pawn still has promotions to try
    promo:         range(len(PROMOTION_ORDER))  # index of the next promotion piece
    move:          Move  # the move being searched from this node (made on the board)
    moving:        PieceType  # the type of the piece it moved (its UNMAKE reads no square)
    undo:          UndoRecord
    sums:          EvalSums  # the node's evaluation sums (IncrementalEvaluate), its side's view


class StackOp(enum.Enum, shape=3):
    HOLD  = 0  # keep everything
    WRITE = 1  # top <= next_top
    PUSH  = 2  # memory[ply] <= store; top <= next_top; ply + 1
    POP   = 3  # top <= next_top (built from parent); ply - 1
    CLEAR = 4  # ply <= 0; top <= next_top (the root frame of a new job)


class SearchStack(wiring.Component):
    """Per-ply frames: the top in registers, the ancestors in a ``max_ply``-entry memory.

    One operation per cycle on ``op``; ``top``, ``parent`` and ``ply`` show the result from the
    next cycle on, and so do ``at_root`` (ply 0) and ``child_at_max`` (ply + 1 is ``max_ply``:
    a child pushed now would fill the stack), registered so that the search's choices read a
    flag, not a comparison of ``ply``. ``parent`` is the frame at ``ply - 1`` (meaningless at
    ply 0). A PUSH at ``ply == max_ply`` or a POP at ply 0 is a caller error (the AlphaBetaFSM
    never issues one).
    ``max_ply`` (default MAX_PLY) is a parameter so tests can fill the stack in a few plies.
    """

    def __init__(self, max_ply=MAX_PLY, threads=1):
        if not 1 <= max_ply <= MAX_PLY:
            raise ValueError(f"max_ply {max_ply} out of range 1..{MAX_PLY}")
        self.max_ply = max_ply
        self.threads = threads
        members = {
            "op":       In(StackOp),
            "next_top": In(Frame),
            "store":    In(Frame),
            "top":      Out(Frame),
            "parent":   Out(Frame),
            "ply":      Out(range(max_ply + 1)),
            "at_root":  Out(1),
            "child_at_max": Out(1),
            "early_top": Out(Frame),
        }
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        # interleaved threads (hdl/interleave.py): top and ply are register pairs, the ops read
        # the second copy (``top``), the move generator the first (``early_top``); each thread
        # has its own half of the memory (the thread in the address)
        lanes = Interleave(m, self.threads)
        top = lanes.register(Frame, "top")
        ply = lanes.register(range(self.max_ply + 1), "ply")
        at_root = lanes.register(1, "at_root")
        child_at_max = lanes.register(1, "child_at_max")
        m.d.comb += [self.top.eq(top.now), self.early_top.eq(top.early), self.ply.eq(ply.now),
                     self.at_root.eq(at_root.now), self.child_at_max.eq(child_at_max.now)]
        # the flags of the ply after each op, from compares of the ply before it: the op only
        # selects (it comes late, from the search's choice)
        after_push = {"at_root": Const(0), "child_at_max": ply.now + 2 == self.max_ply}
        after_pop = {"at_root": ply.now == 1, "child_at_max": ply.now == self.max_ply}
        after_clear = {"at_root": Const(1), "child_at_max": Const(self.max_ply == 1)}
        flags = {"at_root": at_root, "child_at_max": child_at_max}
        slot_bits = max(1, (self.max_ply - 1).bit_length())
        # the stack's own thread counter (in step with the core's from reset): the core's drives
        # hundreds of loads, and the memory's address should not wait on its routing
        thread = lanes.thread if self.threads > 1 else Const(0, 0)
        m.submodules.frames = frames = Memory(
            shape=Frame, depth=(2 ** slot_bits) * self.threads, init=[])
        write = frames.write_port()
        read = frames.read_port(transparent_for=(write,))

        with m.Switch(self.op):
            with m.Case(StackOp.WRITE):
                m.d.comb += top.next.eq(self.next_top)
            with m.Case(StackOp.PUSH):
                m.d.comb += [write.addr.eq(Cat(self.ply[:slot_bits], thread)),
                             write.data.eq(self.store), write.en.eq(1),
                             ply.next.eq(self.ply + 1)]
                m.d.comb += top.next.eq(self.next_top)
                m.d.comb += [flag.next.eq(after_push[name]) for name, flag in flags.items()]
            with m.Case(StackOp.POP):
                m.d.comb += ply.next.eq(self.ply - 1)
                m.d.comb += top.next.eq(self.next_top)
                m.d.comb += [flag.next.eq(after_pop[name]) for name, flag in flags.items()]
            with m.Case(StackOp.CLEAR):
                m.d.comb += ply.next.eq(0)
                m.d.comb += top.next.eq(self.next_top)
                m.d.comb += [flag.next.eq(after_clear[name]) for name, flag in flags.items()]
        # The read port registers its address: present the parent of the *next* top now (with
        # two threads the thread's next turn is two cycles on: the data waits one more cycle).
        parent_slot = Signal(range(self.max_ply + 1))
        m.d.comb += [parent_slot.eq(ply.next - 1),
                     read.addr.eq(Cat(parent_slot[:slot_bits], thread))]
        if self.threads == 1:
            m.d.comb += self.parent.eq(read.data)
        else:
            m.d.sync += self.parent.eq(read.data)
        return m

"""How long to think: UCI ``go`` limits -> the search's soft and hard deadlines.

Two deadlines (time.monotonic() seconds):

- **soft**: no new iteration starts after it. An iteration costs several times the one before
  it, so one begun late would be cut off by the hard deadline anyway and wasted.
- **hard**: the search stops, mid-iteration and mid-job (jobs are cancelled, the search thread
  never waits for an accelerator past it), and the best move so far is played.

Under ``movetime`` both are the move time less the move overhead: the engine uses all of it, and
the hard deadline is what keeps a slow backend (a simulated board answers in fractions of a
second) from overrunning it. Under a clock the engine plans for ``movestogo`` moves (or
``HORIZON`` when the game is sudden death) plus most of what the increment leaves after the
overhead, never more than a fixed share of what is left, and always keeps ``overhead`` in hand.
The overhead is the time the GUI, the pipes and the host's own reaction cost between its clock
and ours: the UCI ``Move Overhead`` option, or more when ``LagMeter`` has seen more (on a
loaded machine it can exceed the increment).
"""

from dataclasses import dataclass

__all__ = ["GoLimits", "Budget", "plan", "LagMeter", "HORIZON", "DEFAULT_OVERHEAD_MS",
           "DEFAULT_SLOW_MOVER", "soft_percent"]

#: Moves still to play assumed in sudden death.
HORIZON = 30
#: Milliseconds kept in hand for what happens outside the search (UCI ``Move Overhead``).
DEFAULT_OVERHEAD_MS = 50
#: The hard deadline may use this many times the planned time, when the clock allows it.
HARD_FACTOR = 5.0
#: ... and never more than this share of the time left (less the overhead).
HARD_SHARE = 0.1
#: Soft deadline, as a share of the planned time: past it, no new iteration begins. The whole
#: planned time since 2026-11-30 (it was half, with half the hard factor: the engine ended its
#: games against stockfish with 3.8 s of 10 unused); self-play, the same as Slow Mover 200 with
#: the old shares against 100: +143 +- 90 Elo, SPRT(0, 50) accepted
#: (docs/benchmarks/time-sprt-h200cpu-2026-11-30/).
SOFT_SHARE = 1.0
#: Moves the clock must last, thinking nothing, when the overhead exceeds the increment.
RESERVE_MOVES = 60
#: The planned time in percent of the plan's (UCI ``Slow Mover``, as Stockfish had it): more
#: thinks longer while the clock is full, and the clock's fall brings each move's share back.
DEFAULT_SLOW_MOVER = 100
#: Least time given to a move, in seconds: enough for the first iteration to give a move.
MIN_THINK = 0.005
#: The soft deadline scaled by how settled the search is (SearchOptions.time_stability, UCI
#: ``TimeStability``), in percent of the planned span, after each iteration: a best move that
#: changed in it asks for more time, one that stood for STABLE_ITERATIONS iterations or more
#: for less, and a score that fell by STABLE_FALL_CP or more from the iteration before for more
#: again (the hard deadline bounds them all).
STABLE_CHANGED_PERCENT = 150
STABLE_ITERATIONS = 3
STABLE_SETTLED_PERCENT = 70
STABLE_FALL_CP = 30
STABLE_FALL_PERCENT = 130


def soft_percent(changed, settled, fall):
    """The soft deadline's span in percent of the plan's after an iteration whose best move
    ``changed`` (or stood for ``settled`` iterations, this one included) and whose score fell by
    ``fall`` cp from the iteration before (negative: rose). hostsearch.cpp's soft_percent."""
    percent = (STABLE_CHANGED_PERCENT if changed
               else STABLE_SETTLED_PERCENT if settled >= STABLE_ITERATIONS else 100)
    if fall >= STABLE_FALL_CP:
        percent = percent * STABLE_FALL_PERCENT // 100
    return percent


@dataclass
class GoLimits:
    """The time-related fields of a UCI ``go`` (milliseconds, None when absent)."""
    wtime: int = None
    btime: int = None
    winc: int = None
    binc: int = None
    movestogo: int = None
    movetime: int = None
    infinite: bool = False


@dataclass
class Budget:
    soft: float = None          # seconds from the start of the search
    hard: float = None

    def deadlines(self, start):
        """(soft, hard) as time.monotonic() values for a search that began at ``start``."""
        soft = start + self.soft if self.soft is not None else None
        hard = start + self.hard if self.hard is not None else None
        return soft, hard


def plan(go, white_to_move, overhead_ms=DEFAULT_OVERHEAD_MS, slow_mover=DEFAULT_SLOW_MOVER):
    """The Budget for a ``go`` (no deadline at all when infinite or when no time is given);
    ``slow_mover`` scales the planned time under a clock (percent), within the hard limits."""
    overhead = overhead_ms / 1000
    if go.infinite:
        return Budget()
    if go.movetime is not None:
        think = max(go.movetime / 1000 - overhead, MIN_THINK)
        return Budget(soft=think, hard=think)
    left = go.wtime if white_to_move else go.btime
    if left is None:
        return Budget()
    increment = (go.winc if white_to_move else go.binc) or 0
    left, increment = left / 1000, increment / 1000
    moves = max(1, min(go.movestogo or HORIZON, HORIZON))
    # when a move costs more than the increment brings, keep enough for RESERVE_MOVES more
    # moves at that loss (thinking nothing)
    reserve = max(overhead - increment, 0.0) * min(RESERVE_MOVES, moves)
    usable = max(left - overhead - reserve, 0.0)
    # every move pays the overhead and gets the increment back: most of the increment, less
    # the overhead (it may be more than the increment on a loaded machine), is ours to spend
    target = (usable / moves + 0.75 * increment - overhead) * slow_mover / 100
    hard = min(target * HARD_FACTOR, usable * HARD_SHARE if moves > 1 else usable * 0.9)
    hard = max(min(hard, usable), MIN_THINK)
    target = max(min(target, hard), MIN_THINK)
    return Budget(soft=target * SOFT_SHARE, hard=hard)


#: How fast an old lag measurement is forgotten (per move) by LagMeter.
LAG_DECAY = 0.75
#: Lags above this (ms) are taken for a GUI that paused the clock or changed it: ignored.
LAG_SANE_MS = 10_000


class LagMeter:
    """How much more a move costs on the GUI's clock than the engine's own thinking took.

    From one ``go`` to the next in the same game the GUI's clock for our side drops by the
    time it charged us minus the increment; the engine knows how long it thought. The
    difference is the lag (pipes, the GUI, the machine's scheduling): a decaying maximum of it
    is kept, so that a spike is remembered for a few moves and a loaded machine is planned
    for.
    """

    def __init__(self):
        self.lag_ms = 0.0
        self._last = None       # (moves played, clock ms, increment ms, thought ms)

    def expected_ms(self, floor_ms):
        """The overhead to plan with: the option's value or the lag seen, whichever is more."""
        return max(floor_ms, int(self.lag_ms * 1.25))

    def before_go(self, plies, clock_ms):
        """A ``go`` for our side with ``clock_ms`` on its clock, ``plies`` into the game."""
        last = self._last
        self._last = None
        if last is None or clock_ms is None or plies != last[0] + 2:
            return
        charged = last[1] - clock_ms + last[2]
        lag = charged - last[3]
        if 0 <= lag <= LAG_SANE_MS:
            self.lag_ms = max(float(lag), LAG_DECAY * self.lag_ms)

    def after_move(self, plies, clock_ms, increment_ms, thought_ms):
        """We answered the ``go`` given ``plies`` into the game, after ``thought_ms``."""
        if clock_ms is not None:
            self._last = (plies, clock_ms, increment_ms or 0, thought_ms)

"""The host's search: the top of the tree in software, the last plies on the accelerators.

Iterative deepening with aspiration windows over a fail-soft principal variation search
(docs/semantics.md's negamax, section 5, with the usual host refinements): a transposition
table, move ordering at the top (hash move, then the accelerator's own MVV/LVA order with the
killers placed first among the quiet moves), repetition, fifty-move and dead-material draws (the
accelerator never sees the game's history: the host must). The host's plies live in a
``HostBoard`` (engine/hostboard.py: compiled code held to python-chess by the tests): push and
pop, legal moves in the host's order, the model ``Board`` each job carries, keys and draws;
python-chess holds the root and its game.

**The frontier.** A node with ``HardwarePlies`` plies or fewer left (below the root) is not
searched by the host: it becomes a job (position, depth, window) for an accelerator, whose score,
best move and node count the host uses. Its parent is a *frontier parent*; there the host applies
*young brothers wait*: the eldest child's job runs alone (it usually sets the bound that cuts off
or narrows the rest), then every remaining sibling goes out in one batch with the bound the
eldest set (a null window under PVS), to as many accelerators as the executor has. Results are
taken in move order as they arrive; a result that the narrower bound of a sibling processed
earlier makes inconclusive is searched again; a cutoff cancels what is still running. Because
the batch's window and the order of processing do not depend on timing, the result (score,
best move, PV, the nodes of the jobs used) is the same for any number of accelerators. At a
null-window frontier parent (most of them under PVS) the eldest's result cannot narrow the
window (it fails low or cuts off), so all children go out at once: the same jobs, the same
results, and when the eldest cuts off, its brothers were speculation and are cancelled.

**Selective search and threads.** The selective steps at host nodes (null move, late-move
reductions of host children and of jobs, reverse futility, the check extension, mate-distance
pruning, the internal iterative reduction, history order, futility and late-move pruning of
quiet moves at shallow nodes, done before a frontier parent's batch is made) are
``SearchOptions`` switches, off by default; ``threads`` > 1 runs Lazy SMP helpers beside this search, sharing its table and
executor (docs/engine.md says what each measured).

**Exactness.** With the table, PVS, aspiration, killers and draws switched off
(``SearchOptions.exact()``), a host search of depth D with frontier H returns the score and best
move of the accelerator's own search of depth D; with ``parallel=False`` as well (each sibling's
job waits for the one before, as the accelerator would), it also returns its PV and node count
(host nodes + job nodes). tests/test_engine_frontier.py holds the host to that.
"""

import heapq
import math
import threading
import time
from dataclasses import dataclass, field, replace

from chessaccel.contract.defs import INF, MATE, MAX_DEPTH
from chessaccel.model.evalterms import evaluator
from chessaccel.model.position import board_from_chess
from .hostboard import HostBoard
from .executors import Job
from .order import from_model, ordered_moves
from .scores import (HOST_MAX_PLY, MATE_BOUND, fifty_scaled, fifty_window, from_job, from_tt, is_mate,
                     job_window, mate_moves, to_tt)
from .timeman import soft_percent
from .tt import Bound

__all__ = ["SearchOptions", "Limits", "IterationInfo", "SearchResult", "HostSearch",
           "SearchAborted", "MAX_ITERATION", "game_keys", "legal_prefix"]

#: Deepest iteration of iterative deepening (host plies plus the frontier's plies).
MAX_ITERATION = 64
#: Longest wait for a job result before the stop flag and the clock are looked at again.
_POLL_SECONDS = 0.01
_KILLERS = 2
#: A pruned move's slot in a frontier parent's batch (_brothers): no job.
_PRUNED = -1
MAX_THREADS = 4096
#: Largest split budget (nodes) and lanes a launch of split jobs may be given.
MAX_SPLIT_BUDGET = 1 << 30
MAX_SPLIT_LANES = 1 << 20
#: Lazy SMP: helper thread i skips the iterations where ((depth + SKIP_PHASE[j]) // SKIP_SIZE[j])
#: is odd, j = (i - 1) mod 20, so the threads spread over neighbouring depths (Stockfish 9's
#: tables).
SKIP_SIZE = (1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4)
SKIP_PHASE = (0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7)
#: Reverse futility (static null move): a node at most this many plies above its frontier
#: whose static score beats beta by FUTILITY_MARGIN a ply of depth is taken as failing high.
FUTILITY_HOST_PLIES = 3
FUTILITY_MARGIN = 85
#: ``deep_futility``: reverse futility at every node of at most this much depth (its jobs'
#: plies included), as engines prune far from the leaves (Stockfish and Ethereal: 8 or 9).
FUTILITY_DEEP_DEPTH = 8
#: Late-move reductions start with the node's LMR_FIRST-th move (captures, promotions, killers
#: and checks are never reduced).
LMR_FIRST = 3
#: Futility pruning: a null-window node not in check at most FUTILITY_PRUNING_PLIES plies above
#: its frontier (depth - HardwarePlies <= FUTILITY_PRUNING_PLIES: frontier parents and their
#: parents) whose static score plus FUTILITY_PRUNING_BASE + FUTILITY_PRUNING_STEP a ply above the
#: frontier is at most alpha searches no quiet move after its first (a capture, promotion,
#: check, the hash move or a killer is still searched).
FUTILITY_PRUNING_PLIES = 2
FUTILITY_PRUNING_BASE = 100
FUTILITY_PRUNING_STEP = 120
#: Late-move (move-count) pruning: a null-window node not in check at most LATE_MOVE_PLIES plies
#: above its frontier searches, of its quiet moves, the first
#: LATE_MOVE_BASE + LATE_MOVE_FACTOR * (plies above the frontier) ** 2 in order (5, 11, 21) and
#: after them only killers and checks.
LATE_MOVE_PLIES = 3
LATE_MOVE_BASE = 3
LATE_MOVE_FACTOR = 2
#: The null move's reduction by the static score (NullMoveEval): one ply more for each
#: NULL_EVAL_STEP cp by which the static score beats beta, at most NULL_EVAL_MOST.
NULL_EVAL_STEP = 200
NULL_EVAL_MOST = 3
#: Singular extensions: at a node whose table entry (a lower bound or exact score, at most
#: SINGULAR_TABLE_PLIES plies shallower than the node) names its first move, the other moves are
#: searched depth // 2 plies deep with a null window SINGULAR_MARGIN cp a ply of depth below the
#: entry's score; when none reaches it, the first move is searched a ply deeper, and when that
#: window is at or above beta and one reaches it, the node fails high (multi-cut). Only where the
#: verification's children are host nodes (depth // 2 - 1 > HardwarePlies).
SINGULAR_TABLE_PLIES = 3
SINGULAR_MARGIN = 2


class SearchAborted(Exception):
    """Stop, a deadline or the node limit ended the search."""


class _EitherSet:
    """Set when either event is (a helper thread stops with the user's stop or its group's)."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def is_set(self):
        return self.second.is_set() or (self.first is not None and self.first.is_set())


@dataclass
class SearchOptions:
    hardware_plies: int = 3     # plies (above quiescence) searched by a job
    tt: bool = True
    pvs: bool = True
    aspiration: bool = True
    killers: bool = True
    draws: bool = True          # repetition, fifty-move rule, dead material at the top
    parallel: bool = True       # young brothers wait at frontier parents (batches)
    aspiration_delta: int = 35
    # selective search at host nodes (docs/engine.md, "Selective search"); jobs stay full width
    null_move: bool = False     # null-move pruning
    reductions: bool = False    # late-move reductions of host children
    job_reductions: bool = False  # late quiet moves' jobs a ply shallower
    job_reduction_plies: int = 1  # ... or up to this many plies, by the late-move formula
    null_move_depth: int = 1    # the least depth (plies left) of a node that tries the null move
    null_move_eval: bool = False  # the null move reduced a ply more per 200 cp above beta
    futility: bool = False      # reverse futility pruning (static null move)
    deep_futility: bool = False  # ... up to FUTILITY_DEEP_DEPTH, not only near the frontier
    check_extension: bool = False
    mate_distance: bool = False  # mate-distance pruning
    iir: bool = False           # internal iterative reduction: no hash move, one ply less
    history: bool = False       # quiet moves after the killers in order of their cutoffs
    futility_pruning: bool = False  # quiet moves of a hopeless shallow node not searched
    late_move_pruning: bool = False  # late quiet moves of a shallow node not searched
    non_pv_reductions: bool = False  # late-move reductions a ply more at null-window nodes
    bad_captures_last: bool = False  # losing captures after the quiet moves (host order)
    counter_moves: bool = False  # the quiet move that last refuted the opponent's, after the killers
    fifty_move_scaling: bool = False  # scores scaled toward 0 as the fifty-move counter grows
    twofold_draws: bool = False  # a position seen once before the root is a draw too (_repeats)
    time_stability: bool = False  # the soft deadline scaled by how settled the search is (_deepen)
    singular_extension: bool = False  # the hash move a ply deeper where no other move comes near
    # the static evaluation ("pst" or "terms", section 6): the jobs' (the executor's backend was
    # made with it) and the host's own, where the selective steps read a static score
    evaluation: str = "pst"

    threads: int = 1            # Lazy SMP: search threads sharing the table (docs/engine.md)
    # the compiled search's OpenCL launches (hostlaunch.cpp): a job's node whose subtree has
    # counted split_budget nodes is split on the device (0: never; -1: the device's default,
    # GPU_SPLIT_BUDGET on a GPU, none on a CPU), on split_lanes lanes a launch (0: the
    # default); the same results (docs/opencl.md, "Splitting long jobs", docs/engine.md)
    split_budget: int = -1
    split_lanes: int = 0

    SELECTIVE = ("null_move", "reductions", "job_reductions", "futility", "check_extension",
                 "mate_distance", "iir", "history", "futility_pruning", "late_move_pruning",
                 "counter_moves", "null_move_eval", "fifty_move_scaling", "twofold_draws",
                 "time_stability", "deep_futility", "non_pv_reductions",
                 "bad_captures_last", "singular_extension")

    @classmethod
    def exact(cls, hardware_plies, parallel=True):
        """The plain alpha-beta of the contract above the frontier (no table, no pruning)."""
        return cls(hardware_plies=hardware_plies, tt=False, pvs=False, aspiration=False,
                   killers=False, draws=False, parallel=parallel)

    @property
    def selective(self):
        return any(getattr(self, name) for name in self.SELECTIVE)

    def check(self):
        if not 0 <= self.hardware_plies <= MAX_DEPTH:
            raise ValueError(f"hardware plies {self.hardware_plies} out of range 0..{MAX_DEPTH}")
        if not 1 <= self.job_reduction_plies <= MAX_DEPTH:
            raise ValueError(f"job reduction plies {self.job_reduction_plies} out of range "
                             f"1..{MAX_DEPTH}")
        if not 1 <= self.null_move_depth <= MAX_DEPTH:
            raise ValueError(f"null move depth {self.null_move_depth} out of range "
                             f"1..{MAX_DEPTH}")
        if not 1 <= self.threads <= MAX_THREADS:
            raise ValueError(f"threads {self.threads} out of range 1..{MAX_THREADS}")
        if not -1 <= self.split_budget <= MAX_SPLIT_BUDGET:
            raise ValueError(f"split budget {self.split_budget} out of range "
                             f"-1..{MAX_SPLIT_BUDGET}")
        if not 0 <= self.split_lanes <= MAX_SPLIT_LANES:
            raise ValueError(f"split lanes {self.split_lanes} out of range 0..{MAX_SPLIT_LANES}")


@dataclass
class Limits:
    depth: int = None           # last iteration to search
    nodes: int = None           # host + accelerator nodes
    deadline: float = None      # time.monotonic() at which the search stops, mid-iteration
    soft_deadline: float = None  # no new iteration starts after this
    mate: int = None            # stop once a mate in this many moves (or fewer) is found
    root_moves: list = None     # search only these root moves (UCI searchmoves)


@dataclass
class IterationInfo:
    depth: int
    seldepth: int
    score: int
    bound: str                  # "exact", "lower" (fail high), "upper" (fail low)
    pv: list
    host_nodes: int
    accelerator_nodes: int      # nodes of the jobs the search used
    speculative_nodes: int      # nodes of jobs finished but not used (cut off siblings)
    jobs: int
    seconds: float
    hashfull: int
    span_nodes: int             # accelerator nodes on the critical path (see HostSearch)

    @property
    def nodes(self):
        return self.host_nodes + self.accelerator_nodes


@dataclass
class SearchResult:
    best_move: object           # chess.Move or None (no legal move)
    ponder_move: object
    score: int
    depth: int                  # last completed iteration (0: none)
    pv: list
    host_nodes: int
    accelerator_nodes: int
    speculative_nodes: int
    jobs: int
    seconds: float
    seldepth: int
    span_nodes: int
    iterations: list = field(default_factory=list)
    aborted: bool = False
    error: str = None

    @property
    def nodes(self):
        return self.host_nodes + self.accelerator_nodes

    @property
    def mate(self):
        """Moves to mate (negative: mated) when the score is a mate, else None."""
        return mate_moves(self.score)


def game_keys(cb, root=None):
    """Keys of the game's positions back to its last irreversible move, oldest first, the
    position of ``cb`` last (what repetitions are looked up in). ``root``: a HostBoard of
    ``cb`` at hand (its key is the last)."""
    keys = [root.key() if root is not None else HostBoard(cb).key()]
    back = min(len(cb.move_stack), cb.halfmove_clock)
    if back:
        history = cb.copy()
        earlier = None
        for _ in range(back):
            history.pop()
            if earlier is None:
                earlier = HostBoard(history)
            else:
                earlier.set_root(board_from_chess(history))
            keys.append(earlier.key())
    keys.reverse()
    return keys


def legal_prefix(cb, pv, root=None):
    """The moves of ``pv`` that are legal one after another from ``cb``, up to the first that
    is not (a PV read from the table may end in a move of another position). ``root``: a
    HostBoard of ``cb`` at hand (left as it was)."""
    board = root if root is not None else HostBoard(cb)
    out = []
    try:
        for move in pv:
            if move is None or not board.is_legal(move):
                break
            out.append(move)
            board.push(move)
    finally:
        for _ in out:
            board.pop()
    return out


def makespan(costs, slots):
    """Finish time of ``costs`` handed in order to ``slots`` accelerators, each job to the first
    free one (None: all at once). Used for the critical path in accelerator nodes."""
    if not costs:
        return 0
    if slots is None or slots >= len(costs):
        return max(costs)
    if slots == 1:
        return sum(costs)
    finish = [0] * slots
    for cost in costs:
        heapq.heapreplace(finish, finish[0] + cost)
    return max(finish)


class HostSearch:
    """One engine's search state: executor, table, options and killers.

    ``stop`` is a threading.Event (or anything with ``is_set``); ``on_info(IterationInfo)`` is
    called after each iteration and after each aspiration failure.

    ``span_nodes`` counts the accelerator nodes on the search's critical path, taking the
    executor's slot count into account: a lone job adds its nodes, a batch adds the finish time
    of its used jobs spread in order over the slots. nodes / span is the speed-up the
    accelerators give when they, not the host, set the pace.
    """

    def __init__(self, executor, tt=None, options=None, stop=None, on_info=None):
        self.executor = executor
        self.tt = tt
        self.options = options or SearchOptions()
        self.options.check()
        self.stop = stop
        self.on_info = on_info
        self.killers = [[] for _ in range(HOST_MAX_PLY)]
        self.history = [0] * (2 * 64 * 64)     # quiet cutoffs by side, from, to: depth squared
        # counter moves: by side to move and the from and to of the opponent's move before it
        self.counters = [None] * (2 * 64 * 64)
        self.moved = [None] * (HOST_MAX_PLY + 1)   # the move that made each ply's position
        # an executor whose batches run in this thread answers a lone job without a batch
        self._run_inline = executor.run_inline if executor.inline else None
        self._helper_index = 0      # Lazy SMP: 0 for the main search, i > 0 for helper i
        self._helpers = []
        self.helper_error = None

    # --- Lazy SMP -----------------------------------------------------------------------------

    def _start_helpers(self, cb, limits):
        """Threads - 1 helper searches of the same root sharing the table (and the executor,
        whose batches they fill): they stop when this search ends."""
        self._group_stop = threading.Event()
        self._helpers, threads = [], []
        for index in range(1, self.options.threads):
            helper = HostSearch(self.executor, self.tt, replace(self.options, threads=1),
                                stop=_EitherSet(self.stop, self._group_stop))
            helper._helper_index = index
            helper_limits = Limits(deadline=limits.deadline, root_moves=limits.root_moves)
            thread = threading.Thread(target=helper._run_helper, args=(cb, helper_limits),
                                      name=f"search-helper-{index}", daemon=True)
            self._helpers.append(helper)
            threads.append(thread)
        for thread in threads:
            thread.start()
        return threads

    def _run_helper(self, cb, limits):
        try:
            self.search(cb, limits)
        except Exception as error:  # reported by the main search, which goes on alone
            self.helper_error = f"{type(error).__name__}: {error}"

    def _stop_helpers(self, threads):
        self._group_stop.set()
        for thread in threads:
            thread.join(5.0)

    def _skips(self, depth):
        """A helper leaves out some iterations so that the threads search different depths."""
        if not self._helper_index:
            return False
        j = (self._helper_index - 1) % len(SKIP_SIZE)
        return (depth + SKIP_PHASE[j]) // SKIP_SIZE[j] % 2 == 1

    def _group_counts(self):
        """(host nodes, accelerator nodes, jobs) of this search and its helpers."""
        host, accel, jobs = self.host_nodes, self.accel_nodes, self.jobs
        for helper in self._helpers:
            host += helper.host_nodes
            accel += helper.accel_nodes
            jobs += helper.jobs
        return host, accel, jobs

    # --- the driver: iterative deepening ------------------------------------------------------

    def search(self, cb, limits=None):
        """Search the python-chess board ``cb`` (its move stack is the game's history)."""
        limits = limits or Limits()
        self._limits = limits
        self._start = time.monotonic()
        self._setup(cb)
        opts = self.options
        if self.tt is not None and opts.tt and not self._helper_index:
            self.tt.new_search()
        root_moves = self._root_filter(ordered_moves(self.cb))
        result = SearchResult(None, None, 0, 0, [], 0, 0, 0, 0, 0.0, 0, 0)
        if not root_moves:
            result.score = -MATE if self.cb.is_check() else 0
            result.host_nodes = 1
            return result
        result.best_move = root_moves[0]    # something legal to play, whatever happens
        helpers = self._start_helpers(cb, limits) if opts.threads > 1 else []
        try:
            self._deepen(result, limits, root_moves)
        finally:
            if helpers:
                self._stop_helpers(helpers)
        self._finish(result)
        return result

    def _deepen(self, result, limits, root_moves):
        """Iterative deepening into ``result``."""
        previous = None
        last_depth = min(limits.depth or MAX_ITERATION, MAX_ITERATION)
        soft, started = limits.soft_deadline, time.monotonic()
        best, settled = None, 0
        for depth in range(1, last_depth + 1):
            if depth > 1 and soft is not None and time.monotonic() >= soft:
                break
            if depth > 1 and self._skips(depth):
                continue
            try:
                score, pv, bound = self._iteration(depth, previous)
            except SearchAborted:
                result.aborted = True
                if self._root_best is not None:     # a move this iteration proved better
                    result.best_move = self._root_best[1]
                    result.score = self._root_best[0]
                    result.pv = self._root_best[2]
                break
            except Exception as error:      # BackendError and friends: keep what we have
                from chessaccel.host.backends import BackendError
                if not isinstance(error, BackendError):
                    raise
                result.error = str(error)
                break
            if self.options.time_stability and soft is not None and pv:
                changed = best is not None and pv[0] != best
                settled = 0 if changed else settled + 1
                best = pv[0]
                fall = previous - score if previous is not None else 0
                soft = started + (limits.soft_deadline - started) \
                    * soft_percent(changed, settled, fall) / 100
            previous = score
            result.score, result.pv, result.depth = score, pv, depth
            result.best_move = pv[0] if pv else root_moves[0]
            info = self._info(depth, score, bound, pv)
            result.iterations.append(info)
            if self.on_info:
                self.on_info(info)
            if len(root_moves) == 1 and limits.deadline is not None:
                break       # one legal move under a clock: no need to think
            if limits.mate is not None and 0 < (mate_moves(score) or 0) <= limits.mate:
                break
            if limits.depth is None and score >= MATE_BOUND and 2 * mate_moves(score) + 1 <= depth:
                break       # a mate two plies inside the horizon: deeper only repeats it

    def search_depth(self, cb, depth, alpha=-INF, beta=INF):
        """One fail-soft search of ``cb`` to ``depth`` plies with the window (alpha, beta): no
        iterative deepening, no aspiration (what one accelerator job of that depth computes, when
        the options are ``SearchOptions.exact``). Returns a SearchResult."""
        if not 1 <= depth <= MAX_ITERATION:
            raise ValueError(f"depth {depth} out of range 1..{MAX_ITERATION}")
        self._limits = Limits()
        self._start = time.monotonic()
        self._setup(cb)
        if self.tt is not None and self.options.tt:
            self.tt.new_search()
        self._spec_start = self.executor.stats["nodes"]
        self._iteration_depth = depth
        result = SearchResult(None, None, 0, 0, [], 0, 0, 0, 0, 0.0, 0, 0)
        score, pv = self._node(0, depth, alpha, beta)
        result.score, result.pv, result.depth = score, pv, depth
        result.best_move = pv[0] if pv else None
        self._finish(result)
        return result

    def _root_filter(self, moves):
        allowed = self._limits.root_moves
        if allowed:
            kept = [m for m in moves if m in allowed]
            return kept or moves
        return moves

    def _setup(self, cb):
        self.cb = cb.copy()         # the root, for what is done once a search
        self.board = board_from_chess(self.cb)
        self.hb = HostBoard(self.cb)    # the host's plies (push/pop, moves, keys, draws)
        self.keys = game_keys(self.cb, self.hb)
        self._root_index = len(self.keys) - 1   # the root's key in keys (_repeats)
        opts = self.options
        near = opts.hardware_plies + FUTILITY_HOST_PLIES
        self._futility_depth = max(near, FUTILITY_DEEP_DEPTH) if opts.deep_futility else near
        self.host_nodes = 0
        self.accel_nodes = 0
        self.jobs = 0
        self.span = 0
        self.seldepth = 0
        self._root_best = None
        self._root_alpha = -INF
        self._iteration_depth = 0
        self._helpers = []
        self._spec_start = self.executor.stats["nodes"]

    def _iteration(self, depth, previous):
        opts = self.options
        self._iteration_depth = depth
        if opts.aspiration and depth >= 3 and previous is not None and not is_mate(previous):
            delta = opts.aspiration_delta
            alpha, beta = max(previous - delta, -INF), min(previous + delta, INF)
        else:
            delta = None
            alpha, beta = -INF, INF
        self._root_best = None
        whole = self._root_as_one_job(depth)
        while True:
            self._root_alpha = alpha
            if whole:
                score, pv = self._root_job(depth, alpha, beta)
            else:
                score, pv = self._node(0, depth, alpha, beta)
            if delta is not None and score <= alpha and alpha > -INF:
                bound = "upper"
            elif delta is not None and score >= beta and beta < INF:
                bound = "lower"
            else:
                return score, pv, "exact"
            if self.on_info:
                self.on_info(self._info(depth, score, bound, pv))
            delta *= 2
            if delta > 8 * opts.aspiration_delta:
                alpha, beta = -INF, INF
            elif bound == "upper":
                alpha = max(score - delta, -INF)
            else:
                beta = min(score + delta, INF)

    def _root_as_one_job(self, depth):
        """Whether this iteration is one job for the whole tree: when it is no deeper than
        HardwarePlies, there is one accelerator (splitting the root would only add jobs; a
        device whose launch holds many jobs side by side is not one: one job would run on one
        of its lanes), and no root move needs the host (a draw by repetition or the fifty-move
        rule, which the accelerator cannot see; a searchmoves restriction)."""
        if depth > self.options.hardware_plies or self.executor.parallel \
                or getattr(self.executor, "launch_jobs", 0) > 1:
            return False
        if self._limits.root_moves or self.options.fifty_move_scaling:
            return False    # (a whole-tree job cannot scale its scores by the fifty-move counter)
        return not any(self._child_is_draw(m) for m in ordered_moves(self.cb))

    def _root_job(self, depth, alpha, beta):
        """The iteration as one job rooted at the root (ply 0: scores need no shift)."""
        a, b = job_window(alpha, beta, 0)
        batch = self.executor.submit([Job(self.board.copy(), depth, a, b)])
        try:
            result = self._await(batch, 0)
        finally:
            if batch.results[0] is None:
                batch.cancel()
        self.span += result.nodes
        self.accel_nodes += result.nodes
        self.jobs += 1
        pv = [from_model(m) for m in result.pv]
        self.seldepth = max(self.seldepth, depth, len(pv))
        score = result.score
        if pv and score > alpha:
            self._root_best = (score, pv[0], pv)
        if self.tt is not None and self.options.tt:
            bound = Bound.LOWER if score >= beta else Bound.UPPER if score <= alpha else Bound.EXACT
            self.tt.store(self.keys[-1], depth, bound, score,
                          pv[0] if pv and bound != Bound.UPPER else None)
        return score, pv

    def _info(self, depth, score, bound, pv):
        host, accel, jobs = self._group_counts()
        return IterationInfo(
            depth=depth, seldepth=max(self.seldepth, depth), score=score, bound=bound,
            pv=list(pv), host_nodes=host, accelerator_nodes=accel,
            speculative_nodes=self._speculative(), jobs=jobs,
            seconds=time.monotonic() - self._start,
            hashfull=self.tt.hashfull() if self.tt is not None and self.options.tt else 0,
            span_nodes=self.span)

    def _speculative(self):
        done = self.executor.stats["nodes"] - self._spec_start
        return max(0, done - self._group_counts()[1])

    def _finish(self, result):
        result.host_nodes, result.accelerator_nodes, result.jobs = self._group_counts()
        result.speculative_nodes = self._speculative()
        if result.error is None and self._helpers:
            result.error = next((h.helper_error for h in self._helpers if h.helper_error), None)
        result.span_nodes = self.span
        result.seldepth = max(self.seldepth, result.depth)
        result.seconds = time.monotonic() - self._start
        if not result.pv or result.pv[0] != result.best_move:
            result.pv = [result.best_move] if result.best_move else []
        result.pv = self._legal_prefix(result.pv)
        result.ponder_move = result.pv[1] if len(result.pv) > 1 else None

    def _legal_prefix(self, pv):
        return legal_prefix(self.cb, pv)

    # --- limits -------------------------------------------------------------------------------

    def _check(self):
        if self.stop is not None and self.stop.is_set():
            raise SearchAborted()
        limits = self._limits
        if limits.deadline is not None and time.monotonic() >= limits.deadline:
            raise SearchAborted()
        if limits.nodes is not None and sum(self._group_counts()[:2]) >= limits.nodes:
            raise SearchAborted()

    def _await(self, batch, index):
        """The result of job ``index`` of ``batch``, watching stop, clock and node limit."""
        results = batch.results
        while results[index] is None:
            self._check()
            timeout = _POLL_SECONDS
            if self._limits.deadline is not None:
                timeout = max(0.0, min(timeout, self._limits.deadline - time.monotonic()))
            batch.wait(timeout)
            results = batch.results
        return results[index]

    # --- moving at the top --------------------------------------------------------------------

    def _push(self, move):
        self.keys.append(self.hb.push(move))

    def _pop(self):
        self.hb.pop()
        self.keys.pop()

    def _repeats(self, key, halfmoves, keys, root, at=None):
        """True when the position ``key``, standing at index ``at`` of ``keys`` (by default
        just after them; the search's root at index ``root``), repeats one of the positions
        before it an even number of plies back, within the last ``halfmoves`` reversible
        plies, as a draw: one after the root (the search's own cycle), or one seen twice (a
        threefold repetition). A position seen once, before the root, is not a draw: the game
        goes on unless the opponent repeats it too, which the search sees a move later
        (``twofold_draws``: it is a draw too). hostsearch.cpp's repeats."""
        if at is None:
            at = len(keys)
        seen = self.options.twofold_draws       # an earlier sighting counts as a second one
        for back in range(4, min(halfmoves, at) + 1, 2):
            if keys[at - back] == key:
                if seen or at - back > root:
                    return True
                seen = True
        return False

    def _drawn_here(self):
        """The position just pushed is a draw (repetition, fifty moves, dead material)."""
        hb = self.hb
        halfmoves = hb.halfmove_clock
        keys = self.keys
        if halfmoves >= 4 and self._repeats(keys[-1], halfmoves, keys, self._root_index,
                                            len(keys) - 1):
            return True
        return hb.is_drawn()        # fifty moves (unless mate), dead material

    def _child_is_draw(self, move):
        """A frontier child that is a draw by repetition or the fifty-move rule (a capture or a
        pawn move resets both; only those can leave dead material, which jobs score well
        enough). Pushes only when a draw is possible."""
        hb = self.hb
        halfmoves = hb.halfmove_clock + 1
        if halfmoves < 4 or not self.options.draws or hb.is_zeroing(move):
            return False
        key = hb.push(move)
        try:
            if self._repeats(key, halfmoves, self.keys, self._root_index):
                return True
            return hb.is_fifty_moves()
        finally:
            hb.pop()

    def _ordered(self, ply, tt_move):
        """The node's legal moves: the hash move, captures in the accelerator's order, the
        killers (legal here, not the hash move), quiet moves in the accelerator's order."""
        opts = self.options
        killers = self.killers[ply] if opts.killers and ply < HOST_MAX_PLY else ()
        return self.hb.ordered(tt_move, opts.tt, killers, opts.bad_captures_last)

    def _history_index(self, ply, move):
        white = self.cb.turn != bool(ply & 1)
        return (0 if white else 4096) + move.from_square * 64 + move.to_square

    def _counter_index(self, ply):
        """Where the counter move of ply's position is kept, None where it has none (the root,
        after a null move)."""
        previous = self.moved[ply] if ply else None
        if previous is None:
            return None
        return self._history_index(ply, previous)

    def _by_history(self, ply, moves):
        """``moves`` (the host's order) with its quiet moves after the killers reordered: the
        counter move first (``counter_moves``), the others by their history, the most cutoffs
        first (``history``; ties keep the accelerator's order). The first move (the hash move,
        or the eldest a frontier parent has searched already) stays first."""
        opts = self.options
        if not (opts.history or opts.counter_moves) or ply >= HOST_MAX_PLY:
            return moves
        killers = self.killers[ply]
        hb = self.hb
        for start in range(1, len(moves)):
            move = moves[start]
            if move not in killers and not move.promotion and not hb.is_capture(move):
                break
        else:
            return moves
        end = len(moves)        # the quiet moves end where the losing captures begin
        if opts.bad_captures_last:
            while hb.is_capture(moves[end - 1]):
                end -= 1
        if opts.counter_moves:
            at = self._counter_index(ply)
            counter = self.counters[at] if at is not None else None
            if counter is not None and counter in moves[start:end]:
                moves.remove(counter)
                moves.insert(start, counter)
                start += 1
        if opts.history:
            history, index = self.history, self._history_index
            moves[start:end] = sorted(moves[start:end], key=lambda m: -history[index(ply, m)])
        return moves

    def _remember_killer(self, ply, move, depth=1):
        if ply >= HOST_MAX_PLY or move.promotion or self.hb.is_capture(move):
            return
        if self.options.counter_moves:
            at = self._counter_index(ply)
            if at is not None:
                self.counters[at] = move
        if self.options.history:
            at = self._history_index(ply, move)
            self.history[at] += depth * depth
            if self.history[at] > 1 << 24:
                self.history = [value // 2 for value in self.history]
        if not self.options.killers:
            return
        killers = self.killers[ply]
        if move in killers:
            killers.remove(move)
        killers.insert(0, move)
        del killers[_KILLERS:]

    # --- the tree -----------------------------------------------------------------------------

    def _node(self, ply, depth, alpha, beta, null_ok=True):
        """A host node (the root, or one with more than HardwarePlies plies left): fail-soft
        negamax. Returns (score, pv). ``null_ok``: a null move may be tried (not right after
        one)."""
        self.host_nodes += 1
        self._check()
        if ply > self.seldepth:
            self.seldepth = ply
        opts = self.options
        if ply and opts.mate_distance:
            # no line from here can mate sooner than a mate already found nearer the root
            alpha = max(alpha, -(MATE - ply))
            beta = min(beta, MATE - ply - 1)
            if alpha >= beta:
                return alpha, []
        tt = self.tt if opts.tt else None
        key = self.keys[-1]
        tt_move = None
        entry = None
        if tt is not None:
            entry = tt.probe(key)
            if entry is not None:
                tt_move = entry.move
                if ply > 0 and entry.depth >= depth:
                    score = from_tt(entry.score, ply)
                    if (entry.bound == Bound.EXACT
                            or (entry.bound == Bound.LOWER and score >= beta)
                            or (entry.bound == Bound.UPPER and score <= alpha)):
                        return score, ([tt_move] if tt_move else [])
        alpha0 = alpha
        reducible = False
        prune = None
        if ply and opts.selective:
            depth, cut, reducible, prune = self._selective(ply, depth, alpha, beta, tt_move,
                                                           null_ok)
            if cut is not None:
                return cut, []
        if ply and depth - 1 <= opts.hardware_plies:
            # a frontier parent: its moves stay in the host board's buffer, made into a list
            # only when the eldest's job does not cut off (most do)
            killers = self.killers[ply] if opts.killers and ply < HOST_MAX_PLY else ()
            count = self.hb.order(tt_move, opts.tt, killers, opts.bad_captures_last)
            if not count:
                return (-(MATE - ply) if self.hb.is_check() else 0), []
            best, best_move, pv = self._frontier(ply, depth, alpha, beta, None, count,
                                                 reducible, prune)
        else:
            moves = self._by_history(ply, self._ordered(ply, tt_move))
            if ply == 0:
                moves = self._root_filter(moves)
            if not moves:
                return (-(MATE - ply) if self.hb.is_check() else 0), []
            if prune is not None:
                self._prune(ply, moves, prune)
            if depth - 1 <= opts.hardware_plies:
                best, best_move, pv = self._frontier(ply, depth, alpha, beta, moves, len(moves),
                                                     reducible)
            else:
                extension = 0
                if ply and opts.singular_extension and entry is not None \
                        and moves[0] == tt_move and depth // 2 - 1 > opts.hardware_plies:
                    extension = self._singular(ply, depth, beta, moves, reducible, entry)
                    if extension is None:
                        return beta, []     # multi-cut (no table entry, as a pruning cut)
                best, best_move, pv = self._expand(ply, depth, alpha, beta, moves, reducible,
                                                   extension)
        if prune is not None and prune[2] and best < prune[1]:
            # fail-soft past futility-pruned moves: each is taken to score at most the static
            # score plus the margin (at most alpha: the node still fails low), as Stockfish does
            best = prune[1]
        if best >= beta:
            self._remember_killer(ply, best_move, depth)
        if tt is not None:
            bound = Bound.LOWER if best >= beta else Bound.UPPER if best <= alpha0 else Bound.EXACT
            tt.store(key, depth, bound, to_tt(best, ply),
                     best_move if bound != Bound.UPPER else None)
        return best, pv

    def _selective(self, ply, depth, alpha, beta, tt_move, null_ok):
        """The selective steps at a host node below the root, before its moves: the check
        extension, reverse futility, null move, the internal iterative reduction and what
        forward pruning may do here. Returns (depth, cutoff score or None, whether late moves
        may be reduced here, forward pruning: None or [quiet moves searched before late-move
        pruning (None: none), futility value (None: not futile), whether futility pruned])."""
        opts = self.options
        hb = self.hb
        if hb.is_check():
            if opts.check_extension and ply < 2 * self._iteration_depth:
                depth += 1
            return depth, None, False, None
        null_window = alpha + 1 == beta and -MATE_BOUND < beta < MATE_BOUND
        static = None
        if null_window:
            futile_depth = opts.futility and depth <= self._futility_depth
            null_depth = opts.null_move and null_ok and depth >= opts.null_move_depth
            if futile_depth or null_depth:
                static = self._static(hb)
                if futile_depth and static - FUTILITY_MARGIN * depth >= beta:
                    return depth, static, False, None
                if null_depth and static >= beta and hb.has_pieces():
                    score = self._null(ply, depth, beta, static)
                    if score >= beta:
                        return depth, (beta if score >= MATE_BOUND else score), False, None
        if opts.iir and tt_move is None and depth >= opts.hardware_plies + 4:
            depth -= 1
        prune = None
        if null_window and (opts.futility_pruning or opts.late_move_pruning):
            above = depth - opts.hardware_plies     # plies above the frontier, 1 at its parents
            late = futile = None
            if opts.late_move_pruning and above <= LATE_MOVE_PLIES:
                late = LATE_MOVE_BASE + LATE_MOVE_FACTOR * above * above
            if opts.futility_pruning and above <= FUTILITY_PRUNING_PLIES:
                if static is None:
                    static = self._static(hb)
                value = static + FUTILITY_PRUNING_BASE + FUTILITY_PRUNING_STEP * above
                if value <= alpha:
                    futile = value
            if late is not None or futile is not None:
                prune = [late, futile, False]
        return depth, None, True, prune

    def _singular(self, ply, depth, beta, moves, reducible, entry):
        """The singular extension's test at a node whose first move is its table entry's move:
        1 when no other move, searched depth // 2 plies deep, reaches the entry's score less
        SINGULAR_MARGIN a ply of depth (the first move is then searched a ply deeper), None
        when that bound is at or above beta and another move reaches it (the node fails high),
        else 0."""
        if entry.bound == Bound.UPPER or entry.depth < depth - SINGULAR_TABLE_PLIES \
                or ply >= 2 * self._iteration_depth:
            return 0
        score = from_tt(entry.score, ply)
        if not -MATE_BOUND < score < MATE_BOUND:
            return 0
        bound = score - SINGULAR_MARGIN * depth
        value, _, _ = self._expand(ply, depth // 2, bound - 1, bound, moves[1:], reducible)
        if value < bound:
            return 1
        return None if bound >= beta else 0

    def _static(self, hb):
        """The static score the selective steps read: the search's evaluation of the host
        board's position, scaled by its fifty-move counter as the jobs' scores are."""
        static = evaluator(self.options.evaluation)(hb.board())
        if self.options.fifty_move_scaling:
            static = fifty_scaled(static, hb.halfmove_clock)
        return static

    def _prune(self, ply, moves, prune):
        """Forward pruning (futility, late moves) of a node's ``moves`` in order, before any is
        searched or handed out as a job: a pruned move is replaced by None. Only a quiet move
        after the first (not the hash move), not a killer and giving no check is pruned: every
        one at a futile node, every one after the first ``late`` quiet moves at a node that
        allows late-move pruning. Sets ``prune[2]`` when futility pruned a move."""
        late, futile = prune[0], prune[1]
        killers = self.killers[ply] if ply < HOST_MAX_PLY else ()
        hb = self.hb
        quiets = 0
        for index, move in enumerate(moves):
            if move.promotion or hb.is_capture(move):
                continue
            if index and (futile is not None or (late is not None and quiets >= late)) \
                    and move not in killers and not hb.gives_check(move):
                moves[index] = None
                if futile is not None:
                    prune[2] = True
            quiets += 1

    def _null(self, ply, depth, beta, static):
        """The side to move passes: the opponent's best reply searched R + 1 plies shallower
        with the null window at beta, from the node's view."""
        reduced = depth - 4 - depth // 6        # R = 3 + depth / 6
        if self.options.null_move_eval:         # ... + 1 per NULL_EVAL_STEP above beta
            reduced -= min((static - beta) // NULL_EVAL_STEP, NULL_EVAL_MOST)
        reduced = max(reduced, 0)
        child_ply = ply + 1
        self.keys.append(self.hb.push_null())
        if child_ply <= HOST_MAX_PLY:
            self.moved[child_ply] = None
        try:
            if reduced > self.options.hardware_plies:
                score, _ = self._node(child_ply, reduced, -beta, -beta + 1, null_ok=False)
                return -score
            halfmoves = self.hb.halfmove_clock
            a, b = self._window(-beta, -beta + 1, child_ply, halfmoves)
            score, _ = self._job(child_ply, reduced, self.hb.board(), a, b, halfmoves)
            return score
        finally:
            self.hb.pop()
            self.keys.pop()

    def _reduction(self, depth, index, move, killers):
        """Plies by which the ``index``-th move of a node of ``depth`` is searched shallower:
        0 for the first moves, captures, promotions, killers and checks."""
        if index < LMR_FIRST or move.promotion or move in killers:
            return 0
        hb = self.hb
        if hb.is_capture(move) or hb.gives_check(move):
            return 0
        return max(1, int(0.75 + math.log(depth) * math.log(index) / 2.25))

    def _note_root(self, ply, score, move, pv):
        if ply == 0 and score > self._root_alpha:
            self._root_best = (score, move, pv)

    def _expand(self, ply, depth, alpha, beta, moves, reducible=False, extension=0):
        """Children searched by the host, one after another (PVS); late quiet moves of a node
        that allows it first searched shallower (late-move reductions), again at full depth
        when they beat alpha. A move pruned (None in ``moves``, _prune) is left out; it keeps
        its place in the count of the reductions. The first move is searched ``extension``
        plies deeper (_singular)."""
        best, best_move, best_pv = -INF, None, []
        pvs = self.options.pvs
        draws = self.options.draws
        hb, keys = self.hb, self.keys
        killers = self.killers[ply] if ply < HOST_MAX_PLY else ()
        least = max(1, self.options.hardware_plies)
        non_pv = self.options.non_pv_reductions and alpha + 1 == beta
        for index, move in enumerate(moves):
            if move is None:
                continue
            reduction = 0
            if reducible and self.options.reductions and index >= LMR_FIRST \
                    and depth - 1 > least:
                reduction = self._reduction(depth, index, move, killers)
                if reduction and non_pv:
                    reduction += 1
                reduction = min(reduction, depth - 1 - least)
            keys.append(hb.push(move))      # _push
            if ply < HOST_MAX_PLY:
                self.moved[ply + 1] = move
            try:
                if draws and self._drawn_here():
                    self.host_nodes += 1
                    score, tail = 0, []
                elif reduction:
                    score, tail = self._node(ply + 1, depth - 1 - reduction, -alpha - 1, -alpha)
                    score = -score
                    if score > alpha:
                        score, tail = self._node(ply + 1, depth - 1, -alpha - 1, -alpha)
                        score = -score
                        if alpha < score < beta:
                            score, tail = self._node(ply + 1, depth - 1, -beta, -alpha)
                            score = -score
                elif index == 0 or not pvs:
                    score, tail = self._node(ply + 1, depth - 1 + (extension if index == 0 else 0),
                                             -beta, -alpha)
                    score = -score
                else:
                    score, tail = self._node(ply + 1, depth - 1, -alpha - 1, -alpha)
                    score = -score
                    if alpha < score < beta:
                        score, tail = self._node(ply + 1, depth - 1, -beta, -alpha)
                        score = -score
            finally:
                hb.pop()                    # _pop
                keys.pop()
            if score > best:
                best, best_move, best_pv = score, move, [move] + tail
                self._note_root(ply, score, move, best_pv)
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best, best_move, best_pv

    def _child_board(self, move):
        return self.hb.child_board(move)

    def _child_halfmoves(self, move):
        """The fifty-move counter after ``move`` (0 when fifty-move scaling is off: unused)."""
        if not self.options.fifty_move_scaling or self.hb.is_zeroing(move):
            return 0
        return self.hb.halfmove_clock + 1

    def _window(self, alpha, beta, child_ply, halfmoves):
        """The job-frame window of the child-frame window (alpha, beta) of a job rooted at
        ``child_ply`` whose position's fifty-move counter is ``halfmoves``."""
        if self.options.fifty_move_scaling:
            alpha, beta = fifty_window(alpha, beta, halfmoves)
        return job_window(alpha, beta, child_ply)

    def _score(self, score, child_ply, halfmoves):
        """The parent-frame score of a job's ``score`` (_window's inverse)."""
        score = from_job(score, child_ply)
        if self.options.fifty_move_scaling:
            score = fifty_scaled(score, halfmoves)
        return -score

    def _take(self, result, child_ply, job_depth, count=True, halfmoves=0):
        """Account for a used job result (unless counted already); its host-frame score from
        the parent's view and the PV tail it gives."""
        if count:
            self.accel_nodes += result.nodes
            self.jobs += 1
        pv = result.pv
        if pv:
            pv = list(map(from_model, pv))
            reach = child_ply + max(job_depth, len(pv))
        else:
            pv = []
            reach = child_ply + job_depth
        if reach > self.seldepth:
            self.seldepth = reach
        return self._score(result.score, child_ply, halfmoves), pv

    def _single(self, child_ply, job_depth, move, alpha, beta):
        """One child as a lone job with the parent-frame window (alpha, beta)."""
        halfmoves = self._child_halfmoves(move)
        a, b = self._window(-beta, -alpha, child_ply, halfmoves)
        return self._job(child_ply, job_depth, self._child_board(move), a, b, halfmoves)

    def _job(self, child_ply, job_depth, board, a, b, halfmoves=0):
        """One lone job (its window (a, b) in the job's frame): the parent-frame score and PV
        tail."""
        batch = self.executor.submit([Job(board, job_depth, a, b)])
        try:
            result = self._await(batch, 0)
        finally:
            if batch.results[0] is None:
                batch.cancel()
        self.span += result.nodes
        return self._take(result, child_ply, job_depth, halfmoves=halfmoves)

    def _frontier(self, ply, depth, alpha, beta, moves, count, reducible=False, prune=None):
        """A frontier parent: its children are jobs (young brothers wait, see the module).
        ``moves``: the ``count`` moves in order, or None when they wait in the host board's
        buffer (HostBoard.order). ``reducible``: late quiet moves' jobs may be a ply
        shallower (late-move reductions; searched again at full depth when they fail high).
        ``prune`` (_selective): forward pruning of the moves after the eldest, done before
        their batch is made (a pruned move is never a job)."""
        child_ply, job_depth = ply + 1, depth - 1
        opts = self.options
        nothing = (-INF, None, [])
        if opts.parallel and alpha + 1 >= beta and self.executor.speculate:
            # a null-window node: the eldest's result cannot narrow the window (it fails low,
            # or cuts off), so its brothers need not wait for it; if it cuts off, their jobs
            # were speculation, cancelled
            if moves is None:
                moves = self._by_history(ply, self.hb.listed())
            if prune is not None:
                self._prune(ply, moves, prune)
            return self._brothers(ply, child_ply, job_depth, alpha, beta, moves, nothing,
                                  0 if reducible and opts.job_reductions else None,
                                  prune is not None)
        # the eldest brother alone (_single, written out: this is the host's busiest path)
        hb = self.hb
        first = moves[0] if moves is not None else hb.first()
        if hb.halfmove_clock >= 3 and self._child_is_draw(first):
            self.host_nodes += 1
            score, tail = 0, []
        else:
            halfmoves = self._child_halfmoves(first)
            a, b = self._window(-beta, -alpha, child_ply, halfmoves)
            job = Job(hb.child_board(first), job_depth, a, b)
            if self._run_inline is not None:
                result = self._run_inline(job)
            else:
                batch = self.executor.submit([job])
                result = batch.results[0]
                if result is None:
                    try:
                        result = self._await(batch, 0)
                    finally:
                        if batch.results[0] is None:
                            batch.cancel()
            self.span += result.nodes
            score, tail = self._take(result, child_ply, job_depth, halfmoves=halfmoves)
        eldest = (score, first, [first] + tail)
        if not ply:
            self._note_root(ply, score, first, eldest[2])
        if score > alpha:
            alpha = score
        if alpha >= beta or count == 1:
            return eldest
        if moves is None:
            moves = self._by_history(ply, self.hb.listed())
        if prune is not None:
            self._prune(ply, moves, prune)
        if not opts.parallel:
            return self._frontier_in_turn(ply, child_ply, job_depth, alpha, beta, moves, eldest)
        return self._brothers(ply, child_ply, job_depth, alpha, beta, moves[1:], eldest,
                              1 if reducible and opts.job_reductions else None,
                              prune is not None)

    def _brothers(self, ply, child_ply, job_depth, alpha, beta, moves, best_so_far,
                  first_index=None, pruned=False):
        """``moves``' jobs in one batch with the window (alpha, beta) as it stands (a null
        window at alpha under PVS), taken in move order as they finish.

        Under PVS a null-window result between alpha and beta is only a lower bound. With one
        accelerator such a move is searched again at once with alpha as it stands (PVS as
        usual). With several, at the first such result the host waits for the whole batch and
        searches every such move again in a second batch, with the window (alpha, beta) the
        first batch had: nothing before them raised alpha (a null-window result either fails
        low or cuts off), so these re-searches are exact, whatever an earlier one then does to
        alpha. Either way the values, best move and PV are those of sequential PVS.

        ``first_index`` (not None at a null-window node that allows reductions): the index of
        ``moves[0]`` among the node's moves; late quiet moves then go out a ply shallower, and
        one that fails high is searched again alone at full depth.

        ``pruned``: some of ``moves`` may be None (forward pruning, _prune): no job, no score;
        their slot is _PRUNED."""
        best, best_move, best_pv = best_so_far
        null = self.options.pvs and alpha + 1 < beta
        win_alpha, win_beta = alpha, (alpha + 1 if null else beta)
        may_draw = self.hb.halfmove_clock + 1 >= 4 and self.options.draws
        if not may_draw and not pruned:
            live = moves            # no child can be a draw (_child_is_draw)
            slots = list(range(len(moves)))
        else:
            slots, live = [], []
            for move in moves:
                if move is None:
                    slots.append(_PRUNED)
                elif may_draw and self._child_is_draw(move):
                    slots.append(None)
                else:
                    slots.append(len(live))
                    live.append(move)
        depths = [job_depth] * len(live)
        if first_index is not None and job_depth > 0 and not null and alpha + 1 == beta:
            killers = self.killers[ply] if ply < HOST_MAX_PLY else ()
            most = min(self.options.job_reduction_plies, job_depth)
            for index, (move, slot) in enumerate(zip(moves, slots), first_index):
                if slot is not None and slot >= 0:
                    red = self._reduction(job_depth + 1, index, move, killers)
                    if red:
                        depths[slot] = job_depth - min(red, most)
        halfmoves = [self._child_halfmoves(move) for move in live]   # by slot
        jobs = [Job(board, depth, *self._window(-win_beta, -win_alpha, child_ply, h))
                for board, depth, h in zip(self.hb.child_boards(live), depths, halfmoves)]
        batch = self.executor.submit(jobs) if jobs else None
        again = None        # the re-search batch: slot -> index in it
        used, used_again = [], []
        try:
            for position, (move, slot) in enumerate(zip(moves, slots)):
                if slot == _PRUNED:
                    continue
                if slot is None:
                    self.host_nodes += 1
                    score, tail = 0, []
                else:
                    result = batch.results[slot]
                    if result is None:
                        result = self._await(batch, slot)
                    score = self._score(result.score, child_ply, halfmoves[slot])
                    counted = again is not None     # _research counted the whole first batch
                    if depths[slot] != job_depth and score > win_alpha:
                        # a reduced job failed high: search it again at full depth
                        used.append(result.nodes)
                        self._take(result, child_ply, depths[slot])
                        result = None
                        score, tail = self._single(child_ply, job_depth, move, alpha, beta)
                    elif null and win_alpha < score < beta and not self.executor.parallel:
                        # one accelerator: the usual PVS re-search, with alpha as it is now
                        used.append(result.nodes)
                        self._take(result, child_ply, job_depth)
                        result = None
                        score, tail = self._single(child_ply, job_depth, move, alpha, beta)
                    elif null and win_alpha < score < beta:
                        if again is None:
                            again = self._research(batch, slots[position:], child_ply,
                                                   job_depth, win_alpha, beta, used, halfmoves)
                        result = self._await(again[0], again[1][slot])
                        used_again.append(result.nodes)
                        counted = False
                    elif again is None:
                        used.append(result.nodes)
                    if result is not None:
                        score, tail = self._take(result, child_ply, job_depth,
                                                 count=not counted, halfmoves=halfmoves[slot])
                if score > best:
                    best, best_move, best_pv = score, move, [move] + tail
                    self._note_root(ply, score, move, best_pv)
                    if score > alpha:
                        alpha = score
                        if score >= beta:
                            break
        finally:
            slots = self.executor.slots if self.executor.parallel else 1
            self.span += makespan(used, slots)
            self.span += makespan(used_again, slots)
            for pending in (batch, again[0] if again else None):
                if pending is not None and not pending.done():
                    pending.cancel()
        return best, best_move, best_pv

    def _research(self, batch, slots, child_ply, job_depth, alpha, beta, used, halfmoves):
        """Wait for the rest of ``batch``; search again, in one batch with the window
        (alpha, beta), every move of ``slots`` whose null-window result was only a lower
        bound. Returns (batch, {slot: index in it}). The first batch's results from here on
        are all looked at: they are counted here, once."""
        wanted = [slot for slot in slots if slot is not None and slot >= 0]
        for slot in wanted:
            self._await(batch, slot)
        jobs, index = [], {}
        for slot in wanted:
            result = batch.results[slot]
            score = self._score(result.score, child_ply, halfmoves[slot])
            if alpha < score < beta:
                index[slot] = len(jobs)
                job = batch.jobs[slot]
                jobs.append(Job(job.board, job_depth,
                                *self._window(-beta, -alpha, child_ply, halfmoves[slot])))
            self.accel_nodes += result.nodes
            self.jobs += 1
            used.append(result.nodes)
        return self.executor.submit(jobs), index

    def _frontier_in_turn(self, ply, child_ply, job_depth, alpha, beta, moves, eldest):
        """The siblings one job at a time, each with the window the ones before it left: the
        accelerator's own order of work (node for node)."""
        best, best_move, best_pv = eldest
        for move in moves[1:]:
            if move is None:        # pruned (_prune)
                continue
            if self._child_is_draw(move):
                self.host_nodes += 1
                score, tail = 0, []
            else:
                score, tail = self._single(child_ply, job_depth, move, alpha, beta)
            if score > best:
                best, best_move, best_pv = score, move, [move] + tail
                self._note_root(ply, score, move, best_pv)
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best, best_move, best_pv

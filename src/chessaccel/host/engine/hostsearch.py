"""The host's search in compiled code: ``CompiledSearch``, HostSearch's algorithm on native threads.

Why: HostSearch (search.py) runs in Python, whose threads take turns under the GIL. At
HardwarePlies 3 one search thread hands out tens of jobs a launch and waits; Lazy SMP helpers
could fill a GPU's launch of 16,896 jobs, but each job costs the host ~24 us of Python (a
board made, packed, a result decoded), so on the H200 the engine used 1.5 M nodes/s of a kernel
that searches 1.8 G (docs/engine.md). hostsearch.cpp does the host's part natively: its threads
search the top of the tree (the same node, frontier, table and selective steps as HostSearch)
and put their jobs, already packed as the kernels read them, on one queue; a pump takes every
queued job into one launch, starts it, and hands the launch's result arrays back, without a
Python object per job.

The backend decides how a launch runs: one that offers ``native_launches`` (OpenCL; the
dispatch benchmark's instant backend) has them run by hostlaunch.cpp, pump included, with no
Python per launch, and Python only waits for the search and reports its iterations; one that
starts launches from packed arrays (``start_packed``) gets them from this module's pump, as
OpenCL does where its library cannot be opened natively; any other gets the jobs through its
executor, unpacked into model boards (the model, the RTL, boards, Ray: slower, but the same
search).

What stays in HostSearch: the deterministic single-thread search that tests/test_engine_frontier.py
holds node for node, and what this search leaves out (the young-brothers re-search batch of
several accelerators: here a null-window result that is only a bound is searched again alone,
as sequential PVS does). ``SearchOptions.exact`` runs the same tree in both, node for node
(tests/test_hostsearch.py).
"""

import ctypes
import operator
import time
from collections import deque

import numpy as np
from amaranth.lib import data

from chessaccel.contract.defs import EVAL_MAX, INF, MATE, MAX_PLY, Move
from chessaccel.contract.evaltables import (PHASE_INC, PHASE_MAX, PHASE_WEIGHT, SQUARE_EG,
                                            SQUARE_MG, TAPER_SHIFT)
from chessaccel.contract.evalweights import (EVALUATIONS, TERMS, THREAT_WEIGHTS, WEIGHTS,
                                             check_evaluation, square_tables)
from chessaccel.host.backends.base import BackendError, first_line
from . import hostboard
from .executors import Job
from .scores import FIFTY_LIMIT, FIFTY_SPAN, HOST_MAX_PLY
from .timeman import (STABLE_CHANGED_PERCENT, STABLE_FALL_CP, STABLE_FALL_PERCENT,
                      STABLE_ITERATIONS, STABLE_SETTLED_PERCENT)
from .search import (FUTILITY_DEEP_DEPTH, FUTILITY_HOST_PLIES, FUTILITY_MARGIN,
                     FUTILITY_PRUNING_BASE, FUTILITY_PRUNING_PLIES, FUTILITY_PRUNING_STEP,
                     LATE_MOVE_BASE, LATE_MOVE_FACTOR, LATE_MOVE_PLIES, LMR_FIRST,
                     NULL_EVAL_MOST, NULL_EVAL_STEP, SINGULAR_MARGIN, SINGULAR_TABLE_PLIES,
                     IterationInfo, Limits,
                     SearchOptions, SearchResult, game_keys, legal_prefix)

__all__ = ["CompiledSearch", "OPTION_FIELDS", "static_eval", "eval_terms"]

#: SearchOptions fields in the order hostsearch.cpp's Options struct holds them (each an int:
#: ``evaluation`` as its index in EVALUATIONS, hostsearch.cpp's EVAL_PST and EVAL_TERMS).
OPTION_FIELDS = ("hardware_plies", "tt", "pvs", "aspiration", "killers", "draws", "parallel",
                 "aspiration_delta", "null_move", "reductions", "job_reductions", "futility",
                 "check_extension", "mate_distance", "iir", "history", "futility_pruning",
                 "late_move_pruning", "threads", "counter_moves", "job_reduction_plies",
                 "null_move_eval", "fifty_move_scaling", "twofold_draws", "time_stability",
                 "deep_futility", "non_pv_reductions", "bad_captures_last", "singular_extension",
                 "null_move_depth", "evaluation")
#: The options' values in OPTION_FIELDS order, read in one call.
_option_values = operator.attrgetter(*OPTION_FIELDS)
#: Launches in flight at once, each on its own queue: a launch lasts as long as its longest
#: job, so the jobs of the next ones must not wait for it.
IN_FLIGHT = 16
#: Microseconds the pump waits for new jobs while launches run (then it looks at them again),
#: and while nothing runs.
_POLL_US = 100
_IDLE_US = 2000
#: Microseconds between the native pump's looks at the launches in flight, besides the device's
#: completion callbacks (which wake it at once where they come at once).
NATIVE_POLL_US = 500
#: Plies a node of a job has at least for the device to split it (SearchOptions.split_budget):
#: a frontier parent's jobs are a few plies deep, and a node of one ply left has children too
#: short to be worth a helper's start.
SPLIT_MIN_DEPTH = 1
#: The split a GPU's launches get by default (SplitBudget -1): a node is split once its subtree
#: has counted this many nodes, with this many lanes a launch. Measured on the H200 (docs/engine.md,
#: "Long jobs split on the device"): of budgets 50-50,000 and 256-16,896 lanes, the fastest to
#: depth 8; a CPU device's few lanes gain nothing.
GPU_SPLIT_BUDGET = 300
GPU_SPLIT_LANES = 2048
#: Microseconds between the reads of a GPU launch's finished jobs while it runs (hostlaunch.cpp,
#: finished_early: a CPU device's are read in place), so that a cutoff stops the jobs behind it
#: sooner; 0: results only at the launch's end.
GPU_EARLY_READ_US = 1000
#: Fewest jobs one launch takes (more where the backend's launch_jobs says so).
DEFAULT_LAUNCH_JOBS = 4096
_POSITION_WORDS = 5
_MAX_LINE = 128
_KILLERS = 2
_MOVES = hostboard._MOVES
_BOUNDS = {1: "lower", 2: "upper"}


class _Info(ctypes.Structure):
    _fields_ = [("depth", ctypes.c_int32), ("seldepth", ctypes.c_int32),
                ("score", ctypes.c_int32), ("bound", ctypes.c_int32),
                ("pv_length", ctypes.c_int32), ("hashfull", ctypes.c_int32),
                ("host_nodes", ctypes.c_uint64), ("accelerator_nodes", ctypes.c_uint64),
                ("speculative_nodes", ctypes.c_uint64), ("jobs", ctypes.c_uint64),
                ("seconds", ctypes.c_double), ("pv", ctypes.c_uint32 * _MAX_LINE)]


def _contract():
    """hostsearch.cpp's Contract: the numbers and tables of chessaccel.contract, in its order."""
    from chessaccel.host.opencl.layout import JOB_CHAIN     # the OpenCL package only when used
    fields = {name: field for name, field in data.Layout.cast(Move)}
    values = [MATE, INF, MAX_PLY, EVAL_MAX, TAPER_SHIFT, PHASE_MAX, HOST_MAX_PLY,
              fields["from_sq"].offset, fields["to_sq"].offset, fields["promo"].offset,
              (1 << fields["from_sq"].width) - 1, (1 << fields["promo"].width) - 1,
              FUTILITY_HOST_PLIES, FUTILITY_MARGIN, LMR_FIRST, _KILLERS, FUTILITY_DEEP_DEPTH,
              FUTILITY_PRUNING_PLIES, FUTILITY_PRUNING_BASE, FUTILITY_PRUNING_STEP,
              LATE_MOVE_PLIES, LATE_MOVE_BASE, LATE_MOVE_FACTOR, NULL_EVAL_STEP, NULL_EVAL_MOST,
              SINGULAR_TABLE_PLIES, SINGULAR_MARGIN,
              JOB_CHAIN, FIFTY_SPAN, FIFTY_LIMIT, STABLE_CHANGED_PERCENT, STABLE_ITERATIONS,
              STABLE_SETTLED_PERCENT, STABLE_FALL_CP, STABLE_FALL_PERCENT]
    for table in (SQUARE_MG, SQUARE_EG):
        for piece in range(8):
            values += list(table[piece]) if piece in table else [0] * 64
    values += [PHASE_INC.get(piece, 0) for piece in range(8)]
    weights = list(PHASE_WEIGHT)
    if len(weights) > 64:
        raise AssertionError("hostsearch.cpp holds 64 phase weights")
    values += weights + [0] * (64 - len(weights))
    values += _term_weights()
    for table in square_tables("terms"):
        for piece in range(8):
            values += list(table[piece]) if piece in table else [0] * 64
    return values


def _term_weights(weights=WEIGHTS):
    """hosteval.hpp's TermWeights: the terms evaluation's weights (contract/evalweights.py's,
    read from evalweights.json), in its order; per-type tables indexed by PieceType value."""
    values = list(weights["passed_pawn_mg"]) + list(weights["passed_pawn_eg"])
    for key in ("passed_pawn_free_path", "passed_pawn_blocked", "isolated_pawn", "doubled_pawn",
                "backward_pawn", "connected_pawn", "king_shield_near", "king_shield_far",
                "king_open_file", "king_half_open_file", "bishop_pair", "rook_open_file",
                "rook_half_open_file", "rook_seventh", "tempo"):
        values += list(weights[key])
    for table in (weights["king_zone_attack"], weights["mobility_per_square"]):
        for piece in range(8):
            values += list(table.get(piece, (0, 0)))
    values += [weights["mobility_centre"].get(piece, 0) for piece in range(8)]
    for key in THREAT_WEIGHTS:
        values += list(weights[key])
    return values


def _option(options, name):
    """hostsearch.cpp's int of a SearchOptions field."""
    value = getattr(options, name)
    if name == "evaluation":
        return EVALUATIONS.index(check_evaluation(value))
    return int(value)


_library = None


def library():
    """hostboard's library, loaded again so that calls release the GIL (ctypes.CDLL: the pump's
    waits must let the UCI thread run), configured with the contract once."""
    global _library
    if _library is None:
        board_lib = hostboard.library()
        try:
            lib = ctypes.CDLL(board_lib._name)
        except OSError as error:
            raise hostboard.HostBoardError(f"cannot load the compiled host search: {error}") from None
        lib.hs_new.restype = ctypes.c_void_p
        lib.hs_new.argtypes = [ctypes.c_int]
        for name in ("hs_free", "hs_stop", "hs_clear", "hs_running", "hs_hashfull"):
            getattr(lib, name).argtypes = [ctypes.c_void_p]
        lib.hs_resize.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.hs_fail.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.hs_set_root.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.hs_start.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int,
                                 ctypes.c_double, ctypes.c_double]
        lib.hs_take.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4 + [ctypes.c_int] * 3
        lib.hs_stops.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.hs_complete.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4 + [ctypes.c_int]
        lib.hs_infos.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.hs_result.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p]
        lib.hs_set_launcher.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.hs_wait.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.hs_launch_stats.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.hl_opencl_load.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.hl_opencl_new.restype = ctypes.c_void_p
        lib.hl_opencl_new.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.hl_opencl_add.argtypes = [ctypes.c_void_p] + [ctypes.c_ssize_t] * 5 + \
            [ctypes.c_int] * 4 + [ctypes.c_char_p, ctypes.c_char_p]
        lib.hl_opencl_split.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int,
                                        ctypes.c_int]
        lib.hl_opencl_early_reads.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.hl_opencl_stats.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.hl_instant_new.restype = ctypes.c_void_p
        lib.hl_instant_new.argtypes = [ctypes.c_void_p]
        lib.hl_free.argtypes = [ctypes.c_void_p]
        lib.hs_static_eval.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.hs_eval_terms.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        if lib.hs_info_size() != ctypes.sizeof(_Info):
            raise hostboard.HostBoardError(f"hostsearch.cpp's Info is {lib.hs_info_size()} "
                                           f"bytes, hostsearch.py reads {ctypes.sizeof(_Info)}")
        if lib.hs_option_count() != len(OPTION_FIELDS) + 1:
            raise hostboard.HostBoardError("hostsearch.cpp and hostsearch.py disagree on the "
                                           "search options")
        values = _contract()
        wanted = lib.hs_configure((ctypes.c_int32 * len(values))(*values), len(values))
        if wanted:
            raise hostboard.HostBoardError(f"hostsearch.cpp's contract holds {wanted} numbers, "
                                           f"hostsearch.py gives {len(values)}")
        _library = lib
    return _library


def _pointer(array):
    return array.ctypes.data_as(ctypes.c_void_p)


def _position(board):
    """The address of the current position of a HostBoard."""
    return ctypes.addressof(board._stack) + board.ply * hostboard._POS_BYTES


def static_eval(board, evaluation="pst"):
    """The compiled search's static evaluation (hostsearch.cpp's static_eval) of the current
    position of a HostBoard: the model's ``evaluator(evaluation)`` of it, to the centipawn."""
    return library().hs_static_eval(_position(board), EVALUATIONS.index(check_evaluation(evaluation)))


def eval_terms(board):
    """hostsearch.cpp's terms of the current position of a HostBoard: {term: (mg, eg)} from
    white's view in TERMS order, as the model's ``term_values`` gives them."""
    out = (ctypes.c_int32 * (2 * len(TERMS)))()
    count = library().hs_eval_terms(_position(board), out)
    if count != len(TERMS):
        raise hostboard.HostBoardError(f"hostsearch.cpp has {count} terms, the contract {len(TERMS)}")
    return {name: (out[2 * k], out[2 * k + 1]) for k, name in enumerate(TERMS)}


# --- launches: how the pump runs a batch of packed jobs --------------------------------------------

class _PackedLaunches:
    """A backend that starts launches from packed arrays (OpenCL's ``start_packed``)."""

    def __init__(self, backend):
        self.backend = backend

    def start(self, positions, params, black):
        return self.backend.start_packed(positions, params)


class _BoardLaunch:
    def __init__(self, batch, black):
        self.batch, self.black = batch, black
        self.started = time.perf_counter()

    def done(self):
        return self.batch.done() or self.batch.error is not None

    def arrays(self):
        from chessaccel.host.opencl.layout import encode_move
        results = self.batch.results
        while any(r is None for r in results):
            if self.batch.error is not None:
                raise self.batch.error
            self.batch.wait(0.05)
            results = self.batch.results
        scores = np.fromiter((r.score for r in results), dtype=np.int32, count=len(results))
        moves = np.fromiter((encode_move(r.best_move, bool(b)) for r, b in zip(results, self.black)),
                            dtype=np.uint32, count=len(results))
        nodes = np.fromiter((r.nodes for r in results), dtype=np.uint64, count=len(results))
        return scores, moves, nodes

    def stop(self, start, end):
        """The executor runs a batch whole: a job given up still runs (its result is dropped),
        unless the whole batch is given up."""
        if start <= 0 and end >= len(self.black):
            self.batch.cancel()

    def abandon(self):
        self.batch.cancel()


class _ExecutorLaunches:
    """Any other backend: the jobs unpacked into model boards and submitted to its executor."""

    def __init__(self, executor):
        self.executor = executor

    def start(self, positions, params, black):
        from chessaccel.host.opencl.layout import unpack_positions
        boards = unpack_positions(positions, black)
        jobs = [Job(board, int(p[0]), int(p[1]), int(p[2])) for board, p in zip(boards, params)]
        return _BoardLaunch(self.executor.submit(jobs), black.copy())


def _abandon(launch, count):
    """Stop every job of a launch nobody waits for, and let it give back what it holds."""
    if hasattr(launch, "abandon"):
        launch.abandon()
        return
    try:
        launch.stop(0, count)
        launch.arrays()     # a device launch returns its buffers once read (stopped jobs end fast)
    except Exception:       # the search is over; a failing device is reported by the next one
        pass


def _opencl_library():
    """The path of the OpenCL library this process loaded (pyopencl's), for hostlaunch.cpp to
    call the same one."""
    import pyopencl   # noqa: F401  (loads it)
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if "libOpenCL" in path.rsplit("/", 1)[-1]:
                return path
    raise hostboard.HostBoardError("the OpenCL library pyopencl loaded is not among this "
                                   "process's libraries")


def native_launcher(backend, lib, copied=False):
    """A hostlaunch.cpp launcher for ``backend`` (one offering ``native_launches``), its
    kind ("opencl" or "instant"), whether its devices are GPUs and how many devices run their
    launches inline (PoCL's basic devices, each a core; 0: none, or not all of them), or
    (None, None, False, 0) where it offers none: then the pump of this module runs its
    launches. ``copied``: every device's launches copy their results as a GPU's do (read after
    the kernel, and while it runs), where a CPU device's are read in place (tests: the GPU's
    protocol on PoCL)."""
    describe = getattr(backend, "native_launches", None)
    if describe is None:
        return None, None, False, 0
    kind, what = describe()
    if kind == "instant":
        values = (ctypes.c_int32 * 8)(*what)
        return lib.hl_instant_new(values), kind, False, 0
    error = ctypes.create_string_buffer(200)
    if lib.hl_opencl_load(_opencl_library().encode(), error):
        raise BackendError(error.value.decode(errors="replace"))
    capacity = max([DEFAULT_LAUNCH_JOBS] + [d["workers"] for d in what])
    launcher = lib.hl_opencl_new(IN_FLIGHT, capacity)
    lib.hl_opencl_early_reads(launcher, GPU_EARLY_READ_US)
    for d in what:
        if lib.hl_opencl_add(launcher, d["context"], d["device"], d["program"],
                             d["eval_values"], d["line_values"], d["local"], d["workers"],
                             int(d["gpu"] or copied), int(d["synchronous"] and not copied),
                             str(d["name"]).encode(), error):
            lib.hl_free(launcher)
            raise BackendError(error.value.decode(errors="replace"))
    inline = len(what) if not copied and all(d["synchronous"] for d in what) else 0
    return launcher, kind, any(d["gpu"] for d in what), inline


def launches_for(executor):
    """How the compiled search runs its launches on ``executor``'s backend, and the jobs one
    launch holds to fill it (0: as many as are queued)."""
    backend = getattr(executor, "backend", None)
    if backend is not None and hasattr(backend, "start_packed"):
        return _PackedLaunches(backend), backend.open().capabilities.launch_jobs
    return _ExecutorLaunches(executor), 0


class CompiledSearch:
    """HostSearch's interface (``search(cb, limits) -> SearchResult``, ``on_info``, ``stop``)
    with the tree searched by hostsearch.cpp's threads and the jobs run by ``executor``'s
    backend. One instance keeps its table between searches (``resize``, ``clear``).

    A backend that offers ``native_launches`` (OpenCL, the dispatch benchmark's instant
    backend) has its launches run by hostlaunch.cpp, with no Python per launch (``native``
    False: by this module's pump instead, as every other backend's are; ``native_error``: why
    the native launcher could not be made, where it could not). ``copied_results``: the native
    launches copy their results as on a GPU whatever the device (native_launcher)."""

    def __init__(self, executor, hash_mb=16, options=None, stop=None, on_info=None,
                 native=True, copied_results=False):
        self.executor = executor
        self.options = options or SearchOptions()
        self.options.check()
        check_evaluation(self.options.evaluation)
        self.stop = stop
        self.on_info = on_info
        self._lib = library()
        self._handle = self._lib.hs_new(int(hash_mb))
        self._launches, self.launch_jobs = launches_for(executor)
        # a null-window frontier parent sends all its children at once only where the
        # executor says so (several accelerators, each taking whole jobs). Not on a GPU: the
        # brothers' jobs lengthen the launch's tail, which every job in it waits for (measured
        # on the H200: 0.20 M used nodes/s with them against 0.46 M without, one thread)
        self.speculate = bool(executor.speculate)
        n = max(self.launch_jobs, DEFAULT_LAUNCH_JOBS)
        self._positions = np.zeros((n, _POSITION_WORDS), dtype=np.uint64)
        self._params = np.zeros((n, 4), dtype=np.int32)
        self._tickets = np.zeros(n, dtype=np.uint32)
        self._black = np.zeros(n, dtype=np.uint8)
        self._infos = (_Info * 16)()
        self._info = _Info()
        self._error = ctypes.create_string_buffer(200)
        self._stats = (ctypes.c_uint64 * 4)()
        self._option_values = self._option_array = None     # the last search's, reused
        self._board = None
        #: hostlaunch.cpp's launcher (made at the first search, once the device is open), or
        #: None: this module's pump runs the launches (``native``: whether one is used)
        self._launcher = None
        self._launcher_kind = None
        self._launcher_gpu = False
        #: devices whose launches the searching threads run themselves (PoCL's basic devices)
        self.inline_lanes = 0
        self._copied_results = copied_results
        self._split = None          # the split settings the OpenCL launcher was last given
        self.native = None if native else False
        self.native_error = None
        self.launches = 0           # launches started, jobs in them, their seconds in flight
        self.launched_jobs = 0
        self.launch_seconds = 0.0
        #: jobs whose results were handed back while their launch still ran (a CPU device's
        #: kernels write into the host's arrays: hostlaunch.hpp, finished_early)
        self.early_jobs = 0

    def _split_settings(self):
        """(budget, min depth, lanes) for the OpenCL launcher from the options: the GPU
        defaults where they say -1 / 0 and the launcher's devices are GPUs."""
        budget, lanes = self.options.split_budget, self.options.split_lanes
        if budget < 0:
            budget = GPU_SPLIT_BUDGET if self._launcher_gpu else 0
        if not lanes and self._launcher_gpu:
            lanes = GPU_SPLIT_LANES
        return budget, SPLIT_MIN_DEPTH, lanes

    def opencl_stats(self):
        """The OpenCL launcher's figures so far: split launches ("launches", "split_points":
        the nodes published, "helped": the children searched by helpers) and a GPU's reads of
        finished jobs while their launches ran ("early_reads", "early_jobs": the jobs they
        handed back); None without an OpenCL launcher."""
        if self._launcher_kind != "opencl":
            return None
        out = (ctypes.c_uint64 * 5)()
        self._lib.hl_opencl_stats(self._launcher, out)
        return dict(zip(("launches", "split_points", "helped", "early_reads", "early_jobs"), out))

    def close(self):
        if self._handle:
            self._lib.hs_free(self._handle)
            self._handle = None
        if self._launcher:
            self._lib.hl_free(self._launcher)
            self._launcher = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def resize(self, hash_mb):
        self._lib.hs_resize(self._handle, int(hash_mb))

    def clear(self):
        self._lib.hs_clear(self._handle)

    # --- a search -----------------------------------------------------------------------------

    def search(self, cb, limits=None):
        limits = limits or Limits()
        start = time.monotonic()
        board = self._board      # the root's stack, made once (searches run one at a time)
        if board is None:
            board = self._board = hostboard.HostBoard(cb)
        else:
            board.set_chess(cb)
        count = board.order()
        result = SearchResult(None, None, 0, 0, [], 0, 0, 0, 0, 0.0, 0, 0)
        if not count:
            result.score = -MATE if cb.is_check() else 0
            result.host_nodes = 1
            return result
        result.best_move = board.first()
        if limits.root_moves:
            result.best_move = next((m for m in board.listed() if m in limits.root_moves),
                                    result.best_move)
        keys = game_keys(cb, board)
        history = (ctypes.c_uint64 * (len(keys) - 1))(*keys[:-1])
        wanted = [hostboard.move_code(m) for m in limits.root_moves or ()]
        wanted = (ctypes.c_uint32 * len(wanted))(*wanted)
        lib, handle = self._lib, self._handle
        if self.native is None:
            backend = getattr(self.executor, "backend", None)
            try:
                if backend is not None:
                    self._launcher, self._launcher_kind, self._launcher_gpu, self.inline_lanes = \
                        native_launcher(backend, lib, self._copied_results)
            except (BackendError, hostboard.HostBoardError, OSError) as error:
                # this module's pump runs the same launches, slower
                self.native_error = first_line(error)
            self.native = self._launcher is not None
            lib.hs_set_launcher(handle, self._launcher, NATIVE_POLL_US)
        values = (*_option_values(self.options), self.speculate)
        if values != self._option_values:
            self._option_values = values
            ints = [_option(self.options, f) for f in OPTION_FIELDS] + [int(self.speculate)]
            # inline launches: a searching thread drives each device (one core each), so at
            # least as many threads as devices
            threads = OPTION_FIELDS.index("threads")
            ints[threads] = max(ints[threads], self.inline_lanes)
            self._option_array = (ctypes.c_int32 * len(ints))(*ints)
        split = self._split_settings()
        if self._launcher_kind == "opencl" and split != self._split:
            self._split = split
            lib.hl_opencl_split(self._launcher, *split)
        lib.hs_set_root(handle, board._stack, history, len(history), self._option_array,
                        wanted, len(wanted))
        now = time.monotonic()
        deadline = -1.0 if limits.deadline is None else max(0.0, limits.deadline - now)
        soft = -1.0 if limits.soft_deadline is None else max(0.0, limits.soft_deadline - now)
        lib.hs_start(handle, int(limits.depth or 0), int(limits.nodes or 0),
                     int(limits.mate or 0), deadline, soft)
        try:
            if self.native:
                self._wait()
            else:
                self._pump(result)
        finally:
            lib.hs_stop(handle)
        info, error = self._info, self._error
        if lib.hs_result(handle, ctypes.byref(info), error):
            result.error = error.value.decode(errors="replace")
        if self.native:
            stats = self._stats
            lib.hs_launch_stats(handle, stats)
            self.launches += stats[0]
            self.launched_jobs += stats[1]
            self.launch_seconds += stats[2] / 1e9
            self.early_jobs += stats[3]
        self._report()
        pv = self._line(info)
        result.score, result.depth = info.score, info.depth
        result.aborted = bool(info.bound)
        if pv:
            result.best_move = pv[0]
        result.pv = legal_prefix(cb, pv or [result.best_move], board)
        result.ponder_move = result.pv[1] if len(result.pv) > 1 else None
        result.host_nodes, result.accelerator_nodes = info.host_nodes, info.accelerator_nodes
        result.speculative_nodes, result.jobs = info.speculative_nodes, info.jobs
        result.seldepth = info.seldepth
        result.seconds = time.monotonic() - start
        result.iterations = self._iterations
        return result

    def _wait(self):
        """The search's threads and its native pump (hostlaunch.cpp) do everything: pass on a
        stop and report iterations as they complete, until they end."""
        lib, handle = self._lib, self._handle
        self._iterations = []
        stopped = False
        while lib.hs_wait(handle, _IDLE_US):
            if not stopped and self.stop is not None and self.stop.is_set():
                lib.hs_stop(handle)
                stopped = True
            self._report()

    def _pump(self, result):
        """Take the queued jobs into launches, start them, hand their results back, and stop
        the jobs of cancelled batches where they run, until the search's threads have ended;
        report iterations as they complete."""
        lib, handle = self._lib, self._handle
        self._iterations = []
        in_flight = deque()             # (number, launch, tickets), oldest first
        positions, params, tickets, black = self._positions, self._params, self._tickets, self._black
        pointers = [_pointer(a) for a in (positions, params, tickets, black)]
        capacity = len(tickets)
        stops = np.zeros(capacity, dtype=np.int64)
        number = 0
        stopped = False
        while True:
            if not stopped and self.stop is not None and self.stop.is_set():
                lib.hs_stop(handle)
                stopped = True
            room = len(in_flight) < IN_FLIGHT
            n = 0
            if room:    # the wait for new jobs is also the pause between looks at the launches
                n = lib.hs_take(handle, *pointers, capacity,
                                _POLL_US if in_flight else _IDLE_US, number)
            if n > 0:
                try:
                    launch = self._launches.start(positions[:n], params[:n], black[:n])
                except Exception as error:  # the backend cannot run them: the search stops
                    lib.hs_fail(handle, first_line(error).encode())
                    n = 0
                else:
                    in_flight.append((number, launch, tickets[:n].copy()))
                    number += 1
                    self.launches += 1
                    self.launched_jobs += n
            if in_flight:
                self._stop_cancelled(in_flight, stops)
                finished = [entry for entry in in_flight if entry[1].done()]
                if not finished and not room:
                    time.sleep(_POLL_US / 1e6)
                for entry in finished:
                    in_flight.remove(entry)
                    _, launch, taken = entry
                    self.launch_seconds += time.perf_counter() - launch.started
                    try:
                        scores, moves, nodes = launch.arrays()
                    except Exception as error:
                        lib.hs_fail(handle, first_line(error).encode())
                    else:
                        lib.hs_complete(handle, _pointer(taken), _pointer(scores),
                                        _pointer(moves), _pointer(nodes), len(taken))
            self._report()
            if n < 0:       # the search has ended: what is still in flight is not needed
                for _, launch, taken in in_flight:
                    _abandon(launch, len(taken))
                return

    def _stop_cancelled(self, in_flight, stops):
        """Set the stop flags of jobs in flight that their search no longer needs (a cutoff),
        a run of neighbours at a time."""
        count = self._lib.hs_stops(self._handle, _pointer(stops), len(stops))
        if not count:
            return
        wanted = np.sort(stops[:count])
        launches = {number: launch for number, launch, _ in in_flight}
        start = 0
        while start < count:
            end = start + 1
            while end < count and wanted[end] == wanted[end - 1] + 1:
                end += 1
            launch = launches.get(int(wanted[start]) >> 32)
            if launch is not None:      # else it has finished meanwhile
                first = int(wanted[start]) & 0xFFFFFFFF
                launch.stop(first, first + end - start)
            start = end

    def _report(self):
        count = self._lib.hs_infos(self._handle, self._infos, len(self._infos))
        for k in range(count):
            raw = self._infos[k]
            info = IterationInfo(
                depth=raw.depth, seldepth=raw.seldepth, score=raw.score,
                bound=_BOUNDS.get(raw.bound, "exact"), pv=self._line(raw),
                host_nodes=raw.host_nodes, accelerator_nodes=raw.accelerator_nodes,
                speculative_nodes=raw.speculative_nodes, jobs=raw.jobs, seconds=raw.seconds,
                hashfull=raw.hashfull, span_nodes=0)
            if info.bound == "exact":
                self._iterations.append(info)
            if self.on_info:
                self.on_info(info)

    @staticmethod
    def _line(info):
        # hostboard.move_of of each code (its table, read directly)
        return list(map(_MOVES.__getitem__, info.pv[:info.pv_length]))


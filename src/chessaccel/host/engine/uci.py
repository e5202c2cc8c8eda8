"""The UCI protocol: ``chessaccel uci``.

A reader thread takes lines from the GUI; ``stop`` and ``quit`` act at once (they set the flag the
search looks at between host nodes and while it waits for a job), everything else is handled in
order by the command loop: the lines sent before a ``quit`` or the end of input are still
answered (``printf 'uci\nisready\ngo depth 3\n' | chessaccel uci`` prints uciok, readyok and a
bestmove, as Stockfish does), and a ``go`` among them is stopped as soon as it starts. A search
runs in its own thread, so ``isready`` is answered at once while it thinks. Bad input of any kind (an unknown command, a malformed ``go``, an illegal move
in ``position``, an unknown option or value, a backend that cannot start or fails mid-search)
gets one ``info string error: ...`` line and the engine stays up, never a traceback.

Options: ``Hash`` (MiB), ``Clear Hash``, ``Backend`` (any spec ``get_backend`` accepts: model,
rtl, verilator[:BOARDS], serial:PORT[,PORT...], opencl...), ``HardwarePlies`` (plies each job
searches above quiescence), ``Accelerators`` (model worker processes, simulated board cores
(of each board)), ``Move
Overhead`` (ms kept in hand under a clock), ``Evaluation`` (auto, pst or terms: the static
evaluation, docs/semantics.md section 6; auto, the default, is terms where the backend offers it
and pst elsewhere; a backend that cannot evaluate as asked is refused), ``Threads``
(search threads), ``CompiledSearch`` (the host's tree searched by native threads,
hostsearch.py, instead of Python's; on by default) and the selective-search switches
(``SELECTIVE_OPTIONS``; those of ``DEFAULT_SELECTIVE`` on by default).
"""

import os
import queue
import sys
import threading
import time

import chess

from chessaccel.contract.defs import MAX_DEPTH
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS
from chessaccel.host.backends import BackendError, backend_class, parse_spec
from chessaccel.model.position import PositionError, parse_position
from .executors import make_executor
from .hostsearch import CompiledSearch
from .scores import uci_score
from .search import (MAX_SPLIT_BUDGET, MAX_SPLIT_LANES, MAX_THREADS, HostSearch, Limits,
                     SearchOptions)
from .timeman import DEFAULT_OVERHEAD_MS, DEFAULT_SLOW_MOVER, GoLimits, LagMeter, plan
from .tt import MAX_HASH_MB, TranspositionTable

__all__ = ["UciEngine", "main", "ENGINE_NAME"]

ENGINE_NAME = "chessaccel"
ENGINE_AUTHOR = "the chessaccel developers"
#: Seconds a ``quit`` waits for the command loop before the engine exits regardless.
QUIT_GRACE = 5.0
MAX_ACCELERATORS = 64


class _Spin:
    def __init__(self, name, default, low, high):
        self.name, self.default, self.low, self.high = name, default, low, high

    def declare(self):
        return (f"option name {self.name} type spin default {self.default} "
                f"min {self.low} max {self.high}")

    def parse(self, text):
        try:
            value = int(text)
        except (TypeError, ValueError):
            raise ValueError(f"option {self.name} needs an integer, got {text!r}") from None
        if not self.low <= value <= self.high:
            raise ValueError(f"option {self.name} value {value} out of range "
                             f"{self.low}..{self.high}")
        return value


class _String:
    def __init__(self, name, default):
        self.name, self.default = name, default

    def declare(self):
        return f"option name {self.name} type string default {self.default}"

    def parse(self, text):
        if text is None or not text.strip():
            raise ValueError(f"option {self.name} needs a value")
        return text.strip()


class _Check:
    def __init__(self, name, default):
        self.name, self.default = name, default

    def declare(self):
        return f"option name {self.name} type check default {'true' if self.default else 'false'}"

    def parse(self, text):
        value = (text or "").strip().lower()
        if value not in ("true", "false"):
            raise ValueError(f"option {self.name} needs true or false, got {text!r}")
        return value == "true"


class _Combo:
    def __init__(self, name, default, choices):
        self.name, self.default, self.choices = name, default, choices

    def declare(self):
        return (f"option name {self.name} type combo default {self.default} "
                + " ".join(f"var {c}" for c in self.choices))

    def parse(self, text):
        value = (text or "").strip()
        if value not in self.choices:
            raise ValueError(f"option {self.name} needs one of {', '.join(self.choices)}, "
                             f"got {text!r}")
        return value


class _Button:
    def __init__(self, name):
        self.name, self.default = name, None

    def declare(self):
        return f"option name {self.name} type button"

    def parse(self, text):
        return None


#: The engine's defaults where they differ from SearchOptions' (the plain search the tests hold
#: node for node): each accepted by a match (docs/engine.md, "Deciding a change"): the compiled
#: search with these selective steps against none, +203 +- 124 Elo, SPRT(0, 50) accepted
#: (docs/benchmarks/engine-pocl-2026-11-28/hp2-selective-vs-hp3.*); with them, HardwarePlies 3
#: against 2: +133 +- 109 and against 4: +131 +- 104, both SPRT(0, 50) rejecting the other
#: (docs/benchmarks/engine-sprt-h200cpu-2026-11-28/). The option's default is -1, auto: this
#: where a job costs a launch, INLINE_HARDWARE_PLIES where it does not (0 is a plies count:
#: jobs of quiescence alone).
AUTO_HARDWARE_PLIES = -1
DEFAULT_HARDWARE_PLIES = 3
#: HardwarePlies unless set, where the compiled search runs its jobs inline (PoCL's basic
#: devices: a frontier parent's jobs in one chained launch, a few microseconds): against
#: stockfish 2200 on the GPU machine's Xeon cores, paired runs of 100 games, 3 scored 0.240 and
#: 2 0.285 with one launch a job, 2 0.305 and 1 0.355 with chained launches, the middlegame
#: searched 8, 10, 11 and 12 plies deep (docs/engine.md, "Depth in the middlegame").
INLINE_HARDWARE_PLIES = 1
#: ``Evaluation auto``: the first of these the backend offers. Terms over pst: +165 +- 74 Elo
#: in self-play, SPRT(0, 50) accepted (docs/engine.md, "The terms evaluation in games").
AUTO_EVALUATION = "auto"
AUTO_PREFERENCE = ("terms", "pst")
ENGINE_EVALUATIONS = (AUTO_EVALUATION,) + EVALUATIONS
#: JobReductions since 2026-11-30: +108 +- 74 Elo against the same defaults without it,
#: SPRT(0, 50) accepted (docs/benchmarks/engine-pocl-2026-11-30/jobred-vs-off.*).
#: TwofoldDraws (every repetition a draw, the rule before 2026-12-01) stays: counting a position
#: seen once before the root as play going on lost, -120 +- 89 Elo in 24 games, SPRT(0, 50)
#: rejected it (docs/benchmarks/engine-sprt-h200cpu-2026-12-01/), and against stockfish 2200
#: it scored 0.355 against 0.360 (docs/benchmarks/engine-pocl-2026-12-01/).
DEFAULT_SELECTIVE = ("NullMove", "Reductions", "JobReductions", "Futility", "CheckExtension",
                     "MateDistance", "IIR", "History", "TwofoldDraws")

OPTIONS = (
    _Spin("Hash", 16, 1, MAX_HASH_MB),
    _Button("Clear Hash"),
    _String("Backend", "model"),
    _Spin("HardwarePlies", AUTO_HARDWARE_PLIES, AUTO_HARDWARE_PLIES, MAX_DEPTH),
    _Spin("Accelerators", 1, 1, MAX_ACCELERATORS),
    _Spin("Move Overhead", DEFAULT_OVERHEAD_MS, 0, 5000),
    _Spin("Slow Mover", DEFAULT_SLOW_MOVER, 10, 1000),
    _Spin("Threads", 1, 1, MAX_THREADS),
    _Combo("Evaluation", AUTO_EVALUATION, ENGINE_EVALUATIONS),
    _Check("CompiledSearch", True),
    _Spin("SplitBudget", -1, -1, MAX_SPLIT_BUDGET),
    _Spin("SplitLanes", 0, 0, MAX_SPLIT_LANES),
    _Spin("JobReductionPlies", 1, 1, MAX_DEPTH),
    _Spin("NullMoveDepth", 1, 1, MAX_DEPTH),
)
#: The selective-search switches (docs/engine.md, "Selective search"): UCI option -> the
#: SearchOptions field, each a check option, on by default where DEFAULT_SELECTIVE says.
SELECTIVE_OPTIONS = {"NullMove": "null_move", "Reductions": "reductions",
                     "JobReductions": "job_reductions",
                     "Futility": "futility", "CheckExtension": "check_extension",
                     "MateDistance": "mate_distance", "IIR": "iir", "History": "history",
                     "FutilityPruning": "futility_pruning",
                     "LateMovePruning": "late_move_pruning", "CounterMoves": "counter_moves",
                     "NullMoveEval": "null_move_eval", "FiftyMoveScaling": "fifty_move_scaling",
                     "TwofoldDraws": "twofold_draws", "TimeStability": "time_stability",
                     "DeepFutility": "deep_futility", "NonPvReductions": "non_pv_reductions",
                     "BadCapturesLast": "bad_captures_last",
                     "SingularExtension": "singular_extension"}
OPTIONS += tuple(_Check(name, name in DEFAULT_SELECTIVE) for name in SELECTIVE_OPTIONS)
_BY_NAME = {o.name.lower(): o for o in OPTIONS}
#: The options that make the engine search as HostSearch with SearchOptions' defaults does (in
#: Python, no selective step): what a test holds the engine's numbers to, node for node.
PLAIN_SEARCH = {"CompiledSearch": False, "Evaluation": DEFAULT_EVALUATION,
                **{name: False for name in SELECTIVE_OPTIONS}}

_GO_INTS = ("depth", "nodes", "movetime", "wtime", "btime", "winc", "binc", "movestogo", "mate")
_GO_FLAGS = ("infinite", "ponder")


class UciError(ValueError):
    """A command the engine cannot follow: reported as one ``info string error`` line."""


class UciEngine:
    def __init__(self, output=None):
        self._out = output or sys.stdout
        self._out_lock = threading.Lock()
        self.values = {o.name: o.default for o in OPTIONS if o.default is not None}
        self._plies_said = None             # the executor whose HardwarePlies was announced
        self.tt = TranspositionTable(self.values["Hash"])
        self.board = chess.Board()
        self.executor = None
        self._executor_key = None           # (Backend, Accelerators) of the executor
        self._executor_evaluation = None    # and the Evaluation it searches with
        self._killers = None
        self._compiled = None           # the CompiledSearch of the current executor
        self._native_error_said = None  # the compiled search whose native_error was said
        self._commands = queue.Queue()
        self._stop = threading.Event()
        self._quit = threading.Event()      # exit now: the output is gone
        self._quitting = threading.Event()  # quit or end of input read: finish what came before
        self._exited = threading.Event()
        self._search_thread = None
        self._search_over = threading.Event()
        self.lag = LagMeter()

    # --- output -------------------------------------------------------------------------------

    def send(self, line):
        with self._out_lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._quit.set()
                self._stop.set()

    def error(self, message):
        self.send(f"info string error: {message}")

    # --- the loops ----------------------------------------------------------------------------

    def run(self, infile=None):
        """Serve UCI on ``infile`` (stdin) until ``quit`` or end of input. Returns 0."""
        infile = infile or sys.stdin
        reader = threading.Thread(target=self._read, args=(infile,), name="uci-reader",
                                  daemon=True)
        reader.start()
        try:
            while True:
                line = self._commands.get()
                if line is None:
                    break
                try:
                    self.handle(line)
                except UciError as error:
                    self.error(str(error))
                except Exception as error:  # a bug must not take the engine down mid-game
                    self.error(f"internal error on {line[:40]!r}: {type(error).__name__}: "
                               f"{str(error)[:120]}")
                if self._quit.is_set():
                    break
        finally:
            self.shutdown()
            self._exited.set()
        return 0

    def _read(self, infile):
        try:
            for raw in infile:
                line = raw.strip()
                word = line.split(maxsplit=1)[0] if line else ""
                if word == "stop":
                    self._stop.set()
                elif word == "quit":
                    break
                self._commands.put(line)
        except (OSError, ValueError, UnicodeDecodeError) as error:
            self.error(f"input unreadable ({type(error).__name__}); quitting")
        # quitting before stop: cmd_go clears stop, then looks at quitting (no lost wake-up)
        self._quitting.set()
        self._stop.set()
        self._commands.put(None)
        self._exit_if_stuck()

    def _exit_if_stuck(self):
        """``quit`` must work at any moment: if the command loop is stuck (a backend that is
        still starting), end the process after QUIT_GRACE seconds, workers first."""
        if self._exited.wait(QUIT_GRACE):
            return
        executor = self.executor
        if executor is not None and hasattr(executor, "worker_pids"):
            for pid in executor.worker_pids():
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
        os._exit(0)

    def shutdown(self):
        self._stop.set()
        if self._search_thread is not None:
            self._search_thread.join()
            self._search_thread = None
            self._search_over.set()
        self._close_compiled()
        if self.executor is not None:
            self.executor.close()
            self.executor = None

    def _close_compiled(self):
        if self._compiled is not None:
            self._compiled.close()
            self._compiled = None

    def searching(self):
        """True from ``go`` until the bestmove line has been written (not until the thread
        ends: a GUI may send the next command the moment it reads bestmove)."""
        if self._search_thread is None:
            return False
        if self._search_over.is_set():
            self._search_thread.join()
            self._search_thread = None
            return False
        return True

    # --- commands -----------------------------------------------------------------------------

    def handle(self, line):
        words = line.split()
        if not words:
            return
        command, args = words[0], words[1:]
        handler = {
            "uci": self.cmd_uci, "isready": self.cmd_isready, "ucinewgame": self.cmd_ucinewgame,
            "setoption": self.cmd_setoption, "position": self.cmd_position, "go": self.cmd_go,
            "stop": self.cmd_stop, "ponderhit": self.cmd_ponderhit, "debug": self.cmd_ignore,
            "register": self.cmd_ignore, "d": self.cmd_display,
        }.get(command)
        if handler is None:
            raise UciError(f"unknown command {line[:60]!r}")
        handler(args)

    def cmd_uci(self, args):
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {ENGINE_AUTHOR}")
        for option in OPTIONS:
            self.send(option.declare())
        self.send("uciok")

    def cmd_isready(self, args):
        if not self.searching():
            self._ensure_executor()
        self.send("readyok")

    def cmd_ignore(self, args):
        pass

    def cmd_ponderhit(self, args):
        raise UciError("ponderhit: this engine does not ponder (no Ponder option)")

    def cmd_stop(self, args):
        """The reader set the stop flag the moment the line arrived; here, in order with the
        other commands, wait for the bestmove, so that what follows a stop (a new position, a
        go) never finds the old search still running."""
        self._stop.set()
        if self._search_thread is not None:
            self._search_over.wait()
            self.searching()

    def cmd_display(self, args):
        self.send(f"info string fen {self.board.fen()}")
        self.send(f"info string lag {int(self.lag.lag_ms)} ms")

    def cmd_ucinewgame(self, args):
        self._refuse_while_searching("ucinewgame")
        self.tt.clear()
        if self._compiled is not None:
            self._compiled.clear()
        self._killers = None

    def _refuse_while_searching(self, what):
        if self._quitting.is_set():     # the search is stopping: what was sent before quit waits
            self.cmd_stop([])
        if self.searching():
            raise UciError(f"{what} while searching: ignored (send stop first)")

    def cmd_setoption(self, args):
        self._refuse_while_searching("setoption")
        if not args or args[0] != "name":
            raise UciError("setoption needs 'name <id> [value <x>]'")
        if "value" in args:
            at = args.index("value")
            name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
        else:
            name, value = " ".join(args[1:]), None
        option = _BY_NAME.get(name.lower())
        if option is None:
            raise UciError(f"unknown option {name!r}")
        try:
            parsed = option.parse(value)
        except ValueError as error:
            raise UciError(str(error)) from None
        if option.name == "Clear Hash":
            self.tt.clear()
            if self._compiled is not None:
                self._compiled.clear()
            return
        if option.name == "Hash":
            self.tt.resize(parsed)
            if self._compiled is not None:
                self._compiled.resize(parsed)
        if option.name in ("Backend", "Accelerators", "Evaluation"):
            wanted = dict(self.values, **{option.name: parsed})
            if self.executor is not None or option.name in ("Backend", "Evaluation"):
                self._replace_executor(wanted["Backend"], wanted["Accelerators"],
                                       wanted["Evaluation"])
        self.values[option.name] = parsed

    @staticmethod
    def _evaluation_for(spec, evaluation):
        """The evaluation the backend of ``spec`` searches with for the option's value: itself,
        or for ``auto`` the backend's own choice (its ``auto_evaluation``: the simulated board's
        is pst, as the boards') or else the first of AUTO_PREFERENCE it offers (pst when the
        spec names no backend: its error comes when it is started)."""
        if evaluation != AUTO_EVALUATION:
            return evaluation
        try:
            backend = backend_class(spec)
        except BackendError:
            return DEFAULT_EVALUATION
        if backend.auto_evaluation is not None:
            return backend.auto_evaluation
        return next((e for e in AUTO_PREFERENCE if e in backend.evaluations), DEFAULT_EVALUATION)

    def _replace_executor(self, spec, accelerators, evaluation=AUTO_EVALUATION):
        """Start the executor for (spec, accelerators, evaluation); on failure keep the old one."""
        evaluation = self._evaluation_for(spec, evaluation)
        key = (spec, accelerators)
        if (self.executor is not None and key == self._executor_key and not self.executor.broken
                and evaluation == self._executor_evaluation):
            return
        try:
            executor = make_executor(spec, accelerators, log=self._log_backend,
                                     evaluation=evaluation)
        except BackendError as error:
            raise UciError(f"backend {spec!r}: {error}") from None
        try:
            _warm_up(executor)
        except BackendError as error:
            executor.close()
            raise UciError(f"backend {spec!r}: {error}") from None
        self._close_compiled()
        if self.executor is not None:
            self.executor.close()
        self.executor, self._executor_key = executor, key
        self._executor_evaluation = evaluation
        if parse_spec(spec).scheme == "serial" and executor.slots != accelerators:
            boards = len(executor.boards)
            where = f" on {boards} boards" if boards > 1 else ""
            self.send(f"info string {spec} has {executor.slots} core(s){where}: Accelerators "
                      f"is the {'boards' if boards > 1 else 'board'}', not ours")

    def _log_backend(self, line):
        self.send(f"info string {line}")

    def _ensure_executor(self):
        """The executor of the current options, started if needed; None when it cannot be
        (after an error line)."""
        spec, accelerators = self.values["Backend"], self.values["Accelerators"]
        evaluation = self._evaluation_for(spec, self.values["Evaluation"])
        if (self.executor is not None and not self.executor.broken
                and self._executor_key == (spec, accelerators)
                and self._executor_evaluation == evaluation):
            return self.executor
        try:
            self._replace_executor(spec, accelerators, evaluation)
        except UciError as error:
            self.error(str(error))
            if spec == "model":
                return None
            self.error(f"searching on the model until the backend {spec!r} works")
            try:
                self._replace_executor("model", accelerators, evaluation)
            except UciError as error:
                self.error(str(error))
                return None
        return self.executor

    def cmd_position(self, args):
        if not args:
            raise UciError("position needs 'startpos' or 'fen <FEN>', then optional 'moves ...'")
        if "moves" in args:
            at = args.index("moves")
            spec, moves = args[:at], args[at + 1:]
        else:
            spec, moves = args, []
        if not spec:
            raise UciError("position needs 'startpos' or 'fen <FEN>' before 'moves'")
        if spec[0] == "startpos" and len(spec) == 1:
            board = chess.Board()
        elif spec[0] == "fen" and len(spec) > 1:
            fen = " ".join(spec[1:])
            try:
                parse_position(fen)
                board = chess.Board(fen)
            except (PositionError, ValueError) as error:
                raise UciError(f"position: {error}") from None
        else:
            raise UciError(f"position: expected 'startpos' or 'fen <FEN>', got "
                           f"{' '.join(spec)[:60]!r}")
        for text in moves:
            try:
                move = chess.Move.from_uci(text)
            except ValueError:
                move = None
            if move is None or not board.is_legal(move):
                raise UciError(f"position: illegal move {text!r} in {board.fen()} "
                               "(position unchanged)")
            board.push(move)
        self.board = board

    def _parse_go(self, args):
        fields = {}
        i = 0
        while i < len(args):
            word = args[i]
            if word in _GO_INTS:
                if i + 1 >= len(args):
                    raise UciError(f"go: {word} needs a number")
                try:
                    value = int(args[i + 1])
                except ValueError:
                    raise UciError(f"go: {word} needs an integer, got {args[i + 1]!r}") from None
                low = 0 if word in ("wtime", "btime", "winc", "binc") else 1
                if word in ("wtime", "btime"):
                    low = -10**9     # a GUI may send a negative clock after a flag: think least
                if value < low:
                    raise UciError(f"go: {word} {value} must be at least {low}")
                fields[word] = value
                i += 2
            elif word in _GO_FLAGS:
                fields[word] = True
                i += 1
            elif word == "searchmoves":
                moves = []
                i += 1
                while i < len(args) and args[i] not in _GO_INTS + _GO_FLAGS:
                    move = None
                    try:
                        move = chess.Move.from_uci(args[i])
                    except ValueError:
                        pass
                    if move is None or not self.board.is_legal(move):
                        raise UciError(f"go: searchmoves: illegal move {args[i]!r}")
                    moves.append(move)
                    i += 1
                fields["searchmoves"] = moves
            else:
                raise UciError(f"go: unknown parameter {word!r}")
        return fields

    def cmd_go(self, args):
        self._refuse_while_searching("go")
        fields = self._parse_go(args)
        executor = self._ensure_executor()
        board = self.board.copy()
        self._stop.clear()
        if self._quitting.is_set():     # a go sent before quit: searched only to a bestmove
            self._stop.set()
        if executor is None:
            self._play_without_search(board)
            return
        clock = GoLimits(wtime=_clock(fields.get("wtime")), btime=_clock(fields.get("btime")),
                         winc=fields.get("winc"), binc=fields.get("binc"),
                         movestogo=fields.get("movestogo"), movetime=fields.get("movetime"),
                         infinite=fields.get("infinite", False) or fields.get("ponder", False))
        start = time.monotonic()
        white = board.turn == chess.WHITE
        our_clock = clock.wtime if white else clock.btime
        our_increment = clock.winc if white else clock.binc
        self.lag.before_go(board.ply(), our_clock)
        budget = plan(clock, white, self.lag.expected_ms(self.values["Move Overhead"]),
                      self.values["Slow Mover"])
        soft, hard = budget.deadlines(start)
        limits = Limits(depth=fields.get("depth"), nodes=fields.get("nodes"), deadline=hard,
                        soft_deadline=soft, mate=fields.get("mate"),
                        root_moves=fields.get("searchmoves"))
        options = SearchOptions(hardware_plies=self._hardware_plies(executor),
                                threads=self.values["Threads"],
                                split_budget=self.values["SplitBudget"],
                                split_lanes=self.values["SplitLanes"],
                                job_reduction_plies=self.values["JobReductionPlies"],
                                null_move_depth=self.values["NullMoveDepth"],
                                evaluation=self._executor_evaluation,
                                **{field: self.values[name]
                                   for name, field in SELECTIVE_OPTIONS.items()})
        if self.values["CompiledSearch"]:
            search = self._compiled_search(executor, options)
        else:
            search = HostSearch(executor, self.tt, options, stop=self._stop, on_info=self._info)
            if self._killers is not None:
                search.killers = self._killers
            self._killers = search.killers
        wait_for_stop = clock.infinite
        self._search_over.clear()
        self._search_thread = threading.Thread(
            target=self._think,
            args=(search, board, limits, wait_for_stop, (start, our_clock, our_increment)),
            name="uci-search", daemon=True)
        self._search_thread.start()

    def _hardware_plies(self, executor):
        """HardwarePlies as set; -1 (the default: auto) is INLINE_HARDWARE_PLIES where the
        compiled search launches its jobs inline (the backend's device runs a kernel in the
        thread that queues it: PoCL's basic devices), said once in an info string, and
        DEFAULT_HARDWARE_PLIES elsewhere."""
        plies = self.values["HardwarePlies"]
        if plies != AUTO_HARDWARE_PLIES:
            return plies
        device = getattr(getattr(executor, "backend", None), "device", None)
        if not (self.values["CompiledSearch"] and getattr(device, "synchronous", False)):
            return DEFAULT_HARDWARE_PLIES
        if self._plies_said is not executor:
            self._plies_said = executor
            self.send(f"info string HardwarePlies {INLINE_HARDWARE_PLIES}: this backend's jobs "
                      f"run inline (PoCL's basic devices); {DEFAULT_HARDWARE_PLIES} elsewhere")
        return INLINE_HARDWARE_PLIES

    def _compiled_search(self, executor, options):
        """The compiled search of ``executor`` (made once per executor: its table lives in
        it), set up for this ``go``."""
        if self._compiled is None or self._compiled.executor is not executor:
            self._close_compiled()
            self._compiled = CompiledSearch(executor, self.values["Hash"])
        search = self._compiled
        options.check()
        search.options, search.stop, search.on_info = options, self._stop, self._info
        return search

    def _play_without_search(self, board):
        moves = list(board.legal_moves)
        self.error("no backend can search: playing the first legal move")
        self.send(f"bestmove {moves[0].uci() if moves else '(none)'}")

    def _think(self, search, board, limits, wait_for_stop, clock=(None, None, None)):
        try:
            result = search.search(board, limits)
            if result.error:
                self.error(f"backend failed: {result.error}")
            self._say_native_error(search)
            if wait_for_stop:
                self._stop.wait()
            best = result.best_move
            if best is None:
                line = "bestmove (none)"
            elif result.ponder_move is not None:
                line = f"bestmove {best.uci()} ponder {result.ponder_move.uci()}"
            else:
                line = f"bestmove {best.uci()}"
        except Exception as error:      # the engine stays up: one line, and a legal move
            self.error(f"search failed: {type(error).__name__}: {error}")
            moves = list(board.legal_moves)
            line = f"bestmove {moves[0].uci() if moves else '(none)'}"
        started, our_clock, our_increment = clock
        if started is not None:
            self.lag.after_move(board.ply(), our_clock, our_increment,
                                (time.monotonic() - started) * 1000)
        self._search_over.set()
        self.send(line)

    def _say_native_error(self, search):
        """Once for each compiled search: why its native launcher could not be made, so that
        its jobs go through hostsearch.py's pump, many times slower."""
        reason = getattr(search, "native_error", None)
        if reason and search is not self._native_error_said:
            self._native_error_said = search
            self.send(f"info string the compiled search runs its jobs through the Python pump, "
                      f"slower: no native launches ({reason})")

    def _info(self, info):
        elapsed_ms = max(1, int(info.seconds * 1000))
        nodes = info.nodes
        bound = {"lower": " lowerbound", "upper": " upperbound"}.get(info.bound, "")
        pv = " ".join(m.uci() for m in info.pv)
        self.send(f"info depth {info.depth} seldepth {info.seldepth} multipv 1 "
                  f"score {uci_score(info.score)}{bound} nodes {nodes} "
                  f"nps {nodes * 1000 // elapsed_ms} hashfull {info.hashfull} "
                  f"time {elapsed_ms} pv {pv}".rstrip())
        if info.bound == "exact":
            self.send(f"info string host nodes {info.host_nodes} accelerator nodes "
                      f"{info.accelerator_nodes} speculative nodes {info.speculative_nodes} "
                      f"jobs {info.jobs} span nodes {info.span_nodes}")


#: Seconds a new backend has to answer its first job.
WARM_UP_SECONDS = 300


def _warm_up(executor):
    """One tiny job (the start position, depth 0: one node) on a new executor, before any game:
    the backend's first-job costs (imports, tables, a simulator's start) are paid here, and a
    backend that cannot answer is found out at setoption time, not in the middle of a game."""
    from chessaccel.contract.defs import INF
    from chessaccel.model.position import board_from_chess
    from .executors import Job
    batch = executor.submit([Job(board_from_chess(chess.Board()), 0, -INF, INF)])
    deadline = time.monotonic() + WARM_UP_SECONDS
    while batch.results[0] is None:
        if time.monotonic() > deadline:
            batch.cancel()
            raise BackendError(f"no answer to a one-node job in {WARM_UP_SECONDS} s")
        batch.wait(1.0)


def _clock(ms):
    return None if ms is None else max(ms, 0)


def inline_pocl_devices():
    """PoCL's CPU devices for the engine (POCL_DEVICES, read when PoCL first loads): one
    `basic` device per core this process may run on, unless the environment names others. A
    basic device runs a kernel in the thread that queues it, at once (4.8 us a launch against
    105 us for PoCL's threaded device, which hands each launch to its own threads), so the
    compiled search's threads run their jobs themselves, one thread a core (docs/engine.md,
    "Inline launches on PoCL")."""
    import os
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    os.environ.setdefault("POCL_DEVICES", " ".join(["basic"] * max(1, cores or 1)))


def main(argv=None):
    """``chessaccel uci``: serve UCI on stdin/stdout."""
    inline_pocl_devices()
    return UciEngine().run(sys.stdin)

"""``chessaccel match --opponent CMD --games N --tc BASE+INC``: play any UCI engine.

The engine (``chessaccel uci`` on ``--backend``, or any ``--engine CMD``) meets the opponent
through python-chess's engine driver. Games start from a set of openings (engine/openings.py or
``--openings FILE``), each opening played twice with the colours swapped. The runner keeps both
clocks itself: the time from sending ``go`` to reading ``bestmove`` is taken off the mover's
clock (so the pipes and the driver count against the engine, as in any GUI), the increment is
added after the move, and a clock below zero loses on time. Games end by the rules, draws
claimed as a GUI would (threefold repetition, fifty moves), or at ``--max-plies`` (a draw).
An engine that crashes or plays an illegal move loses the game; one that says ``info string
error: ...`` while choosing its move (ours, when no backend can search, still answers with a
legal move) stops the match with that line, since none of its games could stand; so does one
that says it while being set up (ours, when the backend asked for cannot start: it would play
every game on the model backend instead).

After every game: a progress line on stderr, the game appended to the PGN, and the whole record
(games, per-move depth and nodes of our engine, score, Elo with its 95 % error bar) rewritten
to the JSON, so an interrupted match loses at most the game in progress; ``--resume`` goes on
from the JSON. A plot of the running score and Elo is drawn beside it.

``--sprt ELO0,ELO1`` (with ``--alpha``/``--beta``) runs the sequential probability ratio test of
engine/sprt.py after every game and stops as soon as it decides; ``--games`` is then the most.
``--concurrency N`` plays N games at once, each thread with its own pair of engines; games are
recorded in their order all the same (a game finished early waits for those before it), and
no game starts more than 2 N games ahead of the first one not yet recorded, so that an SPRT's
decision leaves at most that many games played for nothing.
Self-play: ``--opponent-engine-option NAME=VALUE`` makes the opponent our own engine with other
options, ``--opponent-commit REV`` our engine as built at another commit (checked out into a
temporary git worktree, run from its src/ and removed at the end).
"""

import datetime
import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import chess
import chess.engine
import chess.pgn

from .elo import estimate
from .openings import OPENINGS, opening_board, read_openings
from .uci import AUTO_HARDWARE_PLIES, DEFAULT_HARDWARE_PLIES, INLINE_HARDWARE_PLIES
from .sprt import Sprt, parse_bounds

__all__ = ["add_arguments", "run", "MatchError", "parse_tc", "parse_option"]

ENGINE_COMMAND = [sys.executable, "-P", "-m", "chessaccel.host.cli", "uci"]
#: Seconds the driver waits for an engine to start and answer uci/isready.
START_TIMEOUT = 120


class MatchError(ValueError):
    """Bad match settings: one line, exit status 2."""


def parse_tc(text):
    """'10+0.1' -> (10.0, 0.1); '60' -> (60.0, 0.0)."""
    base, _, inc = text.partition("+")
    try:
        base, inc = float(base), float(inc or 0)
    except ValueError:
        raise MatchError(f"time control {text!r}: expected BASE+INC in seconds, e.g. 10+0.1") from None
    if base <= 0 or inc < 0:
        raise MatchError(f"time control {text!r}: base must be positive, increment not negative")
    return base, inc


def parse_option(text):
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise MatchError(f"option {text!r}: expected Name=Value")
    return name.strip(), value.strip()


def add_arguments(parser):
    parser.add_argument("--opponent",
                        help="the opponent's command line, e.g. /usr/games/stockfish")
    parser.add_argument("--opponent-option", action="append", default=[], metavar="NAME=VALUE",
                        help="UCI option for the opponent (repeatable)")
    parser.add_argument("--opponent-engine-option", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="self-play: the opponent is our own engine with this UCI option "
                             "(repeatable; not with --opponent)")
    parser.add_argument("--opponent-commit", metavar="REV",
                        help="self-play: the opponent is our engine as built at git commit REV "
                             "(not with --opponent)")
    parser.add_argument("--engine", help="our side's command line (default: chessaccel uci)")
    parser.add_argument("--engine-option", action="append", default=[], metavar="NAME=VALUE",
                        help="UCI option for our side (repeatable)")
    # these three set chessaccel's options: for an --engine command only where given
    parser.add_argument("--backend", help="our engine's Backend (model unless given)")
    parser.add_argument("--accelerators", type=int, help="our engine's Accelerators (1 unless "
                                                         "given)")
    parser.add_argument("--hardware-plies", type=int,
                        help=f"our engine's HardwarePlies ({AUTO_HARDWARE_PLIES} unless given, the "
                             f"engine's auto: {INLINE_HARDWARE_PLIES} with inline launches on "
                             f"PoCL's basic devices, else {DEFAULT_HARDWARE_PLIES})")
    parser.add_argument("--games", type=int, required=True,
                        help="games to play (with --sprt, the most)")
    parser.add_argument("--sprt", metavar="ELO0,ELO1",
                        help="stop once the SPRT decides between ELO0 and ELO1 (logistic Elo)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="the SPRT's false positive rate (default 0.05)")
    parser.add_argument("--beta", type=float, default=0.05,
                        help="the SPRT's false negative rate (default 0.05)")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="games played at once, each with its own engines (default 1)")
    parser.add_argument("--tc", required=True, help="time control BASE+INC seconds, e.g. 10+0.1")
    parser.add_argument("--openings", help="file of FEN/EPD lines or UCI move lists")
    parser.add_argument("--max-plies", type=int, default=400, help="adjudicate a draw after this")
    parser.add_argument("--pgn", help="PGN file (default: beside the JSON)")
    parser.add_argument("--out", help="JSON record (default out/match-NAME.json)")
    parser.add_argument("--name", help="name of this match in file names and the PGN's Event")
    parser.add_argument("--resume", action="store_true", help="go on from the JSON's games")


def _open(command, options, label, env=None):
    extra = {} if env is None else {"env": env}
    try:
        engine = chess.engine.SimpleEngine.popen_uci(command, timeout=START_TIMEOUT,
                                                     stderr=None, **extra)
    except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError,
            TimeoutError) as error:
        raise MatchError(f"{label} {' '.join(command)!r} does not start as a UCI engine: "
                         f"{error}") from None
    try:
        engine.configure(options)
    except (chess.engine.EngineError, ValueError, TypeError) as error:
        engine.quit()
        raise MatchError(f"{label}: {error}") from None
    return engine


def _typed(engine_options, name, value):
    """A --x-option value in the type the engine declares (check/spin options)."""
    option = engine_options.get(name)
    if option is None:
        return value
    if option.type == "check":
        if value.lower() not in ("true", "false"):
            raise MatchError(f"option {name} is a check: true or false, got {value!r}")
        return value.lower() == "true"
    if option.type == "spin":
        try:
            return int(value)
        except ValueError:
            raise MatchError(f"option {name} is a number, got {value!r}") from None
    return value


class _SetUpErrors(logging.Handler):
    """The ``info string error`` lines one engine says outside a search (python-chess logs
    them as unexpected output of its protocol), while it is being set up."""

    def __init__(self, protocol):
        super().__init__(logging.WARNING)
        self.protocol, self.lines = protocol, []

    def emit(self, record):
        args = record.args if isinstance(record.args, tuple) else ()
        if len(args) == 2 and args[0] is self.protocol and isinstance(args[1], str) \
                and args[1].startswith("info string error:"):
            self.lines.append(args[1][len("info string error:"):].strip())


class Side:
    """One engine of the match (restarted after a crash)."""

    def __init__(self, label, command, options, env=None, suffix=""):
        self.label, self.command, self.raw_options = label, command, options
        self.env, self.suffix = env, suffix
        self.engine = None
        self.name = label

    def start(self):
        probe = _open(self.command, {}, self.label, *([self.env] if self.env else []))
        try:
            options = {n: _typed(probe.options, n, v) for n, v in self.raw_options}
            unknown = [n for n in options if n not in probe.options]
            if unknown:
                raise MatchError(f"{self.label} has no option {unknown[0]!r}")
            errors = _SetUpErrors(probe.protocol)
            logger = logging.getLogger("chess.engine")
            logger.addHandler(errors)
            try:
                probe.configure(options)
                probe.ping()    # isready: options that start something (a backend) finish
                #                 first, before any clock runs
            finally:
                logger.removeHandler(errors)
            if errors.lines:
                # e.g. a backend that cannot start: the engine would search on another, and no
                # game of this match could stand for the one asked for
                raise MatchError(f"{self.label} reported an error while being set up: "
                                 f"{errors.lines[0]}; the match stops")
        except chess.engine.EngineTerminatedError as error:
            raise MatchError(f"{self.label} {' '.join(self.command)!r} ended while being set "
                             f"up: {error}") from None
        except (MatchError, chess.engine.EngineError, TimeoutError) as error:
            probe.quit()
            raise MatchError(str(error)) from None
        except BaseException:
            # anything else (a bug, an interrupt): the engine's thread is not a daemon, so an
            # engine left running keeps the whole process from exiting
            try:
                probe.quit()
            except Exception:   # the engine may be gone already
                pass
            raise
        self.engine = probe
        self.name = probe.id.get("name", self.label) + self.suffix

    def stop(self):
        if self.engine is not None:
            try:
                self.engine.quit()
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
                pass
            self.engine = None


def play_game(ours, theirs, start_board, our_colour, base, inc, max_plies, game_id, stop=None):
    """One game; returns (pgn game, record), or (None, None) once the event ``stop`` is set
    (checked before each move)."""
    board = start_board.copy()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    least = {chess.WHITE: base, chess.BLACK: base}
    moves_info = []
    result, termination, loser = None, None, None
    sides = {our_colour: ours, not our_colour: theirs}
    while True:
        if stop is not None and stop.is_set():
            return None, None
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result, termination = outcome.result(), outcome.termination.name.lower()
            break
        if board.ply() - start_board.ply() >= max_plies:
            result, termination = "1/2-1/2", "adjudicated (move limit)"
            break
        mover = board.turn
        side = sides[mover]
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=inc, black_inc=inc)
        started = time.monotonic()
        try:
            played = side.engine.play(board, limit, game=game_id, info=chess.engine.INFO_ALL)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as error:
            result = "0-1" if mover == chess.WHITE else "1-0"
            termination, loser = f"{side.label} failed: {str(error)[:80]}", side
            break
        said = (played.info or {}).get("string") or ""
        if said.startswith("error:"):
            # its move is no search's (our engine plays its first legal move when no backend
            # can search): no game of this match can stand on it
            raise MatchError(f"{side.label} reported an error in game {game_id + 1} at ply "
                             f"{board.ply()}: {said[len('error:'):].strip()}; the match stops "
                             f"(the games recorded so far are kept: --resume goes on from them)")
        used = time.monotonic() - started
        clocks[mover] -= used
        if clocks[mover] < 0:
            result = "0-1" if mover == chess.WHITE else "1-0"
            termination = "time forfeit"
            break
        least[mover] = min(least[mover], clocks[mover])
        clocks[mover] += inc
        if played.move is None or played.move not in board.legal_moves:
            result = "0-1" if mover == chess.WHITE else "1-0"
            termination, loser = f"{side.label} played an illegal move {played.move}", side
            break
        if side is ours:
            info = played.info
            moves_info.append({"ply": board.ply(), "seconds": round(used, 4),
                               "depth": info.get("depth"), "nodes": info.get("nodes"),
                               "score": _score_text(info.get("score"), mover)})
        board.push(played.move)
    game = chess.pgn.Game.from_board(board)
    our_points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
    if our_colour == chess.BLACK:
        our_points = 1.0 - our_points
    record = {
        "game": game_id, "our_colour": "white" if our_colour == chess.WHITE else "black",
        "result": result, "points": our_points, "termination": termination,
        "plies": board.ply() - start_board.ply(),
        "our_least_clock": round(least[our_colour], 3),
        "their_least_clock": round(least[not our_colour], 3),
        "our_time_loss": termination == "time forfeit" and board.turn == our_colour,
        "their_time_loss": termination == "time forfeit" and board.turn != our_colour,
        "our_moves": moves_info,
        "crashed": loser.label if loser else None,
    }
    game.headers["Result"] = result
    game.headers["Termination"] = termination
    return game, record


def _write_json(path, obj):
    """Replace ``path`` at once: an interruption never leaves half a record to resume from."""
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(path + ".tmp", path)


def _score_text(score, mover):
    if score is None:
        return None
    pov = score.pov(mover)
    return f"mate {pov.mate()}" if pov.is_mate() else pov.score()


def _summary(args, games, names, sprt=None):
    wins = sum(g["points"] == 1.0 for g in games)
    draws = sum(g["points"] == 0.5 for g in games)
    losses = sum(g["points"] == 0.0 for g in games)
    elo = estimate(wins, draws, losses)
    depths = [m["depth"] for g in games for m in g["our_moves"] if m["depth"]]
    nodes = [m["nodes"] for g in games for m in g["our_moves"] if m["nodes"]]
    seconds = [m["seconds"] for g in games for m in g["our_moves"]]
    return {
        "name": names["match"], "engine": names["ours"], "opponent": names["theirs"],
        "opponent_options": args.opponent_option, "engine_options": names["our_options"],
        "opponent_settings": names.get("their_options", args.opponent_option),
        "tc": args.tc, "games_planned": args.games, "games": len(games),
        "wins": wins, "draws": draws, "losses": losses, "score": round(elo.score, 4),
        "elo": None if elo.elo is None else round(elo.elo, 1),
        "elo_low": None if elo.low is None else round(elo.low, 1),
        "elo_high": None if elo.high is None else round(elo.high, 1),
        "elo_bound": elo.bound, "elo_text": elo.text(),
        "our_time_losses": sum(g["our_time_loss"] for g in games),
        "their_time_losses": sum(g["their_time_loss"] for g in games),
        "our_least_clock": min((g["our_least_clock"] for g in games), default=None),
        "our_mean_depth": round(sum(depths) / len(depths), 2) if depths else None,
        "our_mean_nodes_per_move": round(sum(nodes) / len(nodes)) if nodes else None,
        "our_nodes_per_second": round(sum(nodes) / sum(seconds)) if seconds and nodes else None,
        **({"sprt": _sprt_summary(sprt, games, args.games)} if sprt is not None else {}),
        "records": games,
    }


def _sprt_of(args):
    if not args.sprt:
        return None
    try:
        elo0, elo1 = parse_bounds(args.sprt)
        return Sprt(elo0, elo1, args.alpha, args.beta)
    except ValueError as error:
        raise MatchError(str(error)) from None


def _sprt_summary(sprt, games, planned):
    """The test's state over ``games`` for the JSON; verdict "inconclusive" once ``planned``
    games are played without a decision, None while the match goes on."""
    wins = sum(g["points"] == 1.0 for g in games)
    draws = sum(g["points"] == 0.5 for g in games)
    state = sprt.state(wins, draws, len(games) - wins - draws)
    verdict = state.verdict or ("inconclusive" if len(games) >= planned else None)
    return {"elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha, "beta": sprt.beta,
            "model": "GSPRT, trinomial (W/D/L), logistic Elo",
            "llr": round(state.llr, 4), "lower": round(state.lower, 4),
            "upper": round(state.upper, 4), "verdict": verdict, "text": state.text()}


def _verdict_line(sprt_summary, games):
    s = sprt_summary
    head = f"SPRT elo0 {s['elo0']:g} elo1 {s['elo1']:g} (alpha {s['alpha']:g}, beta {s['beta']:g})"
    if s["verdict"] in ("H1 accepted", "H0 accepted"):
        return f"{head}: {s['verdict']} after {games} games, {s['text']}"
    if s["verdict"] == "inconclusive":
        return f"{head}: inconclusive at the game limit ({games} games), {s['text']}"
    return f"{head}: undecided after {games} games (interrupted), {s['text']}"


def _threads(options, default=1):
    for name, value in options:
        if name.lower() in ("threads", "accelerators"):
            try:
                return max(int(value), 1)
            except ValueError:
                return default
    return default


class _Checkout:
    """``--opponent-commit REV``: REV checked out into a temporary git worktree (detached),
    removed again on exit."""

    def __init__(self, rev):
        self.rev, self.folder, self.tree, self.top = rev, None, None, None

    def _git(self, *argv, cwd=None):
        return subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True)

    def __enter__(self):
        done = self._git("rev-parse", "--show-toplevel")
        if done.returncode != 0:
            raise MatchError(f"--opponent-commit needs a git checkout: {os.getcwd()} is not "
                             "in one")
        self.top = done.stdout.strip()
        done = self._git("rev-parse", "--verify", "--quiet", f"{self.rev}^{{commit}}",
                         cwd=self.top)
        if done.returncode != 0 or not self.rev.strip():
            raise MatchError(f"--opponent-commit {self.rev!r}: no such commit")
        self.sha = done.stdout.strip()
        self.folder = tempfile.mkdtemp(prefix="chessaccel-match-")
        self.tree = os.path.join(self.folder, "tree")
        done = self._git("worktree", "add", "--detach", self.tree, self.sha, cwd=self.top)
        if done.returncode != 0:
            self.__exit__()
            line = (done.stderr.strip().splitlines() or ["git failed"])[-1]
            raise MatchError(f"--opponent-commit {self.rev!r}: {line}")
        if not os.path.isfile(os.path.join(self.tree, "src", "chessaccel", "host", "cli.py")):
            self.__exit__()
            raise MatchError(f"--opponent-commit {self.rev!r}: commit {self.sha[:12]} predates "
                             "the src/ layout (no src/chessaccel/host/cli.py): not supported")
        try:
            self.prepare()
        except MatchError:
            self.__exit__()
            raise
        return self

    def env(self):
        """The opponent's environment: its src/ first on the path, and the compiled host board
        built into (and taken from) our own build cache, where REV's source is usually ours."""
        from chessaccel.host.engine.hostboard import BUILD_ROOT
        return {**os.environ, "PYTHONPATH": os.path.join(self.tree, "src"),
                "CHESSACCEL_NATIVE_BUILD": os.environ.get("CHESSACCEL_NATIVE_BUILD",
                                                          str(BUILD_ROOT))}

    def prepare(self):
        """REV's compiled host board, built now if no build of its source is in the cache. Run
        from src/, a checkout builds it on first use: before this, inside the opponent's first
        move of game 1 (g++, tens of seconds), which lost that game on time at ply 1 in both
        runs of a 10 s match on 2026-11-29. Commits without a compiled host board pass."""
        code = ("try:\n    from chessaccel.host.engine.hostboard import library\n"
                "except ImportError:\n    raise SystemExit(0)\nlibrary()\n")
        done = subprocess.run([sys.executable, "-P", "-c", code], env=self.env(), cwd=self.tree,
                              capture_output=True, text=True)
        if done.returncode != 0:
            line = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise MatchError(f"--opponent-commit {self.rev!r}: its compiled host board does not "
                             f"build: {line}")

    def __exit__(self, *exc):
        if self.tree is not None and os.path.isdir(self.tree):
            self._git("worktree", "remove", "--force", self.tree, cwd=self.top)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self._git("worktree", "prune", cwd=self.top)
        self.folder = self.tree = None


def run(args):
    base, inc = parse_tc(args.tc)
    if args.games < 1:
        raise MatchError(f"--games must be at least 1, got {args.games}")
    if args.max_plies < 1:
        raise MatchError(f"--max-plies must be at least 1, got {args.max_plies}")
    if args.concurrency < 1:
        raise MatchError(f"--concurrency must be at least 1, got {args.concurrency}")
    sprt = _sprt_of(args)
    self_play = bool(args.opponent_engine_option or args.opponent_commit)
    if args.opponent is not None and self_play:
        raise MatchError("--opponent or a self-play opponent (--opponent-engine-option, "
                         "--opponent-commit), not both")
    if args.opponent is None and not self_play:
        raise MatchError("no opponent: give --opponent CMD, --opponent-engine-option or "
                         "--opponent-commit")
    if args.opponent_commit and args.engine:
        raise MatchError("--opponent-commit plays chessaccel's engine: not with --engine")
    for text in args.opponent_engine_option:      # bad ones before any checkout
        parse_option(text)
    if args.opponent_commit is None:
        return _run(args, base, inc, sprt, None)
    with _Checkout(args.opponent_commit) as checkout:
        return _run(args, base, inc, sprt, checkout)


def engine_settings(args):
    """The options --backend, --accelerators and --hardware-plies set: each with its default
    for chessaccel's own engine; for an --engine command only those given (any engine may be
    one, and one of ours must not silently run on its default backend)."""
    given = (("Backend", args.backend), ("Accelerators", args.accelerators),
             ("HardwarePlies", args.hardware_plies))
    if args.engine:
        return [(name, str(value)) for name, value in given if value is not None]
    defaults = {"Backend": "model", "Accelerators": 1, "HardwarePlies": AUTO_HARDWARE_PLIES}
    return [(name, str(defaults[name] if value is None else value)) for name, value in given]


def _run(args, base, inc, sprt, checkout):
    opponent_options = [parse_option(t) for t in args.opponent_option]
    engine_options = [parse_option(t) for t in args.engine_option]
    self_options = [parse_option(t) for t in args.opponent_engine_option]
    settings = engine_settings(args)
    our_command = shlex.split(args.engine) if args.engine else ENGINE_COMMAND
    engine_options = settings + engine_options
    their_env, suffix, self_play = None, "", bool(self_options)
    if checkout is not None:
        their_command = ENGINE_COMMAND
        their_env, suffix = checkout.env(), f" @{checkout.sha[:12]}"
        opponent_options = settings + self_options + opponent_options
    elif self_play:
        their_command = our_command
        opponent_options = settings + self_options + opponent_options
        suffix = f" [{' '.join(t.strip() for t in args.opponent_engine_option)}]"
    else:
        their_command = shlex.split(args.opponent)
        if not their_command:
            raise MatchError("--opponent is empty")
    opponent_options = list(dict(opponent_options).items())     # the last of a name wins
    if args.openings:
        try:
            openings = read_openings(args.openings)
        except (OSError, ValueError) as error:
            raise MatchError(str(error)) from None
    else:
        openings = [(name, opening_board(moves)) for name, moves in OPENINGS]
    against = (f"commit-{args.opponent_commit}" if checkout is not None
               else "self" if self_play else os.path.basename(their_command[0]))
    match_name = args.name or f"vs-{against}-{args.tc}"
    out = args.out or os.path.join("out", f"match-{match_name}.json")
    pgn_path = args.pgn or os.path.splitext(out)[0] + ".pgn"
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    games, old = [], {}
    if args.resume and os.path.exists(out):
        with open(out) as f:
            old = json.load(f)
        games = old["records"]
    elif os.path.exists(pgn_path):
        os.remove(pgn_path)

    per_game = max(_threads(engine_options), _threads(opponent_options))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if args.concurrency * per_game > (cores or 1):
        print(f"warning: --concurrency {args.concurrency} x {per_game} threads a game is more "
              f"than the {cores} cores here: the engines' clocks will suffer", file=sys.stderr)

    decided = sprt is not None and _sprt_summary(sprt, games, args.games)["verdict"] \
        in ("H1 accepted", "H0 accepted")
    todo = [] if decided else list(range(len(games), args.games))
    first, last = len(games), len(games) + len(todo)     # the workers take from todo
    pairs = []
    try:
        for _ in range(min(args.concurrency, len(todo))):
            pair = (Side("engine", our_command, engine_options),
                    Side("opponent", their_command, opponent_options, their_env, suffix))
            pairs.append(pair)
            for side in pair:
                side.start()
    except BaseException:      # whatever stops a start, no engine started is left running
        for pair in pairs:
            for side in pair:
                side.stop()
        raise
    if pairs:
        names = {"match": match_name, "ours": pairs[0][0].name, "theirs": pairs[0][1].name}
    else:
        names = {"match": match_name, "ours": old.get("engine", "engine"),
                 "theirs": old.get("opponent", "opponent")}
    names["our_options"] = [f"{n}={v}" for n, v in engine_options]
    names["their_options"] = [f"{n}={v}" for n, v in opponent_options]

    def plan(game_id):
        name, start = openings[(game_id // 2) % len(openings)]
        return name, start, chess.WHITE if game_id % 2 == 0 else chess.BLACK

    lock = threading.Condition()
    results, stop = {}, threading.Event()
    # the first game not yet recorded, and how far ahead of it a game may start: workers free
    # far ahead of a long game wait, rather than play games an SPRT may not need
    recording = {"next": first}
    ahead = 2 * args.concurrency

    def worker(ours, theirs):
        while not stop.is_set():
            with lock:
                while todo and todo[0] >= recording["next"] + ahead and not stop.is_set():
                    lock.wait(0.5)
                if not todo or stop.is_set():
                    return
                game_id = todo.pop(0)
            try:
                for side in (ours, theirs):
                    if side.engine is None:
                        side.start()
                _, start, colour = plan(game_id)
                game, record = play_game(ours, theirs, start, colour, base, inc,
                                         args.max_plies, game_id, stop)
                if game is not None and record["crashed"]:
                    (ours if record["crashed"] == "engine" else theirs).stop()
                item = None if game is None else (game, record, ours.name, theirs.name)
            except BaseException as error:      # handed to the main thread, which raises it
                item = error
            with lock:
                if item is not None:
                    results[game_id] = item
                lock.notify_all()
                if isinstance(item, BaseException):
                    return

    threads = [threading.Thread(target=worker, args=pair, daemon=True) for pair in pairs]
    for thread in threads:
        thread.start()
    try:
        for game_id in range(first, last):
            with lock:
                while game_id not in results:
                    failed = [r for r in results.values() if isinstance(r, BaseException)]
                    if failed:
                        raise failed[0]
                    if not any(t.is_alive() for t in threads):
                        break
                    lock.wait(0.5)
                item = results.pop(game_id, None)
                recording["next"] = game_id + 1
                lock.notify_all()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            game, record, our_name, their_name = item
            name, _, our_colour = plan(game_id)
            record["opening"] = name
            games.append(record)
            white, black = (our_name, their_name) if our_colour == chess.WHITE \
                else (their_name, our_name)
            game.headers.update({"Event": match_name, "Site": "chessaccel match",
                                 "Date": datetime.date.today().strftime("%Y.%m.%d"),
                                 "Round": str(game_id + 1), "White": white, "Black": black,
                                 "TimeControl": f"{base:g}+{inc:g}", "Opening": name})
            with open(pgn_path, "a") as f:
                print(game, file=f, end="\n\n")
            summary = _summary(args, games, names, sprt)
            if sprt is not None:
                record["llr"] = summary["sprt"]["llr"]
            _write_json(out, summary)
            colour = record["our_colour"]
            tail = f"  {summary['sprt']['text']}" if sprt is not None else ""
            print(f"game {game_id + 1}/{args.games}: {our_name} ({colour}) {record['result']} "
                  f"[{record['termination']}, {record['plies']} plies]  "
                  f"{summary['elo_text']}{tail}", file=sys.stderr, flush=True)
            if sprt is not None and summary["sprt"]["verdict"] in ("H1 accepted", "H0 accepted"):
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for pair in pairs:
            for side in pair:
                side.stop()
    summary = _summary(args, games, names, sprt)
    _write_json(out, summary)
    plot = os.path.splitext(out)[0] + ".png"
    _plot(summary, plot)
    print(f"{names['ours']} vs {names['theirs']} at {args.tc}: {summary['elo_text']}")
    print(f"time losses: ours {summary['our_time_losses']}, theirs "
          f"{summary['their_time_losses']}; least clock left ours "
          f"{summary['our_least_clock']} s; mean depth {summary['our_mean_depth']}")
    print(f"wrote {out}, {pgn_path} and {plot}")
    if sprt is not None:
        print(_verdict_line(summary["sprt"], len(games)))
    return 0


def _plot(summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    records = summary["records"]
    if not records:
        return
    points, running, elos, lows, highs = 0.0, [], [], [], []
    wins = draws = losses = 0
    for record in records:
        points += record["points"]
        running.append(points / (len(running) + 1))
        wins += record["points"] == 1.0
        draws += record["points"] == 0.5
        losses += record["points"] == 0.0
        e = estimate(wins, draws, losses)
        elos.append(e.elo)
        lows.append(e.low if e.low is not None else e.elo)
        highs.append(e.high if e.high is not None else e.elo)
    games = range(1, len(records) + 1)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    top.plot(games, running)
    top.axhline(0.5, color="grey", linestyle=":")
    top.set_ylabel("score per game")
    # the opponent's settings (a self-play opponent's engine options included), where it has any
    settings = summary.get("opponent_settings") or summary["opponent_options"]
    top.set_title(f"{summary['engine']} vs {summary['opponent']} at {summary['tc']}: "
                  f"{summary['wins']}-{summary['draws']}-{summary['losses']}"
                  + (f"\n({' '.join(settings)})" if settings else ""), fontsize=10)
    bottom.plot(games, elos, label="Elo")
    bottom.fill_between(games, lows, highs, alpha=0.3, label="95 %")
    bottom.set_ylabel("Elo difference")
    bottom.set_xlabel("games")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

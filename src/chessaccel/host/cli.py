"""The ``chessaccel`` command line.

    chessaccel moves  POSITION [--backend B] [--json]
    chessaccel perft  POSITION --depth N [--divide] [--count-mode bulk|make] [--backend B] [--json]
    chessaccel search POSITION [--depth N] [--alpha A] [--beta B] [--evaluation E] [--backend B]
                      [--json]
    chessaccel eval   POSITION | --epd FILE [--evaluation pst|terms] [--backend B] [--json]
    chessaccel compare POSITION [--depth N] [--backends B1,B2,...] [--evaluation E] [--json]
                       [--out FILE]
    chessaccel bench  [--backend B] [--json] [--out FILE] [--plot FILE]
                      [--host [--host-backends B1,B2] [--host-depth D] [--hardware-plies H]
                       [--accelerators N]] [--dispatch [--dispatch-depth D]]
                      (--host and --dispatch: the lab's, lab/benchcli.py, through COMMANDS_GROUP)
    chessaccel board-sim [--cores N] [--threads T] [--clocks-per-bit N] [--boards N]
    chessaccel board info --port PORT
    chessaccel board detect
    chessaccel board program --board NAME [--bitstream FILE] [--flash]
    chessaccel synth --board NAME [--cores N] [--threads T] [--clock MHZ]
    chessaccel uci
    chessaccel epd FILE --nodes N | --movetime MS | --depth D [--backend B] [--accelerators N]
    chessaccel match --opponent CMD [--opponent-option N=V] --games N --tc BASE+INC [--backend B]
                     [--sprt ELO0,ELO1 [--alpha A] [--beta B]] [--concurrency N]
    chessaccel match --opponent-engine-option N=V | --opponent-commit REV --games N --tc BASE+INC
    chessaccel tune data PGN... --out DATA.npz [--skip-plies N]
    chessaccel tune fit DATA.npz --out WEIGHTS.json [--iterations N] [--holdout F] [--seed S]
                        [--prior-sd CP] [--free-signs] [--folds N] [--start WEIGHTS.json]
                        [--plot PNG] [--summary JSON] [--json]

POSITION is a FEN or EPD line (one argument: quote it) or ``startpos``. Bad input of any kind
(malformed FEN/EPD, a position the accelerator cannot hold, a depth or window out of range, an
unknown backend or evaluation, an evaluation the backend lacks) prints one line naming the
problem and exits with status 2.
"""

import argparse
import importlib
import json
import os
import sys
import time

from chessaccel.contract.defs import INF, MAX_DEPTH
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS
from chessaccel.contract.geometry import move_uci
from chessaccel.model.search import mate_distance
from .backends import BackendError, backend_names, get_backend
from .compare import add_arguments as add_compare_arguments, run as run_compare, score_text
from ..contract.bench import BENCH
from ..model.position import PositionError, parse_position

__all__ = ["main"]

STARTPOS = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1
#: The status a shell gives a process killed by SIGPIPE (128 + 13): what `cmd | head` leaves.
EXIT_SIGPIPE = 141


class UsageError(Exception):
    """Bad input: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _depth(text):
    try:
        depth = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"depth must be an integer, got {text!r}") from None
    if not 0 <= depth <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"depth {depth} out of range 0..{MAX_DEPTH}")
    return depth


def _bound(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"window bound must be an integer, got {text!r}") from None
    if not -INF <= value <= INF:
        raise argparse.ArgumentTypeError(f"window bound {value} out of range {-INF}..{INF}")
    return value


#: The entry-point group through which other packages (the lab) join the command line: an entry
#: named after a command adds options to it (or, for a new name, makes that command); its object
#: has ``add_arguments(parser, depth)`` and ``run(args, host)`` (lab/benchcli.py says more).
COMMANDS_GROUP = "chessaccel.commands"
#: The project's own plug-ins, as pyproject.toml declares them in COMMANDS_GROUP: used where the
#: installed metadata lacks them (an editable install made before they were declared). Named
#: here, never imported: where the lab is not installed they are left out.
OWN_PLUGINS = (("bench", "chessaccel.lab.benchcli:bench"),)
_PLUGINS = None


class _Host:
    """What a plug-in's ``run`` gets from the command line."""
    UsageError = UsageError

    def __init__(self, backend, positions, emit):
        self.backend, self.positions, self.emit = backend, positions, emit


def _plugins():
    """{command: [plug-in object]} from COMMANDS_GROUP and OWN_PLUGINS, each loaded once."""
    global _PLUGINS
    if _PLUGINS is None:
        from importlib.metadata import EntryPoint, entry_points
        found = list(entry_points(group=COMMANDS_GROUP))
        values = {ep.value for ep in found}
        found += [EntryPoint(name, value, COMMANDS_GROUP) for name, value in OWN_PLUGINS
                  if value not in values]
        plugins = {}
        for ep in found:
            try:
                plugin = ep.load()
            except ModuleNotFoundError as e:
                if e.name and (ep.module + ".").startswith(e.name + "."):
                    continue        # a plug-in whose package is not installed
                raise
            plugins.setdefault(ep.name, []).append(plugin)
        _PLUGINS = plugins
    return _PLUGINS


def _add_plugins(command, parser):
    for plugin in _plugins().get(command, ()):
        plugin.add_arguments(parser, _depth)


def _add_board_commands(parser):
    """`board info` (host/boardcli.py), `board detect` and `board program` (host/boardprog.py,
    through openFPGALoader)."""
    from .boardcli import add_board_info_arguments
    from .boardprog import add_detect_arguments, add_program_arguments
    board_sub = parser.add_subparsers(dest="board_command", required=True, parser_class=_Parser)
    add_board_info_arguments(board_sub.add_parser("info", help="print what the board reports"))
    add_detect_arguments(board_sub.add_parser(
        "detect", help="list the cables and boards openFPGALoader sees"))
    add_program_arguments(board_sub.add_parser(
        "program", help="load a bitstream (default: the newest `chessaccel synth --board` build) "
                        "into a board through openFPGALoader"))


#: The commands whose options come from a module of their own, imported only when the command
#: runs (or for the whole help): (command, help, module or None, function, the keyword
#: arguments it takes after the command's parser). host/boardcli.py starts no simulator and
#: synth/board.py no tool when imported; numpy comes with host/tunecli.py.
_MODULE_COMMANDS = (
    ("board-sim", "serve the simulated board (Verilator) on a pseudo-terminal",
     ".boardcli", "add_board_sim_arguments", {}),
    ("board", "talk to a board (real or simulated) over its serial port; find and program real "
              "boards (openFPGALoader)", __name__, "_add_board_commands", {}),
    ("synth", "build a bitstream for a real board (never programmed; see docs/synthesis.md)",
     "chessaccel.synth.board", "add_board_arguments", {"board_positional": False}),
    ("uci", "serve the UCI protocol on stdin/stdout (play from a GUI)", None, None, {}),
    ("epd", "run an EPD test suite (bm, am, dm) with the engine",
     ".engine.epd", "add_arguments", {"depth_type": _depth}),
    ("match", "play a UCI engine: PGN, score and Elo", ".engine.match", "add_arguments", {}),
    ("tune", "fit the terms evaluation's weights to the results of games (Texel's method)",
     ".tunecli", "add_arguments", {"parser_class": _Parser}),
)


#: The commands cli.py defines itself (plug-ins may add others).
COMMAND_NAMES = ("moves", "perft", "search", "eval", "compare", "bench",
                 *(command[0] for command in _MODULE_COMMANDS))


def _command_of(argv):
    """The command ``argv`` names, if it is one of COMMAND_NAMES (its first word that is no
    option)."""
    words = [word for word in argv if not word.startswith("-")]
    return words[0] if words and words[0] in COMMAND_NAMES else None


def _parser(only=None):
    """The whole command line; with ``only`` (one of COMMAND_NAMES) the other commands are named but
    get no options: their modules (the engine's tools, synthesis, tuning, plug-ins) stay
    unimported: ``chessaccel uci``, which a GUI or a match starts for every engine, starts in 0.9 s
    instead of 1.5."""
    def wanted(name):
        return only is None or only == name

    p = _Parser(prog="chessaccel",
                description="A Hydra-style chess search accelerator, its model and its host.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sp, position=True):
        if position:
            sp.add_argument("position", help="FEN or EPD line (quoted), or 'startpos'")
        sp.add_argument("--backend", default="model",
                        help=f"where the work runs: {', '.join(backend_names())} (default: model)")
        sp.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    sp = sub.add_parser("moves", help="legal moves in the accelerator's generation order")
    common(sp)
    sp = sub.add_parser("perft", help="count leaf nodes of the legal move tree")
    common(sp)
    sp.add_argument("--depth", type=_depth, required=True, help=f"plies, 0..{MAX_DEPTH}")
    sp.add_argument("--divide", action="store_true", help="also count below each root move")
    sp.add_argument("--count-mode", choices=("bulk", "make"),
                    help="opencl: bulk-count the last ply (default) or make every leaf as the "
                         "accelerator does; other backends always make every leaf")
    sp = sub.add_parser("search", help="alpha-beta search plus quiescence")
    common(sp)
    sp.add_argument("--depth", type=_depth, default=4, help=f"plies, 0..{MAX_DEPTH} (default 4)")
    sp.add_argument("--alpha", type=_bound, default=-INF, help=f"window low bound (default {-INF})")
    sp.add_argument("--beta", type=_bound, default=INF, help=f"window high bound (default {INF})")
    sp.add_argument("--evaluation", default=DEFAULT_EVALUATION, metavar="NAME",
                    help=f"static evaluation: {' or '.join(EVALUATIONS)} "
                         f"(default {DEFAULT_EVALUATION})")
    sp = sub.add_parser("eval", help="the static evaluation of a position and each term's part")
    if wanted("eval"):
        from .evalcli import add_arguments as add_eval_arguments
        add_eval_arguments(sp, common)
    sp = sub.add_parser("compare", help="search one position on several backends side by side: "
                                        "the same score, move and nodes, and each one's speed")
    add_compare_arguments(sp, _depth)
    sp = sub.add_parser("bench", help="search the bench set; print nodes, time and signature")
    common(sp, position=False)
    sp.add_argument("--out", help="JSON file to write (default out/bench-BACKEND.json)")
    sp.add_argument("--plot", help="PNG to draw (default: beside the JSON)")
    # plug-ins' options: the lab's --host and --dispatch (lab/benchcli.py)
    if wanted("bench"):
        _add_plugins("bench", sp)
    for name, text, module, function, extra in _MODULE_COMMANDS:
        sp = sub.add_parser(name, help=text)
        if module and wanted(name):
            getattr(importlib.import_module(module, __package__), function)(sp, **extra)
    # plug-ins that make commands of their own
    if only is None:
        for name, plugins in _plugins().items():
            if name not in sub.choices:
                sp = sub.add_parser(name, help=plugins[0].help)
                for plugin in plugins:
                    plugin.add_arguments(sp, _depth)
    return p


def _board(text):
    if text.strip() == "startpos":
        text = STARTPOS
    board, _ops = parse_position(text)
    return board


def _progress(line):
    """A backend's start-up progress (a simulated board's build): one line on stderr."""
    print(line, file=sys.stderr, flush=True)


def _uci(move):
    return move_uci(move) if move else None


def _emit(args, obj, lines):
    if getattr(args, "json", False):     # a plug-in's command may have no --json
        print(json.dumps(obj))
    else:
        for line in lines:
            print(line)


def cmd_moves(args, backend):
    moves = [_uci(m) for m in backend.moves(_board(args.position))]
    _emit(args, {"moves": moves}, [" ".join(moves) if moves else "(no legal moves)"])


def cmd_perft(args, backend):
    board = _board(args.position)
    modes = backend.count_modes
    if args.count_mode is not None and args.count_mode not in modes:
        raise UsageError(f"--count-mode {args.count_mode} needs the opencl backend "
                         f"({args.backend} makes every leaf)")
    extra = {"count_mode": args.count_mode} if args.count_mode and len(modes) > 1 else {}
    t0 = time.perf_counter()
    r = backend.perft(board, args.depth, args.divide, **extra)
    seconds = time.perf_counter() - t0
    obj = {"nodes": r["nodes"], "cycles": r["cycles"], "seconds": round(seconds, 6)}
    if extra:
        obj["count_mode"] = args.count_mode
    lines = []
    if r["divide"] is not None:
        obj["divide"] = {_uci(m): n for m, n in r["divide"].items()}
        lines += [f"{m}: {n}" for m, n in obj["divide"].items()] + [""]
    cycles = f"  cycles {r['cycles']}" if r["cycles"] is not None else ""
    lines.append(f"perft {args.depth}: nodes {r['nodes']}{cycles}  ({seconds:.3f} s)")
    _emit(args, obj, lines)


def cmd_search(args, backend):
    if args.alpha >= args.beta:
        raise UsageError(f"empty window: alpha {args.alpha} must be below beta {args.beta}")
    board = _board(args.position)
    t0 = time.perf_counter()
    r = backend.search(board, args.depth, args.alpha, args.beta)
    seconds = time.perf_counter() - t0
    mate = mate_distance(r["score"])
    obj = {"score": r["score"], "mate": mate, "best_move": _uci(r["best_move"]),
           "pv": [_uci(m) for m in r["pv"]], "nodes": r["nodes"], "cycles": r["cycles"],
           "depth": args.depth, "seconds": round(seconds, 6)}
    score = score_text(r["score"])
    cycles = f"  cycles {r['cycles']}" if r["cycles"] is not None else ""
    _emit(args, obj, [
        f"bestmove {obj['best_move'] or '(none)'}  score {score}  depth {args.depth}",
        f"pv {' '.join(obj['pv'])}",
        f"nodes {r['nodes']}{cycles}  ({seconds:.3f} s)",
    ])


def cmd_bench(args, backend):
    for plugin in _plugins().get("bench", ()):
        status = plugin.run(args, _Host(backend, BENCH, lambda obj, lines: _emit(args, obj, lines)))
        if status is not None:
            return status
    jobs = [(_board(job.fen), job.depth, -INF, INF) for job in BENCH]
    progress = sys.stderr if not args.json else None
    t0 = time.perf_counter()
    results, times = [], []
    for job, spec in zip(BENCH, jobs):
        t = time.perf_counter()
        r = backend.search(*spec)
        times.append(time.perf_counter() - t)
        results.append(r)
        if progress:
            print(f"  {job.name:12s} depth {job.depth}  nodes {r['nodes']:7d}  "
                  f"score {r['score']:6d}  {times[-1]:.2f} s", file=progress)
    seconds = time.perf_counter() - t0
    nodes = sum(r["nodes"] for r in results)
    has_cycles = all(r["cycles"] is not None for r in results)
    cycles = sum(r["cycles"] for r in results) if has_cycles else None
    positions = [{"name": job.name, "fen": job.fen, "depth": job.depth, "nodes": r["nodes"],
                  "score": r["score"], "best_move": _uci(r["best_move"]), "cycles": r["cycles"],
                  "cycles_per_node": (r["cycles"] / r["nodes"]) if has_cycles else None,
                  "seconds": round(t, 6)}
                 for job, r, t in zip(BENCH, results, times)]
    obj = {"backend": args.backend, "nodes": nodes, "seconds": round(seconds, 6),
           **({"device": device} if (device := backend.describe()) is not None else {}),
           "nps": round(nodes / seconds, 1) if seconds else None, "signature": nodes,
           "cycles": cycles, "cycles_per_node": (cycles / nodes) if has_cycles else None,
           "positions": positions}
    out = args.out or os.path.join("out", f"bench-{args.backend.replace(':', '_').replace('/', '_')}.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(obj, f, indent=2)
    plot = args.plot or os.path.splitext(out)[0] + ".png"
    _plot_bench(obj, plot)
    cpn = f"  cycles/node {obj['cycles_per_node']:.2f}" if has_cycles else ""
    _emit(args, obj, [
        f"bench ({args.backend}): nodes {nodes}  {seconds:.2f} s  {obj['nps']:.0f} nodes/s{cpn}",
        f"signature {nodes}",
        f"wrote {out} and {plot}",
    ])


def _plot_bench(obj, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [p["name"] for p in obj["positions"]]
    fig, ax = plt.subplots(figsize=(8, 4))
    if obj["cycles_per_node"] is not None:
        values = [p["cycles_per_node"] for p in obj["positions"]]
        ax.bar(names, values)
        ax.axhline(5, color="green", linestyle="--", label="target 5")
        ax.axhline(9, color="red", linestyle=":", label="Hydra 9")
        ax.set_ylabel("cycles per node")
        ax.legend()
    else:
        ax.bar(names, [p["nodes"] for p in obj["positions"]])
        ax.set_ylabel("nodes")
    ax.set_title(f"bench on {obj['backend']}: {obj['nodes']} nodes")
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def cmd_eval(args, backend):
    from .evalcli import run as run_eval
    return run_eval(args, backend, _board, lambda obj, lines: _emit(args, obj, lines), UsageError)


COMMANDS = {"moves": cmd_moves, "perft": cmd_perft, "search": cmd_search, "bench": cmd_bench,
            "eval": cmd_eval}


def main(argv=None):
    try:
        argv = sys.argv[1:] if argv is None else argv
        args = _parser(_command_of(argv)).parse_args(argv)
        if args.command == "board-sim":
            from .boardcli import board_sim_main
            return board_sim_main(args)
        if args.command == "board":
            if args.board_command in ("detect", "program"):
                from .boardprog import detect_main, program_main
                return (detect_main if args.board_command == "detect" else program_main)(args)
            from .boardcli import board_info_main
            return board_info_main(args)
        if args.command == "synth":
            from chessaccel.synth.board import run_board_command
            return run_board_command(args)
        if args.command == "uci":
            from .engine.uci import main as uci_main
            return uci_main()
        if args.command == "epd":
            from .engine.epd import EpdError, run as run_epd
            try:
                return run_epd(args)
            except EpdError as e:
                raise UsageError(str(e)) from None
        if args.command == "compare":
            fen = STARTPOS if args.position.strip() == "startpos" else args.position.strip()
            try:
                return run_compare(args, _board(args.position), fen,
                                   lambda spec: get_backend(spec, log=_progress,
                                                            evaluation=args.evaluation),
                                   lambda obj, lines: _emit(args, obj, lines))
            except ValueError as e:
                raise UsageError(str(e)) from None
        if args.command == "tune":
            from .tunecli import run as run_tune
            return run_tune(args, lambda obj, lines: _emit(args, obj, lines), UsageError,
                            argv if argv is not None else sys.argv[1:])
        if args.command == "match":
            from .engine.match import MatchError, run as run_match
            try:
                return run_match(args)
            except MatchError as e:
                raise UsageError(str(e)) from None
        if args.command not in COMMANDS:     # a plug-in's own command
            host = _Host(None, BENCH, lambda obj, lines: _emit(args, obj, lines))
            for plugin in _plugins()[args.command]:
                status = plugin.run(args, host)
                if status is not None:
                    return status
            return 0
        try:
            backend = get_backend(args.backend, log=_progress,
                                  evaluation=getattr(args, "evaluation", DEFAULT_EVALUATION))
        except BackendError as e:
            raise UsageError(str(e)) from None
        try:
            status = COMMANDS[args.command](args, backend)
        finally:
            backend.close()
        if status:
            return status
    except (UsageError, PositionError) as e:
        print(f"chessaccel: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BackendError as e:
        print(f"chessaccel: error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("chessaccel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`chessaccel eval ... | head`): stop quietly as a Unix tool
        # does on SIGPIPE, and keep Python from complaining about stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_SIGPIPE
    return 0


if __name__ == "__main__":
    sys.exit(main())

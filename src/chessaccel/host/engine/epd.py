"""``chessaccel epd FILE --nodes N | --movetime MS | --depth D``: run a test suite.

Each line of an EPD file is a position with operations; the engine searches it with the given
limit on the given backend and the line counts as solved when its move is one of the ``bm``
moves, none of the ``am`` moves, and, for ``dm N``, a mate in exactly N is announced (every
operation present must hold). ``dm -N`` (the side to move is mated in N) wants that announced
too; ``dm 0`` (tablebase suites' draw) wants no mate announced at all. A progress bar goes to stderr; each position's record is
appended to ``OUT.jsonl`` as soon as it is known (a long run interrupted loses nothing, and
``--resume`` goes on from there); at the end the summary and every record go to ``OUT`` (JSON)
and a chart beside it (PNG).

A malformed line, a line with no ``bm``, ``am`` or ``dm``, or a missing file is bad input: one
line naming FILE:LINE, exit status 2, before anything is searched.
"""

import json
import os
import sys
import time
from dataclasses import dataclass

import chess

from chessaccel.model.position import PositionError, chess_from_board, parse_position
from .executors import make_executor
from .search import HostSearch, Limits, SearchOptions
from .tt import TranspositionTable

__all__ = ["EpdPosition", "read_suite", "add_arguments", "run", "EpdError"]

_BLANKS = "\x00\r\n\t "


class EpdError(ValueError):
    """The suite cannot be read: one line naming the file and line."""


@dataclass
class EpdPosition:
    line: int
    ident: str
    board: chess.Board
    best: list      # bm moves (chess.Move)
    avoid: list     # am moves
    mate: int       # dm: mate in this many moves (negative: mated; 0: no mate), or None

    def expected(self):
        out = {}
        if self.best:
            out["bm"] = [self.board.san(m) for m in self.best]
        if self.avoid:
            out["am"] = [self.board.san(m) for m in self.avoid]
        if self.mate is not None:
            out["dm"] = self.mate
        return out

    def solved_by(self, move, mate):
        if move is None:
            return False
        if self.best and move not in self.best:
            return False
        if self.avoid and move in self.avoid:
            return False
        if self.mate is not None and mate != (self.mate or None):
            return False
        return True


def read_suite(path):
    """The positions of an EPD file, checked: EpdError on the first bad line."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except OSError as error:
        raise EpdError(f"{path}: {error.strerror or error}") from None
    positions = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip(_BLANKS)
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        try:
            board, ops = parse_position(line)
        except PositionError as error:
            raise EpdError(f"{where}: {error}") from None
        if "comment" in ops:
            raise EpdError(f"{where}: cannot read the EPD operations {ops['comment'][:60]!r}")
        best, avoid, mate = ops.get("bm", []), ops.get("am", []), ops.get("dm")
        if not best and not avoid and mate is None:
            raise EpdError(f"{where}: no bm, am or dm operation to score the position by")
        if mate is not None and not isinstance(mate, int):
            raise EpdError(f"{where}: dm must be a whole number of moves, got {mate!r}")
        cb = chess_from_board(board)
        for move in best + avoid:
            if not isinstance(move, chess.Move) or not cb.is_legal(move):
                raise EpdError(f"{where}: bm/am move {move} is not legal here")
        ident = ops.get("id")
        positions.append(EpdPosition(number, str(ident) if ident else f"line{number}", cb,
                                     list(best), list(avoid), mate))
    if not positions:
        raise EpdError(f"{path}: no positions")
    return positions


def add_arguments(parser, depth_type):
    parser.add_argument("file", help="EPD suite (bm, am, dm operations)")
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--nodes", type=_positive("nodes"), help="nodes per position")
    limit.add_argument("--movetime", type=_positive("movetime"), help="milliseconds per position")
    limit.add_argument("--depth", type=_positive("depth"), help="plies per position")
    parser.add_argument("--backend", default="model", help="where the leaf jobs run (default model)")
    parser.add_argument("--accelerators", type=_positive("accelerators"), default=1,
                        help="model worker processes / simulated board cores (default 1)")
    parser.add_argument("--hardware-plies", type=depth_type, default=3,
                        help="plies each job searches above quiescence (default 3)")
    parser.add_argument("--hash", type=_positive("hash"), default=16, help="table MiB (default 16)")
    parser.add_argument("--first", type=_positive("first"), help="only the first N positions")
    parser.add_argument("--out", help="JSON to write (default out/epd-NAME-LIMIT.json)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the records already in OUT.jsonl and search the rest")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def _positive(name):
    import argparse

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be at least 1, got {value}")
        return value
    return parse


def _limit_text(args):
    if args.nodes:
        return f"nodes{args.nodes}"
    if args.movetime:
        return f"movetime{args.movetime}"
    return f"depth{args.depth}"


def _limits(args):
    if args.nodes:
        return Limits(nodes=args.nodes)
    if args.depth:
        return Limits(depth=args.depth)
    start = time.monotonic()
    return Limits(deadline=start + args.movetime / 1000, soft_deadline=start + args.movetime / 1000)


class Progress:
    """A one-line bar on a terminal, a line per position otherwise."""

    def __init__(self, total, stream=None):
        self.total, self.stream = total, stream or sys.stderr
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def show(self, done, solved, record):
        width = 30
        filled = width * done // self.total
        mark = "solved" if record["solved"] else "missed"
        text = (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} solved {solved}  "
                f"{record['id']}: {record['san'] or '-'} {mark}")
        if self.tty:
            self.stream.write("\r" + text[:120].ljust(120))
            if done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def search_position(position, executor, args, table):
    table.clear()
    options = SearchOptions(hardware_plies=args.hardware_plies)
    result = HostSearch(executor, table, options).search(position.board, _limits(args))
    if result.error:
        from chessaccel.host.backends import BackendError
        raise BackendError(result.error)
    move = result.best_move
    return {
        "line": position.line, "id": position.ident, "fen": position.board.fen(),
        "expected": position.expected(),
        "move": move.uci() if move else None,
        "san": position.board.san(move) if move else None,
        "solved": position.solved_by(move, result.mate),
        "score": result.score, "mate": result.mate, "depth": result.depth,
        "seldepth": result.seldepth, "nodes": result.nodes, "host_nodes": result.host_nodes,
        "accelerator_nodes": result.accelerator_nodes, "jobs": result.jobs,
        "seconds": round(result.seconds, 4), "pv": [m.uci() for m in result.pv],
    }


def _load_done(path):
    done = {}
    if os.path.exists(path):
        with open(path) as f:
            for text in f:
                try:
                    record = json.loads(text)
                except ValueError:
                    continue        # a line cut short by an interruption
                done[record["line"]] = record
    return done


def run(args):
    """The ``epd`` command: returns the exit status (the CLI maps errors)."""
    positions = read_suite(args.file)
    if args.first:
        positions = positions[:args.first]
    name = os.path.splitext(os.path.basename(args.file))[0]
    out = args.out or os.path.join("out", f"epd-{name}-{_limit_text(args)}.json")
    progress_path = os.path.splitext(out)[0] + ".jsonl"
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    done = _load_done(progress_path) if args.resume else {}
    if not args.resume and os.path.exists(progress_path):
        os.remove(progress_path)
    executor = make_executor(args.backend, args.accelerators)
    table = TranspositionTable(args.hash)
    bar = Progress(len(positions))
    records = []
    start = time.monotonic()
    try:
        with open(progress_path, "a") as progress:
            for position in positions:
                record = done.get(position.line)
                if record is None:
                    record = search_position(position, executor, args, table)
                    progress.write(json.dumps(record) + "\n")
                    progress.flush()
                records.append(record)
                bar.show(len(records), sum(r["solved"] for r in records), record)
    finally:
        executor.close()
    solved = sum(r["solved"] for r in records)
    summary = {
        "file": args.file, "backend": args.backend, "accelerators": args.accelerators,
        "hardware_plies": args.hardware_plies, "limit": _limit_text(args),
        "solved": solved, "total": len(records),
        "nodes": sum(r["nodes"] for r in records),
        "seconds": round(sum(r["seconds"] for r in records), 3),
        "wall_seconds": round(time.monotonic() - start, 3),
        "resumed": len([p for p in positions if p.line in done]),
        "positions": records,
    }
    with open(out + ".tmp", "w") as f:
        json.dump(summary, f, indent=1)
    os.replace(out + ".tmp", out)
    plot = os.path.splitext(out)[0] + ".png"
    _plot(summary, plot)
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"solved {solved}/{len(records)} ({100 * solved / len(records):.1f}%)  "
              f"{args.backend}, {_limit_text(args)}, {summary['seconds']:.1f} s searching")
        print(f"wrote {out}, {progress_path} and {plot}")
    return 0


def _plot(summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    records = summary["positions"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    solved = 0
    curve = []
    for record in records:
        solved += record["solved"]
        curve.append(solved)
    top.plot(range(1, len(records) + 1), curve)
    top.set_ylabel("solved so far")
    top.set_title(f"{os.path.basename(summary['file'])}: {summary['solved']}/{summary['total']} "
                  f"on {summary['backend']} ({summary['limit']})")
    colours = ["tab:green" if r["solved"] else "tab:red" for r in records]
    bottom.bar(range(1, len(records) + 1), [r["depth"] for r in records], color=colours, width=1.0)
    bottom.set_ylabel("depth reached")
    bottom.set_xlabel("position (green: solved)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

"""``chessaccel compare``: one position searched by several implementations of the contract.

The model, the RTL core and the OpenCL kernels implement one search (docs/semantics.md); this
command runs the same job on each, side by side, and says whether they agree on the score, the
best move and the node count (the contract's promise), with each one's time and nodes per second.
Opening a backend (a Verilator or OpenCL build on first use, brought about by a depth-0 search)
is timed apart from its search.

Exit status: 0 when every backend agrees, 1 when one differs or fails (the table says which and
how), 2 for bad input.
"""

import json
import os
import sys
import time

from chessaccel.contract.defs import INF
from chessaccel.contract.errors import first_line
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS
from chessaccel.contract.geometry import move_uci
from chessaccel.model.search import mate_distance

__all__ = ["DEFAULT_BACKENDS", "add_arguments", "compare", "run", "score_text"]

DEFAULT_BACKENDS = "model,rtl,opencl"


def add_arguments(parser, depth_type):
    parser.add_argument("position", help="FEN or EPD line (quoted), or 'startpos'")
    parser.add_argument("--depth", type=depth_type, default=4, help="plies before quiescence (default 4)")
    parser.add_argument("--backends", default=DEFAULT_BACKENDS,
                        help=f"comma-separated backends to compare (default: {DEFAULT_BACKENDS})")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--out", help="also write the JSON record to this file")
    parser.add_argument("--evaluation", default=DEFAULT_EVALUATION, metavar="NAME",
                        help=f"static evaluation of every backend: {' or '.join(EVALUATIONS)} "
                             f"(default {DEFAULT_EVALUATION})")


def _uci(move):
    return move_uci(move) if move is not None else None


def compare(board, depth, specs, open_backend, progress=None):
    """Search ``board`` to ``depth`` on each backend of ``specs`` (opened by ``open_backend``);
    returns one row per backend: its result, or the one-line error that stopped it."""
    rows = []
    for spec in specs:
        if progress:
            print(f"  {spec}: opening (a first run builds it: a minute or two) ...", file=progress,
                  flush=True)
        row = {"backend": spec}
        t0 = time.perf_counter()
        backend = None
        try:
            backend = open_backend(spec)
            # a first search builds what the backend builds lazily (a Verilator model, an
            # OpenCL program): timed with the opening, not with the search
            backend.search(board.copy(), 0, -INF, INF)
            row["open_seconds"] = round(time.perf_counter() - t0, 3)
            t1 = time.perf_counter()
            result = backend.search(board.copy(), depth, -INF, INF)
            seconds = time.perf_counter() - t1
        except Exception as error:          # one failing backend must not hide the others
            row["error"] = first_line(error)
            rows.append(row)
            continue
        finally:
            if backend is not None:
                backend.close()
        row.update(score=result.score, best_move=_uci(result.best_move), nodes=result.nodes,
                   cycles=result.cycles, seconds=round(seconds, 6),
                   nps=round(result.nodes / seconds) if seconds > 0 else None)
        if progress:
            print(f"  {spec}: searched in {seconds:.3f} s", file=progress, flush=True)
        rows.append(row)
    return rows


def _verdict(rows):
    """None when every row agrees with the first; else a line saying what differs."""
    done = [row for row in rows if "error" not in row]
    failed = [row for row in rows if "error" in row]
    if failed:
        return "; ".join(f"{row['backend']} failed: {row['error']}" for row in failed)
    reference = done[0]
    differences = []
    for row in done[1:]:
        for key in ("score", "best_move", "nodes"):
            if row[key] != reference[key]:
                differences.append(f"{row['backend']} {key} {row[key]} != "
                                   f"{reference['backend']} {reference[key]}")
    return "; ".join(differences) or None


def score_text(score):
    """``mate N`` for a mate score, ``cp N`` for the others (as ``chessaccel search`` prints)."""
    mate = mate_distance(score)
    return f"mate {mate}" if mate is not None else f"cp {score}"


def _table(rows):
    header = ("backend", "score", "move", "nodes", "cycles", "open s", "search s", "nodes/s")
    lines = [header]
    for row in rows:
        if "error" in row:
            lines.append((row["backend"], "-", "-", "-", "-", "-", "-", "failed"))
            continue
        lines.append((row["backend"], score_text(row["score"]), row["best_move"] or "(none)",
                      str(row["nodes"]), str(row["cycles"]) if row["cycles"] is not None else "-",
                      f"{row['open_seconds']:.2f}", f"{row['seconds']:.3f}",
                      f"{row['nps']:,}" if row["nps"] is not None else "-"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return ["  ".join(cell.rjust(width) if i else cell.ljust(width)
                      for i, (cell, width) in enumerate(zip(line, widths))) for line in lines]


def run(args, board, fen, open_backend, emit):
    """The ``compare`` command: returns its exit status."""
    specs = [spec.strip() for spec in args.backends.split(",") if spec.strip()]
    if not specs:
        raise ValueError("--backends names no backend")
    rows = compare(board, args.depth, specs, open_backend,
                   progress=None if args.json else sys.stderr)
    verdict = _verdict(rows)
    obj = {"position": fen, "depth": args.depth, "evaluation": args.evaluation, "backends": rows,
           "agree": verdict is None, **({"difference": verdict} if verdict else {})}
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(obj, f, indent=2)
    first = next((row for row in rows if "error" not in row), None)
    summary = (f"agree: score {score_text(first['score'])}, best move {first['best_move']}, "
               f"{first['nodes']} nodes on all {len(rows)}" if verdict is None
               else f"DISAGREE: {verdict}")
    emit(obj, [f"{fen}  depth {args.depth}", *_table(rows), summary])
    return 0 if verdict is None else 1

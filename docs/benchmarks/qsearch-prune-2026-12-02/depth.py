"""Time and nodes to a fixed depth: the compiled search with the engine's selective steps and the
terms evaluation, one thread on one of PoCL's basic devices (inline launches, `HardwarePlies` 1:
what `chessaccel uci` runs on one core), over middlegame positions of the 2-core record against
stockfish 2200 (the positions after plies 25 and 41 of its first games). Prints seconds, nodes,
nodes a second and launches; a change that keeps the tree keeps the nodes. Run from the
repository root of the tree to measure (or with PYTHONPATH at its src/), the machine otherwise
idle:

    python docs/benchmarks/qsearch-prune-2026-12-02/depth.py [DEPTH] [POSITIONS]
"""
import os
import sys
import time

os.environ["POCL_DEVICES"] = "basic"

import chess  # noqa: E402
import chess.pgn  # noqa: E402

from chessaccel.host.backends import get_backend  # noqa: E402
from chessaccel.host.engine.executors import BatchExecutor  # noqa: E402
from chessaccel.host.engine.hostsearch import CompiledSearch  # noqa: E402
from chessaccel.host.engine.search import Limits, SearchOptions  # noqa: E402
from chessaccel.host.engine.uci import DEFAULT_SELECTIVE, SELECTIVE_OPTIONS  # noqa: E402

RECORD = os.path.join(os.path.dirname(__file__), "..", "engine-pocl-2026-12-02", "sf2200-zen5.pgn")


def positions(count):
    out = []
    with open(RECORD) as pgn:
        while len(out) < count:
            game = chess.pgn.read_game(pgn)
            if game is None:
                break
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                board.push(move)
                if ply in (24, 40):
                    out.append(board.fen())
    return out[:count]


depth = int(sys.argv[1]) if len(sys.argv) > 1 else 11
count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
steps = {SELECTIVE_OPTIONS[name]: True for name in DEFAULT_SELECTIVE}
backend = get_backend("opencl", evaluation="terms")
backend.open()
executor = BatchExecutor(backend)
seconds = nodes = launches = 0
try:
    for fen in positions(count):
        search = CompiledSearch(executor, 64, SearchOptions(
            hardware_plies=1, threads=1, evaluation="terms", **steps))
        try:
            start = time.monotonic()
            result = search.search(chess.Board(fen), Limits(depth=depth))
            seconds += time.monotonic() - start
            nodes += result.nodes
            launches += search.launches
        finally:
            search.close()
finally:
    executor.close()
print(f"{count} positions to depth {depth}: {seconds:.2f} s, {nodes} nodes, "
      f"{nodes / seconds / 1e6:.2f} M nodes/s, {launches} launches")

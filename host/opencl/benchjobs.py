"""The job file the OpenCL benchmarks run: real leaf jobs and the perft roots, packed.

Leaf jobs: every position three plies below each position of the bench set (host/bench.py),
reached by the contract's legal moves, searched to depth 3 with the full window: the last plies
of a 6-ply search whose top 3 plies the host searches, as the accelerator would be handed them
(about 350,000 jobs). Perft roots: the start position and Kiwipete.

A check sample (every CHECK_STRIDE-th job) carries its expected score, best move and node
count, computed by the OpenCL backend on the device at hand (PoCL here); a sub-sample of those
is first compared with the Python model, so the file's expectations are the contract's. The
device runner (gpubench) compares every sampled job on the GPU with them.

    python -m chessaccel.host.opencl.benchjobs out/opencl/jobs.npz

The file is a numpy .npz (positions in the kernels' layout, so the device needs neither
python-chess nor the model to run it).
"""

import argparse
import sys
import time

import numpy as np

from chessaccel.defs import INF
from chessaccel.host.bench import BENCH
from chessaccel.host.position import parse_position
from chessaccel.sim.model.movegen import legal_moves
from chessaccel.sim.model.search import search as model_search
from .layout import pack_positions

__all__ = ["leaf_boards", "PERFT_ROOTS", "LEAF_PLIES", "LEAF_DEPTH", "CHECK_STRIDE", "build"]

LEAF_PLIES = 3
LEAF_DEPTH = 3
CHECK_STRIDE = 100
#: Every MODEL_STRIDE-th checked job is also searched by the Python model.
MODEL_STRIDE = 50

#: (name, FEN, published perft counts by depth)
PERFT_ROOTS = (
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
     {5: 4865609, 6: 119060324, 7: 3195901860, 8: 84998978956}),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     {4: 4085603, 5: 193690690, 6: 8031647685, 7: 374190009323}),
)


def leaf_boards(plies=LEAF_PLIES):
    """(bench index, board) of every position ``plies`` below each bench position, in bench
    order and the contract's move order."""
    out = []

    def walk(index, board, left):
        if left == 0:
            out.append((index, board.copy()))
            return
        for move in legal_moves(board):
            undo = board.make(move)
            walk(index, board, left - 1)
            board.unmake(move, undo)

    for index, job in enumerate(BENCH):
        walk(index, parse_position(job.fen)[0], plies)
    return out


def build(path, backend=None, progress=sys.stderr, leaves=None):
    """Write the job file to ``path``. ``leaves``: the (bench index, board) jobs, by default
    leaf_boards() of the whole bench set (minutes); a test gives a few."""
    from . import OpenCLBackend
    t0 = time.perf_counter()
    leaves = leaf_boards() if leaves is None else leaves
    boards = [b for _, b in leaves]
    positions = pack_positions(boards)
    n = len(boards)
    params = np.zeros((n, 4), dtype=np.int32)
    params[:, 0] = LEAF_DEPTH
    params[:, 1] = -INF
    params[:, 2] = INF
    print(f"{n} leaf jobs ({time.perf_counter() - t0:.1f} s)", file=progress)

    check = np.arange(0, n, CHECK_STRIDE)
    backend = backend or OpenCLBackend()
    t0 = time.perf_counter()
    raw = backend.run_search(positions[check], params[check])
    print(f"check sample: {len(check)} jobs, {int(raw['nodes'].sum())} nodes on "
          f"{backend.describe()} ({time.perf_counter() - t0:.1f} s)", file=progress)
    t0 = time.perf_counter()
    model_checked = 0
    for k in range(0, len(check), MODEL_STRIDE):
        r = model_search(boards[check[k]], LEAF_DEPTH, -INF, INF)
        got = backend.search_many([(boards[check[k]], LEAF_DEPTH, -INF, INF)])[0]
        if (r.score, r.best_move, r.nodes) != (got["score"], got["best_move"], got["nodes"]) \
                or r.nodes != int(raw["nodes"][k]) or r.score != int(raw["scores"][k]):
            raise SystemExit(f"job {check[k]}: the model and {backend.describe()} disagree")
        model_checked += 1
    print(f"model agrees on {model_checked} of them ({time.perf_counter() - t0:.1f} s)",
          file=progress)

    roots = pack_positions([parse_position(fen)[0] for _, fen, _ in PERFT_ROOTS])
    np.savez_compressed(
        path, positions=positions, params=params,
        bench_index=np.array([i for i, _ in leaves], dtype=np.int16),
        sides=np.array([b.side for b in boards], dtype=np.uint8),
        check_index=check.astype(np.int64), check_scores=raw["scores"],
        check_best_moves=raw["best_moves"], check_nodes=raw["nodes"],
        model_checked=np.int64(model_checked),
        perft_names=np.array([name for name, _, _ in PERFT_ROOTS]),
        perft_positions=roots,
        perft_depths=np.array([sorted(c) for _, _, c in PERFT_ROOTS], dtype=np.int64),
        perft_counts=np.array([[c[d] for d in sorted(c)] for _, _, c in PERFT_ROOTS],
                              dtype=np.int64),
        reference_device=np.array(backend.describe()))
    return path


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chessaccel.host.opencl.benchjobs",
                                description="Write the OpenCL benchmark's job file.")
    p.add_argument("path", help="the .npz to write")
    args = p.parse_args(argv)
    import os
    os.makedirs(os.path.dirname(os.path.abspath(args.path)), exist_ok=True)
    build(args.path)
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Nodes/s of the search kernels on PoCL with pst and terms: the bench positions' root moves as
depth-3 jobs (full window), one batch, best of 3."""
import sys, time, chess, numpy as np
from chessaccel.host.backends import get_backend
from chessaccel.contract.bench import BENCH
from chessaccel.model.position import parse_position
from chessaccel.host.opencl.layout import pack_positions
boards = []
for job in BENCH:
    cb = chess.Board(job.fen)
    for mv in cb.legal_moves:
        cb.push(mv); boards.append(cb.fen()); cb.pop()
depth = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for ev in sys.argv[2:] or ("pst", "terms"):
    b = get_backend("opencl", evaluation=ev); b.open()
    pos = pack_positions([parse_position(f)[0] for f in boards])
    par = np.array([(depth, -30000, 30000, 0)] * len(boards), dtype=np.int32)
    best = None
    for _ in range(3):
        t = time.perf_counter(); out = b.run_search(pos, par); dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    n = int(out["nodes"].sum())
    print(ev, len(boards), "jobs", n, "nodes", round(best, 3), "s", round(n / best / 1e6, 2), "M nodes/s",
          "checksum", int(out["scores"].astype(np.int64).sum()), int(out["nodes"].astype(np.int64).sum()), flush=True)
    b.close()

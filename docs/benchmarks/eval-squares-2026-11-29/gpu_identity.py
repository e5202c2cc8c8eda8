"""Issue 30's "a GPU once": the terms evaluation of this tree (weights version 2, with their own
tables) on a GPU's OpenCL against the Python model, job by job, over the jobs
tests/test_opencl_evalterms.py gives PoCL in `make test` (the suites' positions at depth 0 and 1,
depth 2 with the full window, a narrow window and a null window, and positions of random play),
plus every child of the bench set's positions (contract/bench.py) at depth 2. Run on the GPU machine from the
repository root with the package and tests/ on PYTHONPATH:

    python3 docs/benchmarks/eval-squares-2026-11-29/gpu_identity.py opencl:nvidia OUT.json

Prints and writes the counts; the exit status is 1 if any job differs (the first ones printed).
"""

import json
import sys
import time

import chess

import suites
from chessaccel.contract.bench import BENCH
from chessaccel.contract.defs import INF
from chessaccel.contract.evalweights import WEIGHTS_VERSION
from chessaccel.contract.geometry import move_uci
from chessaccel.host.backends import get_backend
from chessaccel.model.search import search as model_search


def main():
    spec, out = sys.argv[1], sys.argv[2]
    backend = get_backend(spec, evaluation="terms")
    boards = suites.evaluation_boards()
    jobs = [(b, d, -INF, INF) for b in boards for d in (0, 1)]
    jobs += [(b, 2, -INF, INF) for b in boards[:80]]
    jobs += [(b, 2, -30, 30) for b in boards[:40]] + [(b, 1, 50, 51) for b in boards[:40]]
    jobs += [(suites.board_of(f), 1, -INF, INF) for f in suites.random_play_positions(1, 60)]
    for job in BENCH:
        cb = chess.Board(job.fen)
        for move in cb.legal_moves:
            cb.push(move)
            jobs.append((suites.board_of(cb.fen()), 2, -INF, INF))
            cb.pop()
    t0 = time.perf_counter()
    results = backend.search_many(jobs)
    device_s = time.perf_counter() - t0
    differ = []
    for i, ((board, depth, alpha, beta), got) in enumerate(zip(jobs, results)):
        want = model_search(board, depth, alpha, beta, evaluation="terms")
        if (got.score, got.best_move, got.nodes) != (want.score, want.best_move, want.nodes):
            differ.append(f"job {i}: depth {depth} window ({alpha}, {beta}): device "
                          f"{got.score} {move_uci(got.best_move) if got.best_move else None} "
                          f"{got.nodes}, model {want.score} "
                          f"{move_uci(want.best_move) if want.best_move else None} {want.nodes}")
    record = {"backend": spec, "device": backend.describe(), "evaluation": "terms",
              "weights_version": WEIGHTS_VERSION, "jobs": len(jobs),
              "nodes": int(sum(r.nodes for r in results)), "device_seconds": device_s,
              "differ": len(differ), "first_differences": differ[:10]}
    with open(out, "w") as f:
        json.dump(record, f, indent=2)
    print(json.dumps({k: v for k, v in record.items() if k != "first_differences"}))
    for line in differ[:10]:
        print(line)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

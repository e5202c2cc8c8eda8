"""Fixed-depth searches of the compiled search on the first bench positions, with and without
the device split of long jobs (SplitBudget): time to depth, used nodes/s, split statistics; with
one thread the results are compared node for node with the unsplit search's."""
import sys, time, chess, json
from chessaccel.host.backends import get_backend
from chessaccel.host.engine.executors import BatchExecutor
from chessaccel.host.engine.hostsearch import CompiledSearch
from chessaccel.host.engine.search import SearchOptions, Limits
from chessaccel.contract.bench import BENCH

import os
from chessaccel.host.engine import hostsearch, search as search_module
if os.environ.get("IN_FLIGHT"):
    hostsearch.IN_FLIGHT = int(os.environ["IN_FLIGHT"])
if os.environ.get("EARLY_US"):
    hostsearch.GPU_EARLY_READ_US = int(os.environ["EARLY_US"])
if os.environ.get("MAX_THREADS"):
    search_module.MAX_THREADS = int(os.environ["MAX_THREADS"])
spec = sys.argv[1]
npos = int(sys.argv[2])
configs = [tuple(int(x) for x in c.split(",")) for c in sys.argv[3:]]
backend = get_backend(spec); backend.open()
ex = BatchExecutor(backend)
reference = {}
rows = []
for hp, threads, budget, lanes, depth in configs:
    s = CompiledSearch(ex, 256, SearchOptions(hardware_plies=hp, threads=threads,
                                               split_budget=budget, split_lanes=lanes))
    s.search(chess.Board(BENCH[1].fen), Limits(depth=3))
    t0 = time.perf_counter(); nodes = 0; times = []; results = []
    for job in BENCH[:npos]:
        s.clear()
        t = time.perf_counter()
        r = s.search(chess.Board(job.fen), Limits(depth=depth, deadline=time.monotonic() + 60))
        times.append(round(time.perf_counter() - t, 3))
        nodes += r.host_nodes + r.accelerator_nodes
        results.append((r.score, str(r.best_move), r.host_nodes, r.accelerator_nodes, r.depth))
    w = time.perf_counter() - t0
    same = None
    if threads == 1:
        key = (hp, depth)
        if budget == 0:
            reference[key] = results
        elif key in reference:
            same = reference[key] == results
    row = dict(hp=hp, threads=threads, budget=budget, lanes=lanes, depth=depth, seconds=round(sum(times), 3),
               times=times, used_mnps=round(nodes / sum(times) / 1e6, 2), launches=s.launches,
               jobs_per_launch=round(s.launched_jobs / max(1, s.launches), 1),
               ms_per_launch=round(1e3 * s.launch_seconds / max(1, s.launches), 2),
               split=s.opencl_stats(), same_as_unsplit=same,
               results=results if threads == 1 else None,
               early_jobs=s.early_jobs, depths=[x[4] for x in results])
    rows.append(row)
    print(json.dumps(row), flush=True)
    s.close()
import os
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], f"split_diag_{spec.replace(':', '_')}.json"), "w") as f:
        json.dump(rows, f, indent=1)

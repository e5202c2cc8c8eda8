"""Chained inline launches (JOB_CHAIN), measured: the compiled search with the engine's
selective steps and the terms evaluation on two of PoCL's basic devices (two threads, inline
launches, what `chessaccel uci` runs on this machine), each of the 10 bench positions to a fixed
depth at HardwarePlies 1, 2 and 3: seconds, nodes, jobs and launches. Run from the repository
root of the tree to measure, on an otherwise idle machine (POCL_DEVICES is set here):

    python docs/benchmarks/middlegame-depth-2026-11-30/chained.py [DEPTH] [OUT.json]
"""
import json
import os
import sys
import time

os.environ["POCL_DEVICES"] = "basic basic"

import chess  # noqa: E402

from chessaccel.contract.bench import BENCH  # noqa: E402
from chessaccel.host.backends import get_backend  # noqa: E402
from chessaccel.host.engine.executors import BatchExecutor  # noqa: E402
from chessaccel.host.engine.hostsearch import CompiledSearch  # noqa: E402
from chessaccel.host.engine.search import Limits, SearchOptions  # noqa: E402
from chessaccel.host.engine.uci import DEFAULT_SELECTIVE, SELECTIVE_OPTIONS  # noqa: E402

depth = int(sys.argv[1]) if len(sys.argv) > 1 else 9
steps = {SELECTIVE_OPTIONS[name]: True for name in DEFAULT_SELECTIVE}
backend = get_backend("opencl", evaluation="terms")
backend.open()
executor = BatchExecutor(backend)
rows = []
try:
    for plies in (3, 2, 1):
        seconds = nodes = jobs = launches = 0
        for job in BENCH[:10]:
            search = CompiledSearch(executor, 64, SearchOptions(
                hardware_plies=plies, threads=2, evaluation="terms", **steps))
            try:
                start = time.monotonic()
                result = search.search(chess.Board(job.fen), Limits(depth=depth))
                seconds += time.monotonic() - start
                nodes += result.nodes
                jobs += result.iterations[-1].jobs
                launches += search.launches
            finally:
                search.close()
        rows.append(dict(hardware_plies=plies, depth=depth, seconds=seconds, nodes=nodes, jobs=jobs,
                         launches=launches, nodes_per_second=nodes / seconds))
        print(f"HardwarePlies {plies}, depth {depth}: {seconds:.2f} s, {nodes / seconds / 1e6:.2f} M "
              f"nodes/s, {jobs} jobs, {launches} launches", flush=True)
finally:
    executor.close()
if len(sys.argv) > 2:
    json.dump(rows, open(sys.argv[2], "w"), indent=1)

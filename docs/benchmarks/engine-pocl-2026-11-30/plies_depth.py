"""The compiled search with the engine's selective steps and the terms evaluation on PoCL (this
machine's cores): the depth it completes in 2 s on the first 6 bench positions, the nodes a second
it used and threw away, at HardwarePlies 3 and 2, with the brothers of a frontier parent out at
once (`parallel`, the engine's way) and one after the other. Run from the repository root:
`python docs/benchmarks/engine-pocl-2026-11-30/plies_depth.py`."""
import time

import chess

from chessaccel.contract.bench import BENCH
from chessaccel.host.backends import get_backend
from chessaccel.host.engine.executors import BatchExecutor
from chessaccel.host.engine.hostsearch import CompiledSearch
from chessaccel.host.engine.search import Limits, SearchOptions
from chessaccel.host.engine.uci import DEFAULT_SELECTIVE, SELECTIVE_OPTIONS

SECONDS, POSITIONS = 2.0, 6
steps = {SELECTIVE_OPTIONS[name]: True for name in DEFAULT_SELECTIVE}
backend = get_backend("opencl", evaluation="terms")
backend.open()
executor = BatchExecutor(backend)
try:
    for plies in (3, 2):
        for parallel in (True, False):
            depths, used, thrown, seconds = [], 0, 0, 0.0
            for job in BENCH[:POSITIONS]:
                search = CompiledSearch(executor, 256, SearchOptions(
                    hardware_plies=plies, parallel=parallel, evaluation="terms", **steps))
                try:
                    start = time.monotonic()
                    result = search.search(chess.Board(job.fen), Limits(deadline=start + SECONDS))
                    seconds += time.monotonic() - start
                finally:
                    search.close()
                depths.append(result.depth)
                used += result.nodes
                thrown += result.speculative_nodes
            print(f"HardwarePlies {plies} parallel {parallel}: depths {depths}, mean "
                  f"{sum(depths) / len(depths):.2f}; used {used / seconds / 1e6:.2f} M nodes/s, "
                  f"thrown away {thrown / seconds / 1e6:.2f} M/s", flush=True)
finally:
    executor.close()

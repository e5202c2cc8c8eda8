"""Seconds the compiled search takes to a fixed depth on the first 8 bench positions, with the
engine's selective steps (uci.py DEFAULT_SELECTIVE), on PoCL; used and speculative nodes.

    python docs/benchmarks/engine-pocl-2026-11-28/time_to_depth.py DEPTH CONFIG...

CONFIG is MODE,THREADS,HARDWARE_PLIES, MODE "p" (brothers in one batch, the engine's) or "s"
(one job at a time); XEV=pst|terms in the environment picks the evaluation (default pst).
docs/engine.md ("On a CPU device a job's result is read as soon as it is written") quotes it:
`XEV=terms python .../time_to_depth.py 8 p,1,3 p,2,3`.
"""

import os
import sys
import time

import chess

from chessaccel.contract.bench import BENCH
from chessaccel.host.engine.executors import make_executor
from chessaccel.host.engine.hostsearch import CompiledSearch
from chessaccel.host.engine.search import Limits, SearchOptions
from chessaccel.host.engine.uci import DEFAULT_SELECTIVE, SELECTIVE_OPTIONS

SELECTIVE = {SELECTIVE_OPTIONS[name]: True for name in DEFAULT_SELECTIVE}


def main(depth, configs):
    evaluation = os.environ.get("XEV", "pst")
    executor = make_executor("opencl:pocl", 1, evaluation=evaluation)
    try:
        for config in configs:
            mode, threads, plies = config.split(",")
            options = SearchOptions(hardware_plies=int(plies), threads=int(threads),
                                    parallel=mode == "p", evaluation=evaluation, **SELECTIVE)
            search = CompiledSearch(executor, 64, options)
            seconds = used = speculative = 0
            try:
                for job in BENCH[:8]:
                    search.clear()
                    start = time.monotonic()
                    result = search.search(chess.Board(job.fen), Limits(depth=depth))
                    seconds += time.monotonic() - start
                    used += result.nodes
                    speculative += result.speculative_nodes
            finally:
                search.close()
            print(f"{config} {seconds:.2f}s used {used / 1e6:.1f}M spec {speculative / 1e6:.1f}M "
                  f"used/s {used / seconds / 1e6:.2f}M", flush=True)
    finally:
        executor.close()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])

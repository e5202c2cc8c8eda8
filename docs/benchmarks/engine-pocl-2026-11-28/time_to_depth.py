import sys, time, chess
from chessaccel.contract.bench import BENCH
from chessaccel.host.engine.executors import make_executor
from chessaccel.host.engine.hostsearch import CompiledSearch
from chessaccel.host.engine.search import Limits, SearchOptions
from chessaccel.host.engine.uci import DEFAULT_SELECTIVE, SELECTIVE_OPTIONS
sel = {SELECTIVE_OPTIONS[n]: True for n in DEFAULT_SELECTIVE}
ex = make_executor("opencl", 1, evaluation="terms") if False else None
from chessaccel.host.backends import get_backend
import chessaccel.host.engine.executors as E
depth = int(sys.argv[1]); configs = sys.argv[2:]
EV = __import__("os").environ.get("XEV", "pst"); ex = make_executor("opencl:pocl", 1, evaluation=EV)
print(ex.parallel, ex.speculate, ex.slots)
for cfg in configs:
    par, thr, hp = cfg.split(",")
    opts = SearchOptions(hardware_plies=int(hp), threads=int(thr), parallel=par == "p", evaluation=EV, **sel)
    s = CompiledSearch(ex, 64, opts)
    tot = 0; totn = 0; tots = 0
    for job in BENCH[:8]:
        s.clear()
        t = time.monotonic()
        r = s.search(chess.Board(job.fen), Limits(depth=depth))
        e = time.monotonic() - t
        tot += e; totn += r.nodes; tots += r.speculative_nodes
    print(cfg, f"{tot:.2f}s used {totn/1e6:.1f}M spec {tots/1e6:.1f}M  used/s {totn/tot/1e6:.2f}M", flush=True)
    s.close()

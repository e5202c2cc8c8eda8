"""Per-launch figures of the compiled search on the GPU: native launches at two poll intervals
against the Python pump, one thread and many."""
import sys, time, chess
from chessaccel.host.backends import get_backend
from chessaccel.host.engine import hostsearch
from chessaccel.host.engine.executors import BatchExecutor
from chessaccel.host.engine.hostsearch import CompiledSearch
from chessaccel.host.engine.search import SearchOptions, Limits
from chessaccel.contract.bench import BENCH

spec = sys.argv[1] if len(sys.argv) > 1 else "opencl:NVIDIA"
backend = get_backend(spec); backend.open()
ex = BatchExecutor(backend)
for hp, threads, depth in ((3, 1, 6), (2, 1, 6), (3, 256, 7)):
    for label, native, poll in (("pump", False, 0), ("native-500", True, 500), ("native-20", True, 20)):
        hostsearch.NATIVE_POLL_US = poll or 500
        s = CompiledSearch(ex, 256, SearchOptions(hardware_plies=hp, threads=threads), native=native)
        s.search(chess.Board(BENCH[1].fen), Limits(depth=2))
        s.launches = s.launched_jobs = 0; s.launch_seconds = 0.0
        t = time.perf_counter(); c = time.process_time(); nodes = 0
        for job in BENCH[:4]:
            s.clear()
            r = s.search(chess.Board(job.fen), Limits(depth=depth))
            nodes += r.host_nodes + r.accelerator_nodes
        w = time.perf_counter() - t; cpu = time.process_time() - c
        print(f"hp{hp} t{threads} d{depth} {label:11s} {w:6.2f} s cpu {cpu:6.2f} used {nodes/w/1e6:6.2f} M/s "
              f"launches {s.launches:6d} jobs/launch {s.launched_jobs/max(1,s.launches):7.1f} "
              f"ms/launch {1e3*s.launch_seconds/max(1,s.launches):6.3f}", flush=True)
        s.close()

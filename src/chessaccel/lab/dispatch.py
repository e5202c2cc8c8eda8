"""The host's dispatch rate: leaf jobs handed out and collected per second when the
accelerator costs nothing (``chessaccel bench --dispatch``).

``InstantBackend`` answers every job at once with the material balance of its position (so
that the tree has the shape of a real search: cutoffs where captures win, re-searches where the
balance shifts), no move and one node. Its batches count as parallel (as a GPU's would), so the search gives it
speculative work too. Two figures come out:

- **interface**: prebuilt jobs through ``submit``/``wait`` in batches of 1, 32 and 1024, both
  with the batch run in the submitting thread (it declares ``inline_batches``, as such a fast
  backend would) and through the executor's thread (as a slow one is): what the job interface costs;
- **search**: the bench positions searched by the host to a fixed depth over that backend:
  what the host's own work at the top (move generation and ordering, the boards that jobs
  carry, in engine/hostboard.py's compiled code; the search's bookkeeping in Python) allows.
  Hydra's host called its FPGA about 100,000 times a second; this is the number to hold
  against that.

A third, on a real batch backend (``python -m chessaccel.lab.dispatch launches --backend
opencl``, ``measure_launches``): what one launch costs outside the kernel and how many jobs a
launch holds when N threads submit small batches to one executor at once (as Lazy-SMP search
threads do): **per call**, one job of a few nodes through ``search_many`` again and again (the
kernel's own time is microseconds, so the time per call is the launch's overhead: enqueueing,
uploads, the wait and the read-back), and through ``start_search`` with two launches in flight;
**per executor**, N threads each submitting batches of B such jobs and waiting for them: jobs
and launches per second, jobs per launch, batches per launch, the milliseconds of a launch.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import threading
import time

import chess

from chessaccel.contract.defs import INF
from chessaccel.host.backends import Backend, Capabilities, JobResult, get_backend
from chessaccel.contract.bench import BENCH
from chessaccel.model.position import parse_position
from chessaccel.host.engine.executors import BatchExecutor, Job
from chessaccel.host.engine.hostboard import library
from chessaccel.host.engine.search import HostSearch, Limits, SearchOptions
from chessaccel.host.engine.tt import TranspositionTable
from .record import write_record

__all__ = ["InstantBackend", "measure_interface", "measure_search", "measure_compiled_search",
           "measure_launches", "run",
           "goal_verdict", "GOAL_JOBS_PER_S", "ENGINE_GOAL_JOBS_PER_S"]

#: Hydra's rate of FPGA calls per second (docs/engine.md).
GOAL_JOBS_PER_S = 100_000
#: The engine issue's goal for the compiled host search, ten times Hydra's: jobs handed out per
#: CPU second through the engine on one core.
ENGINE_GOAL_JOBS_PER_S = 1_000_000
BATCH_SIZES = (1, 32, 1024)


class InstantBackend(Backend):
    """A backend that does no search: the dispatch benchmark's accelerator."""

    name = "instant"
    capabilities = Capabilities(batch=True, parallel_batches=True, inline_batches=True)

    def search(self, board, depth, alpha, beta):
        return self.search_many([(board, depth, alpha, beta)])[0]

    def search_many(self, jobs):
        out = []
        for job in jobs:
            board = job[0]
            balance = sum(map(_VALUE_OF, filter(None, board.sq)))     # C loops, no frames
            out.append(JobResult(balance if board.side == 0 else -balance, None, [], 1))
        return out

    def native_launches(self):
        """The compiled host search answers every job itself, in the thread that makes it
        (hostlaunch.cpp's instant launcher): the material value of each piece type."""
        return "instant", [int(v) for v in _TYPE_VALUE]

    def start_packed(self, positions, params):
        """The compiled search's launches (hostsearch.py): every job answered at once with its
        material balance, no move, one node."""
        import numpy as np
        n = len(positions)
        return _InstantLaunch((_packed_balance(positions), np.zeros(n, np.uint32),
                               np.ones(n, np.uint64)))


class _InstantLaunch:
    """A launch of packed jobs that is over when it starts (InstantBackend.start_packed)."""

    def __init__(self, arrays):
        self._arrays = arrays
        self.started = time.perf_counter()

    def __len__(self):
        return len(self._arrays[0])

    def done(self):
        return True

    def stop(self, start, end):
        pass

    def arrays(self):
        return self._arrays


def _packed_balance(positions):
    """The material balance of packed positions (host/opencl/layout.py: three bit-planes of the
    piece type, the side to move's pieces), from the side to move's view, as int32s."""
    import numpy as np
    words = np.ascontiguousarray(positions[:, :4]).view(np.uint8).reshape(len(positions), 4, 8)
    bits = np.unpackbits(words, axis=2, bitorder="little").astype(np.int32)   # (n, 4, 64)
    types = bits[:, 0] | bits[:, 1] << 1 | bits[:, 2] << 2
    sign = np.where(bits[:, 3] == 1, 1, -1)
    return (_TYPE_VALUE[types] * sign).sum(axis=1).astype(np.int32)


def _values():
    from chessaccel.contract.evaltables import MATERIAL_MG
    from chessaccel.contract.geometry import CODE
    table = [0] * 16
    for piece, value in MATERIAL_MG.items():
        kind = getattr(piece, "value", piece)
        table[CODE[0][kind]] = value
        table[CODE[1][kind]] = -value
    return table


_VALUE = _values()
_VALUE_OF = _VALUE.__getitem__


def _type_values():
    import numpy as np
    from chessaccel.contract.evaltables import MATERIAL_MG
    table = np.zeros(8, dtype=np.int32)
    for piece, value in MATERIAL_MG.items():
        table[getattr(piece, "value", piece)] = value
    return table


_TYPE_VALUE = _type_values()


class ThreadedInstantBackend(InstantBackend):
    """The same, its batches run by the executor's thread."""
    capabilities = Capabilities(batch=True, parallel_batches=True)


def measure_interface(jobs_total=200_000, sizes=BATCH_SIZES):
    """{"inline"|"threaded": {batch size: jobs per second}} through submit/wait."""
    board = parse_position("4k3/8/8/8/8/8/8/4K3 w - - 0 1")[0]
    out = {}
    for label, backend in (("inline", InstantBackend()), ("threaded", ThreadedInstantBackend())):
        executor = BatchExecutor(backend)
        rates = out[label] = {}
        try:
            for size in sizes:
                jobs = [Job(board, 0, -INF, INF)] * size
                rounds = max(1, jobs_total // size // (8 if size == 1 else 1))
                start, cpu = time.perf_counter(), time.process_time()
                for _ in range(rounds):
                    batch = executor.submit(jobs)
                    while not batch.done():
                        batch.wait(1.0)
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                rates[size] = {"wall": round(rounds * size / wall),
                               "cpu": round(rounds * size / max(cpu, 1e-9))}
        finally:
            executor.close()
    return out


def measure_search(depth=5, hardware_plies=1, positions=BENCH, profile=False, repeats=3):
    """Host searches of the bench positions over the instant backend: jobs per second (the
    median of ``repeats`` runs: one run is a few tenths of a second, short enough for a
    scheduler's hiccup to show), and (with ``profile``, in one more run under cProfile) where
    the host's time goes."""
    library()   # built before the clock starts: a first build takes seconds of g++
    runs = sorted((_search_run(depth, hardware_plies, positions, None) for _ in range(repeats)),
                  key=lambda run: run["cpu_seconds"])
    out = runs[len(runs) // 2]
    out["runs"] = [{key: run[key] for key in ("seconds", "cpu_seconds", "handed_out_per_second",
                                              "handed_out_per_cpu_second")} for run in runs]
    if profile:
        profiler = cProfile.Profile()
        _search_run(depth, hardware_plies, positions, profiler)
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.sort_stats("tottime").print_stats(12)
        out["profile"] = [line for line in stream.getvalue().splitlines()
                          if line.strip() and "/" in line][:12]
    return out


def _search_run(depth, hardware_plies, positions, profiler):
    executor = BatchExecutor(InstantBackend())
    per_position = []
    handed_out = executor.stats["jobs"]
    try:
        for job in positions:
            board = chess.Board(job.fen)
            search = HostSearch(executor, TranspositionTable(16),
                                SearchOptions(hardware_plies=hardware_plies))
            if profiler:
                profiler.enable()
            start, cpu = time.perf_counter(), time.process_time()
            result = search.search(board, Limits(depth=depth))
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            if profiler:
                profiler.disable()
            per_position.append({"name": job.name, "jobs": result.jobs,
                                 "host_nodes": result.host_nodes, "seconds": round(seconds, 4),
                                 "cpu_seconds": round(cpu, 4),
                                 "jobs_per_second": round(result.jobs / seconds)})
    finally:
        executor.close()
    jobs = sum(p["jobs"] for p in per_position)
    handed_out = executor.stats["jobs"] - handed_out
    seconds = sum(p["seconds"] for p in per_position)
    cpu = sum(p["cpu_seconds"] for p in per_position)
    out = {"depth": depth, "hardware_plies": hardware_plies, "jobs": jobs,
           "jobs_handed_out": handed_out,
           "host_nodes": sum(p["host_nodes"] for p in per_position),
           "seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3),
           "jobs_per_second": round(jobs / seconds),
           "handed_out_per_second": round(handed_out / seconds),
           "jobs_per_cpu_second": round(jobs / cpu),
           "handed_out_per_cpu_second": round(handed_out / cpu),
           "load_average": os.getloadavg()[0],
           "positions": per_position}
    return out


def measure_compiled_search(depth=5, hardware_plies=1, positions=BENCH, repeats=3):
    """The same searches by the compiled host search (hostsearch.py, one thread) over the
    instant backend, whose jobs hostlaunch.cpp answers in the searching thread: jobs handed
    out per second and per CPU second of the whole process (every thread), the median of
    ``repeats`` runs."""
    from chessaccel.host.engine.hostsearch import CompiledSearch, library as compiled_library
    compiled_library()
    runs = []
    for _ in range(repeats):
        executor = BatchExecutor(InstantBackend())
        search = CompiledSearch(executor, 16, SearchOptions(hardware_plies=hardware_plies))
        jobs = host_nodes = 0
        seconds = cpu = 0.0
        try:
            for job in positions:
                search.clear()
                start, cpu_start = time.perf_counter(), time.process_time()
                result = search.search(chess.Board(job.fen), Limits(depth=depth))
                seconds += time.perf_counter() - start
                cpu += time.process_time() - cpu_start
                jobs += result.jobs
                host_nodes += result.host_nodes
        finally:
            search.close()
            executor.close()
        handed_out = search.launched_jobs
        runs.append({"depth": depth, "hardware_plies": hardware_plies, "jobs": jobs,
                     "jobs_handed_out": handed_out, "host_nodes": host_nodes,
                     "launches": search.launches, "seconds": round(seconds, 3),
                     "cpu_seconds": round(cpu, 3),
                     "handed_out_per_second": round(handed_out / seconds),
                     "handed_out_per_cpu_second": round(handed_out / cpu)})
    runs.sort(key=lambda run: run["cpu_seconds"])
    out = dict(runs[len(runs) // 2])
    out["runs"] = runs
    return out


def run(args):
    interface = measure_interface()
    search = measure_search(depth=args.dispatch_depth, hardware_plies=args.hardware_plies,
                            profile=True)
    compiled = measure_compiled_search(depth=args.dispatch_depth,
                                       hardware_plies=args.hardware_plies)
    obj = {"goal_jobs_per_second": GOAL_JOBS_PER_S,
           "engine_goal_jobs_per_second": ENGINE_GOAL_JOBS_PER_S,
           "interface_jobs_per_second": {mode: {str(k): v for k, v in rates.items()}
                                         for mode, rates in interface.items()},
           "search": search, "compiled_search": compiled, "cpus": os.cpu_count()}
    default = os.path.join("out", "bench-dispatch.json")
    out, plot = write_record(obj, args.out, args.plot, default, _plot, indent=1)
    if args.json:
        print(json.dumps(obj))
        return 0
    for mode, rates in interface.items():
        for size, rate in rates.items():
            print(f"interface ({mode}), batches of {size:4d}: {rate['wall']:9,d} jobs/s, "
                  f"{rate['cpu']:9,d} per CPU second")
    print(f"host search, depth {search['depth']} with HardwarePlies {search['hardware_plies']}: "
          f"{search['jobs']:,d} jobs used, {search['jobs_handed_out']:,d} handed out and "
          f"collected (speculative ones included), {search['host_nodes']:,d} host nodes")
    print(f"  {search['handed_out_per_second']:,d} jobs/s on the clock ({search['seconds']:.2f} s, "
          f"load average {search['load_average']:.1f} on {os.cpu_count()} CPUs), "
          f"{search['handed_out_per_cpu_second']:,d} jobs per CPU second "
          f"({search['cpu_seconds']:.2f} s): what one free core gives; the median of "
          f"{len(search['runs'])} runs ("
          + ", ".join(f"{run['handed_out_per_cpu_second']:,d}" for run in search["runs"]) + ")")
    print(f"the search's rate {goal_verdict(search)} the goal of {GOAL_JOBS_PER_S:,d} jobs/s; "
          "where the host's time goes:")
    for line in search["profile"][:8]:
        print("  " + line.strip())
    print(f"compiled host search (CompiledSearch, one thread), the same searches: "
          f"{compiled['jobs_handed_out']:,d} jobs handed out in {compiled['launches']:,d} "
          f"launches, {compiled['handed_out_per_second']:,d} jobs/s on the clock, "
          f"{compiled['handed_out_per_cpu_second']:,d} per CPU second (every thread of the "
          f"process); the median of {len(compiled['runs'])} runs ("
          + ", ".join(f"{run['handed_out_per_cpu_second']:,d}" for run in compiled["runs"])
          + f"): {goal_verdict(compiled, ENGINE_GOAL_JOBS_PER_S)} the engine's goal of "
          f"{ENGINE_GOAL_JOBS_PER_S:,d} jobs/s")
    print(f"wrote {out} and {plot}")
    return 0


def goal_verdict(search, goal=GOAL_JOBS_PER_S):
    """Whether a search's rate (jobs handed out per CPU second) reaches ``goal``: "meets" (at
    or above it) or "is below"."""
    return "meets" if search["handed_out_per_cpu_second"] >= goal else "is below"


def _plot(obj, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels, values = [], []
    for mode, rates in obj["interface_jobs_per_second"].items():
        for size, rate in rates.items():
            labels.append(f"{mode}\nbatch {size}")
            values.append(rate["cpu"])
    labels += ["search\nhanded out", "search\nused"]
    values += [obj["search"]["handed_out_per_cpu_second"], obj["search"]["jobs_per_cpu_second"]]
    extra = 2
    if "compiled_search" in obj:
        labels.append("compiled\nsearch")
        values.append(obj["compiled_search"]["handed_out_per_cpu_second"])
        extra = 3
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.bar(labels, values, color=["tab:blue"] * (len(values) - extra) + ["tab:orange"] * extra)
    ax.axhline(obj["goal_jobs_per_second"], color="red", linestyle="--", label="Hydra's rate")
    if "engine_goal_jobs_per_second" in obj:
        ax.axhline(obj["engine_goal_jobs_per_second"], color="purple", linestyle=":",
                   label="the engine's goal")
    ax.set_ylabel("leaf jobs per CPU second")
    ax.set_yscale("log")
    ax.set_title("host dispatch with an instant backend")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# --- launches on a real batch backend ------------------------------------------------------------

#: A position whose depth-0 job is a few nodes: the kernel's own time is next to nothing.
_QUIET = "4k3/8/8/8/8/8/8/4K3 w - - 0 1"


class _Counted:
    """The backend's launch calls counted (and timed in the executor's thread), whatever the
    executor's version: ``search_many`` and ``start_search``'s handles."""

    def __init__(self, backend):
        self.backend = backend
        self.launches = 0
        self.jobs = 0
        start_search = getattr(backend, "start_search", None)
        search_many = backend.search_many

        def counted_many(jobs, **kwargs):
            self.launches += 1
            self.jobs += len(jobs)
            return search_many(jobs, **kwargs)

        backend.search_many = counted_many
        if start_search is not None:
            def counted_start(jobs):
                self.launches += 1
                self.jobs += len(jobs)
                return start_search(jobs)
            backend.start_search = counted_start


def _per_call(backend, job, calls):
    """Milliseconds per launch of one job: through search_many one after another (the median),
    and through start_search with two launches in flight (the mean), when the backend has it."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        backend.search_many([job])
        times.append(time.perf_counter() - start)
    out = {"search_many_ms": round(statistics.median(times) * 1e3, 4),
           "search_many_p90_ms": round(sorted(times)[int(0.9 * len(times))] * 1e3, 4)}
    if hasattr(backend, "start_search"):
        start = time.perf_counter()
        previous = backend.start_search([job])
        for _ in range(calls - 1):
            launch = backend.start_search([job])
            previous.results()
            previous = launch
        previous.results()
        out["two_in_flight_ms"] = round((time.perf_counter() - start) / calls * 1e3, 4)
    return out


def measure_launches(spec="opencl", threads=(1, 2, 4, 8), batch=4, depth=0, seconds=2.0,
                     calls=300, lanes=None):
    """Per-launch overhead and jobs per launch on backend ``spec`` (see the module docstring).
    ``lanes``: the OpenCL backend's lanes per compute unit (its launch_jobs), else its default."""
    backend = get_backend(spec)
    if lanes is not None:
        backend.threads_per_unit = lanes
    board = parse_position(_QUIET)[0]
    job = Job(board, depth, -INF, INF)
    backend.search_many([job])          # the device opened and the program built first
    out = {"backend": spec, "device": backend.describe(), "depth": depth, "batch": batch,
           "per_call": _per_call(backend, job, calls), "threads": {}}
    counted = _Counted(backend)
    executor = BatchExecutor(backend)
    out["launch_jobs"] = getattr(executor, "launch_jobs", None)
    try:
        for count in threads:
            out["threads"][str(count)] = _submitting(executor, counted, job, count, batch,
                                                     seconds)
    finally:
        executor.close()
    return out


def _submitting(executor, counted, job, count, batch, seconds):
    """``count`` threads each submitting batches of ``batch`` jobs and waiting for each."""
    launches, jobs = counted.launches, counted.jobs
    latencies = []
    stop = time.perf_counter() + seconds
    lock = threading.Lock()

    def thread():
        mine = []
        while time.perf_counter() < stop:
            start = time.perf_counter()
            handle = executor.submit([job] * batch)
            while not handle.done():
                handle.wait(1.0)
            mine.append(time.perf_counter() - start)
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=thread) for _ in range(count)]
    start, cpu = time.perf_counter(), time.process_time()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    launches, jobs = counted.launches - launches, counted.jobs - jobs
    return {"batches": len(latencies), "launches": launches, "jobs": jobs,
            "jobs_per_launch": round(jobs / max(launches, 1), 2),
            "batches_per_launch": round(len(latencies) / max(launches, 1), 2),
            "launches_per_second": round(launches / wall), "jobs_per_second": round(jobs / wall),
            "ms_per_launch": round(wall / max(launches, 1) * 1e3, 4),
            "cpu_ms_per_launch": round(cpu / max(launches, 1) * 1e3, 4),
            "batch_latency_ms": round(statistics.median(latencies) * 1e3, 4)}


def launches_main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m chessaccel.lab.dispatch launches",
        description="per-launch overhead and jobs per launch with N submitting threads")
    parser.add_argument("--backend", default="opencl")
    parser.add_argument("--threads", default="1,2,4,8",
                        help="submitting threads, comma-separated (default 1,2,4,8)")
    parser.add_argument("--batch", type=int, default=4, help="jobs per batch (default 4)")
    parser.add_argument("--depth", type=int, default=0, help="job depth (default 0)")
    parser.add_argument("--seconds", type=float, default=2.0, help="per thread count")
    parser.add_argument("--calls", type=int, default=300, help="launches timed one by one")
    parser.add_argument("--lanes", type=int, default=None,
                        help="OpenCL lanes per compute unit (default: the backend's)")
    parser.add_argument("--out", default=None, help="write the JSON here too")
    args = parser.parse_args(argv)
    obj = measure_launches(args.backend, tuple(int(t) for t in args.threads.split(",")),
                           args.batch, args.depth, args.seconds, args.calls, args.lanes)
    obj["cpus"] = os.cpu_count()
    obj["load_average"] = os.getloadavg()[0]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(obj, f, indent=1)
    call = obj["per_call"]
    print(f"{obj['device']}: launch_jobs {obj['launch_jobs']}; one job per launch: "
          f"{call['search_many_ms']:.3f} ms per search_many (p90 {call['search_many_p90_ms']:.3f})"
          + (f", {call['two_in_flight_ms']:.3f} ms with two in flight"
             if "two_in_flight_ms" in call else ""))
    for count, row in obj["threads"].items():
        print(f"{count:>3} thread(s), batches of {obj['batch']}: {row['jobs_per_second']:8,d} jobs/s, "
              f"{row['launches_per_second']:6,d} launches/s, {row['jobs_per_launch']:6.2f} jobs "
              f"({row['batches_per_launch']:.2f} batches) per launch, {row['ms_per_launch']:.3f} "
              f"ms per launch ({row['cpu_ms_per_launch']:.3f} CPU ms), batch latency "
              f"{row['batch_latency_ms']:.3f} ms")
    return 0


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] != ["launches"]:
        sys.exit("usage: python -m chessaccel.lab.dispatch launches [--backend SPEC] ... "
                 "(the rest of this module runs as chessaccel bench --dispatch)")
    sys.exit(launches_main(sys.argv[2:]))

"""The compiled host search's launches: how many jobs a launch holds, how long it is in flight.

``python -m chessaccel.lab.searchlaunches --backend opencl:NVIDIA --seconds 5 --config 3,1
--config 3,1024 --out out/searchlaunches.json`` searches each of the first bench positions for
``--seconds`` with each (HardwarePlies, Threads) configuration of the compiled search
(hostsearch.py) and prints, per search: the depth completed, the nodes/s whose results the
search used, the speculative nodes/s (jobs finished and not used), jobs, launches, jobs a
launch, milliseconds a launch is in flight and launches a second; then writes them as JSON and
draws them (used nodes/s and ms a launch per configuration). docs/engine.md ("The compiled host
search") reads its figures: they say whether the host or the device's latency per job sets the
pace.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import chess

from chessaccel.contract.bench import BENCH
from chessaccel.contract.errors import first_line
from chessaccel.host.backends import BackendError
from chessaccel.host.engine.executors import make_executor
from chessaccel.host.engine.hostsearch import CompiledSearch
from chessaccel.host.engine.search import Limits, SearchOptions

__all__ = ["measure", "main"]


def measure(spec, configs, seconds=5.0, positions=2, hash_mb=1024, log=print):
    """Rows of one compiled search per (configuration, position); ``configs`` are
    (hardware plies, threads) pairs."""
    executor = make_executor(spec, 1)
    rows = []
    try:
        for plies, threads in configs:
            search = CompiledSearch(executor, hash_mb,
                                    SearchOptions(hardware_plies=plies, threads=threads))
            try:
                for job in BENCH[:positions]:
                    search.clear()
                    search.launches = search.launched_jobs = 0
                    search.launch_seconds = 0.0
                    start = time.monotonic()
                    result = search.search(chess.Board(job.fen), Limits(deadline=start + seconds))
                    elapsed = time.monotonic() - start
                    launches = max(1, search.launches)
                    row = {"hardware_plies": plies, "threads": threads, "position": job.name,
                           "depth": result.depth, "seconds": round(elapsed, 3),
                           "used_nps": result.nodes / elapsed,
                           "speculative_nps": result.speculative_nodes / elapsed,
                           "jobs": result.jobs, "launches": search.launches,
                           "jobs_per_launch": search.launched_jobs / launches,
                           "ms_per_launch": 1000 * search.launch_seconds / launches,
                           "launches_per_second": search.launches / elapsed,
                           "error": result.error}
                    rows.append(row)
                    log(f"HardwarePlies {plies} Threads {threads:5d} {job.name:12s} depth "
                        f"{result.depth:2d} used {row['used_nps'] / 1e6:7.2f} M/s speculative "
                        f"{row['speculative_nps'] / 1e6:7.2f} M/s {row['jobs_per_launch']:7.1f} "
                        f"jobs a launch {row['ms_per_launch']:7.2f} ms a launch "
                        f"{row['launches_per_second']:6.0f} launches/s"
                        + (f" error: {result.error}" if result.error else ""))
            finally:
                search.close()
    finally:
        executor.close()
    return rows


def _plot(record, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = record["rows"]
    labels = sorted({(r["hardware_plies"], r["threads"]) for r in rows})
    names = [f"HP{p} T{t}" for p, t in labels]

    def mean(key, label):
        values = [r[key] for r in rows if (r["hardware_plies"], r["threads"]) == label]
        return sum(values) / len(values)

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.bar(names, [mean("used_nps", label) / 1e6 for label in labels])
    left.set_ylabel("used nodes/s (millions)")
    right.bar(names, [mean("ms_per_launch", label) for label in labels], color="tab:orange")
    right.set_ylabel("ms a launch is in flight")
    for axis in (left, right):
        axis.tick_params(axis="x", rotation=30)
    fig.suptitle(f"compiled host search on {record['backend']}, {record['seconds']} s a position")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _config(text):
    try:
        plies, threads = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a configuration is PLIES,THREADS, got {text!r}") from None
    if not 0 <= plies <= 8 or not 1 <= threads <= 4096:
        raise argparse.ArgumentTypeError(f"{text!r}: plies 0..8, threads 1..4096")
    return plies, threads


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m chessaccel.lab.searchlaunches",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="opencl")
    parser.add_argument("--config", type=_config, action="append",
                        help="HARDWARE_PLIES,THREADS (repeatable; default 3,1)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--positions", type=int, default=2, choices=range(1, len(BENCH) + 1),
                        metavar=f"1..{len(BENCH)}")
    parser.add_argument("--out", type=Path, default=Path("out/searchlaunches.json"))
    args = parser.parse_args(argv)
    try:
        rows = measure(args.backend, args.config or [(3, 1)], args.seconds, args.positions)
    except (BackendError, ValueError, OSError) as error:
        print(f"searchlaunches: {first_line(error)}", file=sys.stderr)
        return 1
    record = {"backend": args.backend, "seconds": args.seconds, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    chart = _plot(record, args.out.with_suffix(".png"))
    print(f"wrote {args.out}" + (f" and {chart}" if chart else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

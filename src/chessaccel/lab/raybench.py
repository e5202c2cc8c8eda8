"""Nodes per second of the engine on N Ray workers: the bench positions (contract/bench.py)
searched by the host at a fixed depth on ``ray:SPEC`` with 1, 2, 4, 8 actors (``--workers``).

    python -m chessaccel.lab.raybench [--workers 1,2,4,8] [--depth 5] [--hardware-plies 3]
        [--spec model] [--address ADDRESS] [--exact] [--positions N] [--out out/raybench.json]

Each worker count gets a fresh executor (a local Ray of its own unless ``--address`` names a
cluster: ``auto`` for the one ``ray start`` made here, or ``HOST:PORT``), each actor answers one
tiny job before the clock starts, and each position gets a fresh 16 MiB table, as
``chessaccel bench --host`` does. Per worker count: host and accelerator nodes, jobs, seconds,
nodes/s, and the speed-up over the first count on the clock (nodes/s) and to the depth
(seconds). Scores and best moves must agree across worker counts in ``--exact`` mode (the
contract's plain alpha-beta, no table: a disagreement makes the command fail); in the engine's
own mode (default) a parallel search may legitimately find a different move of equal or close
score, and differences are only reported. Writes the JSON and a chart beside it.
"""

import argparse
import os
import sys
import time

import chess

from chessaccel.contract.bench import BENCH
from chessaccel.contract.defs import INF
from chessaccel.host.backends import BackendError
from chessaccel.host.engine.executors import Job, make_executor
from chessaccel.host.engine.search import SearchOptions
from chessaccel.host.engine.tt import TranspositionTable
from chessaccel.model.position import board_from_chess
from .hostbench import search_row
from .record import write_record

__all__ = ["run_workers", "main"]


def _warm_up(executor):
    """One depth-0 job on every actor (its backend's imports and tables), before the clock."""
    ray, backend = executor.ray, executor.backend
    job = Job(board_from_chess(chess.Board()), 0, -INF, INF)
    ray.get([actor.call.remote("search_many", [job]) for actor in backend.actors])


def run_workers(spec, workers, depth, hardware_plies, positions, exact=False, progress=print):
    """The bench ``positions`` searched on ``spec`` (a ``ray:...`` spec) with ``workers``
    actors: a dict of figures."""
    started = time.perf_counter()
    executor = make_executor(spec, workers)
    start_seconds = time.perf_counter() - started
    rows = []
    try:
        _warm_up(executor)
        for job in positions:
            options = (SearchOptions.exact(hardware_plies) if exact
                       else SearchOptions(hardware_plies=hardware_plies))
            result, row = search_row(executor, job, depth, options,
                                     None if exact else TranspositionTable(16))
            rows.append(row)
            seconds = row["seconds"]
            progress(f"  {workers} worker(s) {job.name:12s} score {result.score:6d} "
                     f"{rows[-1]['best_move']}  nodes {result.nodes:9d}  jobs {result.jobs:6d}"
                     f"  {seconds:7.2f} s")
        stats = dict(executor.stats)
        events = list(executor.events)
    finally:
        executor.close()
    seconds = sum(r["seconds"] for r in rows)
    nodes = sum(r["host_nodes"] + r["accelerator_nodes"] for r in rows)
    return {"workers": workers, "start_seconds": round(start_seconds, 2),
            "host_nodes": sum(r["host_nodes"] for r in rows),
            "accelerator_nodes": sum(r["accelerator_nodes"] for r in rows),
            "speculative_nodes": sum(r["speculative_nodes"] for r in rows),
            "jobs": sum(r["jobs"] for r in rows), "nodes": nodes,
            "seconds": round(seconds, 3),
            "nodes_per_second": round(nodes / seconds, 1) if seconds else None,
            "peak_busy": stats.get("peak_busy"), "events": events, "positions": rows}


def _disagreements(runs):
    out = []
    first = runs[0]
    for other in runs[1:]:
        for a, b in zip(first["positions"], other["positions"]):
            if (a["score"], a["best_move"]) != (b["score"], b["best_move"]):
                out.append(f"{a['name']}: {first['workers']} worker(s) {a['score']} "
                           f"{a['best_move']}, {other['workers']} {b['score']} {b['best_move']}")
    return out


def _draw(obj, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = obj["runs"]
    workers = [r["workers"] for r in runs]
    rates = [r["nodes_per_second"] for r in runs]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(workers, rates, "o-", label="measured")
    ax.plot(workers, [rates[0] * w / workers[0] for w in workers], "--", color="grey",
            label="linear in workers")
    ax.set_xlabel("Ray workers (actors)")
    ax.set_ylabel("nodes per second (host + accelerator)")
    ax.set_xticks(workers)
    ax.set_title(f"{obj['spec']} depth {obj['depth']} HardwarePlies {obj['hardware_plies']}"
                 f"{' exact' if obj['exact'] else ''}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _counts(text):
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"worker counts are integers such as 1,2,4,8, got "
                                         f"{text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"worker counts must be at least 1, got {text!r}")
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m chessaccel.lab.raybench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=_counts, default=[1, 2, 4, 8],
                        help="worker counts, comma-separated (default 1,2,4,8)")
    parser.add_argument("--depth", type=int, default=5, help="host search depth (default 5)")
    parser.add_argument("--hardware-plies", type=int, default=3,
                        help="plies each job searches above quiescence (default 3)")
    parser.add_argument("--spec", default="model", help="the backend each actor runs")
    parser.add_argument("--address", default=None,
                        help="a Ray cluster to join (auto, HOST:PORT); default: a local Ray")
    parser.add_argument("--exact", action="store_true",
                        help="the contract's plain alpha-beta (no table): results must agree")
    parser.add_argument("--positions", type=int, default=len(BENCH),
                        help=f"the first N bench positions (default all {len(BENCH)})")
    parser.add_argument("--out", default=os.path.join("out", "raybench.json"))
    args = parser.parse_args(argv)
    spec = f"ray:{args.spec}" + (f"@{args.address}" if args.address else "")
    positions = BENCH[:max(1, args.positions)]
    runs = []
    try:
        for workers in args.workers:
            print(f"{spec}: {workers} worker(s)", flush=True)
            runs.append(run_workers(spec, workers, args.depth, args.hardware_plies, positions,
                                    args.exact, progress=lambda line: print(line, flush=True)))
    except BackendError as error:
        print(f"raybench: error: {error}", file=sys.stderr)
        return 1
    base = runs[0]
    for run in runs:
        run["speedup_nps"] = round(run["nodes_per_second"] / base["nodes_per_second"], 3)
        run["speedup_time"] = round(base["seconds"] / run["seconds"], 3)
    differ = _disagreements(runs)
    obj = {"spec": spec, "depth": args.depth, "hardware_plies": args.hardware_plies,
           "exact": args.exact, "positions": [job.name for job in positions],
           "cpus": os.cpu_count(), "load_average": list(os.getloadavg()),
           "date": time.strftime("%Y-%m-%d %H:%M"), "runs": runs, "disagreements": differ}
    out, plot = write_record(obj, args.out, None, args.out, _draw, 1)
    print(f"\n{spec}, depth {args.depth}, HardwarePlies {args.hardware_plies}"
          f"{', exact' if args.exact else ''}, {len(positions)} bench positions, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{'workers':>7} {'nodes':>10} {'jobs':>7} {'seconds':>8} {'nodes/s':>9} "
          f"{'x nodes/s':>9} {'x time':>7} {'start s':>7}")
    for run in runs:
        print(f"{run['workers']:>7} {run['nodes']:>10} {run['jobs']:>7} {run['seconds']:>8.2f} "
              f"{run['nodes_per_second']:>9.0f} {run['speedup_nps']:>9.2f} "
              f"{run['speedup_time']:>7.2f} {run['start_seconds']:>7.1f}")
    for line in differ:
        print(f"differs: {line}")
    print(f"wrote {out} and {plot}")
    return 1 if differ and args.exact else 0


if __name__ == "__main__":
    sys.exit(main())

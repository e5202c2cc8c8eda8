"""``chessaccel bench --host``: the bench positions searched by the host on each backend, side
by side.

The same host search (iterative deepening to ``--host-depth``, HardwarePlies
``--hardware-plies``, a fresh table per position) runs on every backend named in
``--host-backends``; per backend: host nodes, accelerator nodes, jobs, seconds, jobs per second
and nodes per second. Every backend implements the same contract, so their scores and best
moves must agree position by position (and, where their executors run the search the same
way, their node counts too): a disagreement is printed and makes the command fail.
"""

import os
import time

import chess

from chessaccel.host.engine.executors import make_executor
from chessaccel.host.engine.search import HostSearch, Limits, SearchOptions
from chessaccel.host.engine.tt import TranspositionTable
from .record import write_record

__all__ = ["run", "search_bench", "search_row"]


def search_row(executor, job, depth, options, table):
    """One host search of ``job`` (a BenchJob) to ``depth``: (the SearchResult, its row of
    figures); a backend failure is a BackendError."""
    search = HostSearch(executor, table, options)
    start = time.perf_counter()
    result = search.search(chess.Board(job.fen), Limits(depth=depth))
    seconds = time.perf_counter() - start
    if result.error:
        from chessaccel.host.backends import BackendError
        raise BackendError(result.error)
    return result, {"name": job.name, "score": result.score,
                    "best_move": result.best_move.uci() if result.best_move else None,
                    "host_nodes": result.host_nodes,
                    "accelerator_nodes": result.accelerator_nodes,
                    "speculative_nodes": result.speculative_nodes,
                    "jobs": result.jobs, "seconds": round(seconds, 4)}


def search_bench(spec, depth, hardware_plies, accelerators, positions, progress=None):
    """Host searches of ``positions`` (BenchJobs) on backend ``spec``: a dict of figures."""
    executor = make_executor(spec, accelerators)
    rows = []
    try:
        for job in positions:
            result, row = search_row(executor, job, depth,
                                     SearchOptions(hardware_plies=hardware_plies),
                                     TranspositionTable(16))
            row["span_nodes"] = result.span_nodes
            row["seconds"] = row.pop("seconds")     # last, as it always was
            rows.append(row)
            seconds = row["seconds"]
            if progress:
                progress(f"  {spec:10s} {job.name:12s} score {result.score:6d} "
                         f"{rows[-1]['best_move']}  host {result.host_nodes:6d}  accelerator "
                         f"{result.accelerator_nodes:8d}  jobs {result.jobs:6d}  {seconds:.2f} s")
        parallel = executor.parallel
    finally:
        executor.close()
    seconds = sum(r["seconds"] for r in rows)
    nodes = sum(r["host_nodes"] + r["accelerator_nodes"] for r in rows)
    jobs = sum(r["jobs"] for r in rows)
    return {"backend": spec, "accelerators": accelerators, "parallel": parallel,
            "host_nodes": sum(r["host_nodes"] for r in rows),
            "accelerator_nodes": sum(r["accelerator_nodes"] for r in rows),
            "speculative_nodes": sum(r["speculative_nodes"] for r in rows),
            "span_nodes": sum(r["span_nodes"] for r in rows),
            "jobs": jobs, "nodes": nodes, "seconds": round(seconds, 3),
            "jobs_per_second": round(jobs / seconds, 1) if seconds else None,
            "nodes_per_second": round(nodes / seconds, 1) if seconds else None,
            "positions": rows}


def _disagreements(results):
    """Positions where backends differ in score or best move (the contract says they may not)."""
    out = []
    first = results[0]
    for other in results[1:]:
        for a, b in zip(first["positions"], other["positions"]):
            if (a["score"], a["best_move"]) != (b["score"], b["best_move"]):
                out.append(f"{a['name']}: {first['backend']} {a['score']} {a['best_move']}, "
                           f"{other['backend']} {b['score']} {b['best_move']}")
    return out


def run(args, positions, emit):
    """The ``bench --host`` command; ``emit(obj, lines)`` prints. Returns the exit status."""
    import sys
    specs = [s.strip() for s in args.host_backends.split(",") if s.strip()] \
        if args.host_backends else [args.backend]
    progress = None if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    results = [search_bench(spec, args.host_depth, args.hardware_plies, args.accelerators,
                            positions, progress) for spec in specs]
    disagree = _disagreements(results)
    obj = {"depth": args.host_depth, "hardware_plies": args.hardware_plies,
           "accelerators": args.accelerators, "backends": results, "disagreements": disagree}
    default = os.path.join("out", "bench-host.json")
    out, plot = write_record(obj, args.out, args.plot, default, _plot, indent=2)
    lines = [f"host bench, depth {args.host_depth}, HardwarePlies {args.hardware_plies}, "
             f"{args.accelerators} accelerator(s):"]
    for r in results:
        lines.append(f"  {r['backend']:12s} host nodes {r['host_nodes']:8d}  accelerator nodes "
                     f"{r['accelerator_nodes']:9d}  jobs {r['jobs']:7d}  {r['seconds']:8.2f} s  "
                     f"{r['jobs_per_second']:9.1f} jobs/s  {r['nodes_per_second']:10.1f} nodes/s")
    lines += [f"DISAGREE {d}" for d in disagree]
    lines.append(f"wrote {out} and {plot}")
    emit(obj, lines)
    return 1 if disagree else 0


def _plot(obj, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    results = obj["backends"]
    names = [r["backend"] for r in results]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.bar(names, [r["nodes_per_second"] for r in results])
    left.set_ylabel("nodes per second (host + accelerator)")
    left.set_yscale("log")
    right.bar(names, [r["jobs_per_second"] for r in results], color="tab:orange")
    right.set_ylabel("leaf jobs per second")
    right.set_yscale("log")
    fig.suptitle(f"host searches of the bench set, depth {obj['depth']}, "
                 f"HardwarePlies {obj['hardware_plies']}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

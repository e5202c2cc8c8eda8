"""Throughput of the OpenCL kernels on one device, with every figure checked.

    python -m chessaccel.lab.gpubench JOBS.npz --out RESULT.json [--backend opencl[:P]]
        [--stride N] [--perft-scale {none,small,large}] [--sweep]

Runs on the device machine (numpy and pyopencl only; no plotting, no python-chess):

1. the device, its driver and the compiler's report (registers, spills) of each kernel;
2. correctness: the check sample of the job file against its expected results (score, best
   move, node count);
3. leaf-search throughput over the job file's leaf jobs (every ``stride``-th one), with
   ``--sweep`` over work-group sizes and work-items per compute unit; the same batch sorted by
   node count, and a uniform batch (one job repeated) that shows what divergence costs;
4. perft, bulk and make-every-leaf, on the start position and Kiwipete, against the published
   counts (none with ``--perft-scale none``).

Every run is timed on the host clock around the launch and its read-back (the device finishes
before the clock stops). The JSON holds every run; the summary is printed last.
"""

import argparse
import json
import os
import platform
import re
import sys
import time

import numpy as np

from chessaccel.host.backends import get_backend
from chessaccel.host.opencl.device import OpenCLError
from .hostsplit import search_split

__all__ = ["main"]

KERNELS = ("search_jobs", "search_jobs_split", "perft_walk", "perft_bulk_1", "perft_bulk_2",
           "perft_bulk_3", "count_children", "expand", "list_moves")

#: perft runs (root name, depth, mode, plies finished per work-item) by scale
PERFT_PLAN = {
    "none": [],
    "small": [("startpos", 5, "bulk", 2), ("kiwipete", 4, "bulk", 2),
              ("startpos", 5, "make", 3), ("kiwipete", 4, "make", 3)],
    "large": [("startpos", 6, "bulk", 2), ("startpos", 7, "bulk", 2), ("startpos", 7, "bulk", 3),
              ("startpos", 8, "bulk", 2), ("startpos", 8, "bulk", 3),
              ("kiwipete", 5, "bulk", 2), ("kiwipete", 6, "bulk", 2), ("kiwipete", 6, "bulk", 3),
              ("kiwipete", 7, "bulk", 2), ("kiwipete", 7, "bulk", 3),
              ("startpos", 6, "make", 3), ("startpos", 7, "make", 3), ("startpos", 7, "make", 2),
              ("kiwipete", 5, "make", 3), ("kiwipete", 6, "make", 3)],
}


def _compiler_report(log):
    """ptxas lines of NVIDIA's -cl-nv-verbose log: kernel -> {registers, spill bytes, stack}."""
    report, current = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line) or \
            re.search(r"Function properties for (\w+)", line)
        if m:
            current = m.group(1)
            report.setdefault(current, {})
            continue
        if current is None:
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            report[current]["registers"] = int(m.group(1))
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            report[current].update(stack_frame=int(m.group(1)), spill_stores=int(m.group(2)),
                                   spill_loads=int(m.group(3)))
    return report


def _device_info(backend):
    d = backend.device
    dev = d.device
    info = {"name": d.name, "platform": d.platform_name, "driver": dev.driver_version,
            "opencl": dev.version, "compute_units": d.compute_units,
            "clock_mhz": dev.max_clock_frequency, "global_mem_bytes": int(dev.global_mem_size),
            "max_alloc_bytes": int(dev.max_mem_alloc_size), "is_gpu": d.is_gpu,
            "build_seconds": round(d.build_seconds, 3), "binary_from_cache": d.from_cache,
            "kernel_source_sha256": d.source_sha256,
            "perft_source_sha256": d.perft_source_sha256,
            "perft_switches": {"PERFT_LOCAL_LINES": d.perft_local_lines,
                               "PERFT_MAXRREG": d.perft_maxrreg,
                               "PERFT_SORT_LANES": d.perft_sort_lanes,
                               "PERFT_COUNT": d.perft_count,
                               "PERFT_MAGIC": d.perft_magic,
                               "PERFT_LEAF": d.perft_leaf,
                               "perft_local_size": backend._perft_local()},
            "defaults": dict(zip(("local_size", "threads_per_unit", "frontier_target"),
                                 backend._defaults())),
            "host": platform.node(), "python": platform.python_version(),
            "kernels": {name: d.kernel_info(d.kernel(name)) for name in KERNELS}}
    report = _compiler_report(d.build_log)
    for name, figures in report.items():
        info["kernels"].setdefault(name, {}).update(figures)
    info["build_log_tail"] = d.build_log[-4000:]
    return info


def _timed_search(backend, positions, params, label, results, **tunables):
    saved = {k: getattr(backend, k) for k in tunables}
    for k, v in tunables.items():
        setattr(backend, k, v)
    try:
        t0 = time.perf_counter()
        raw = backend.run_search(positions, params)
        wall = time.perf_counter() - t0
    finally:
        for k, v in saved.items():
            setattr(backend, k, v)
    nodes = int(raw["nodes"].sum())
    run = {"label": label, "jobs": len(positions), "nodes": nodes,
           "kernel_seconds": round(backend.last_run["seconds"], 6), "wall_seconds": round(wall, 6),
           "nodes_per_second": nodes / backend.last_run["seconds"],
           "work_items": backend.last_run["work_items"],
           "local_size": backend.last_run["local_size"], **tunables}
    results.append(run)
    print(f"  {label:40s} {len(positions):8d} jobs {nodes:13d} nodes "
          f"{run['kernel_seconds']:8.3f} s {run['nodes_per_second'] / 1e6:10.1f} M nodes/s",
          flush=True)
    return raw, run


def _timeline(times, nodes):
    """A device-split run's timeline from the device's clock (ns, a start and an end per job):
    when the queue emptied (the last job's start) and when the jobs ended, in seconds from the
    first start, and the node counts of the last five jobs to end; {} without timestamps."""
    timeline = {}
    t = times.astype(np.int64)
    if t.any():
        t0 = t[:, 0].min()
        ends = (t[:, 1] - t0) / 1e9
        timeline = {"queue_empty_seconds": round(float((t[:, 0].max() - t0) / 1e9), 4),
                    "end_seconds_quantiles": {str(q): round(float(np.quantile(ends, q)), 4)
                                              for q in (0.5, 0.9, 0.99, 0.999, 1)},
                    "last_jobs_nodes": [int(nodes[i]) for i in np.argsort(ends)[-5:]]}
    return timeline


def _job_source(data):
    """What the job file's leaf jobs are (benchjobs): the full-window positions 3 plies below
    the bench positions, or the jobs of host searches (their depth and plies per job)."""
    if "source" not in data or str(data["source"]) != "search":
        return {"kind": "full window"}
    return {"kind": "search", "search_depth": int(data["search_depth"]),
            "hardware_plies": int(data["hardware_plies"]),
            "positions": [str(n) for n in data["position_names"]],
            "executor": str(data["search_executor"])}


def run(args):
    data = np.load(args.jobs)
    backend = get_backend(args.backend)
    out = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "backend": args.backend,
           "command": "python -m chessaccel.lab.gpubench " + " ".join(args.argv),
           "job_file": os.path.basename(args.jobs), "job_source": _job_source(data)}
    t0 = time.perf_counter()
    out["device"] = _device_info(backend)
    out["device"]["open_seconds"] = round(time.perf_counter() - t0, 3)
    print(f"device: {backend.describe()}  compute units {out['device']['compute_units']}  "
          f"(opened in {out['device']['open_seconds']} s)", flush=True)
    for name, figures in out["device"]["kernels"].items():
        print(f"  kernel {name}: {figures}", flush=True)

    positions, params = data["positions"], data["params"]

    # 1. correctness of the check sample
    check = data["check_index"]
    raw = backend.run_search(positions[check], params[check])
    bad = np.flatnonzero((raw["scores"] != data["check_scores"])
                         | (raw["best_moves"] != data["check_best_moves"])
                         | (raw["nodes"] != data["check_nodes"]))
    out["check"] = {"jobs": int(len(check)), "nodes": int(raw["nodes"].sum()),
                    "mismatches": int(len(bad)), "first_mismatches": [int(check[i]) for i in bad[:10]],
                    "expected_from": str(data["reference_device"]),
                    "model_checked": int(data["model_checked"])}
    print(f"check sample: {len(check)} jobs, {len(bad)} mismatches", flush=True)

    # 2. leaf-search throughput
    runs = []
    chosen = np.arange(0, len(positions), args.stride)
    pos, par = positions[chosen], params[chosen]
    print(f"leaf search: {len(chosen)} jobs (every {args.stride})", flush=True)
    base_raw, _ = _timed_search(backend, pos, par, "default", runs)
    configs = []
    if args.sweep:
        for local in (32, 64, 128):
            for per_unit in (256, 512, 1024, 2048):
                configs.append({"local_size": local, "threads_per_unit": per_unit})
    for per_unit in args.threads:
        configs.append({"local_size": args.local, "threads_per_unit": per_unit})
    for cfg in configs:
        _timed_search(backend, pos, par, f"local {cfg['local_size']} x{cfg['threads_per_unit']}/CU",
                      runs, **cfg)
    best = max(runs, key=lambda r: r["nodes_per_second"])
    best_cfg = {k: best[k] for k in ("local_size", "threads_per_unit") if k in best}
    _timed_search(backend, pos, par, "best again", runs, **best_cfg)
    # jobs in order of node count: neighbours in a warp have similar work
    order = np.argsort(base_raw["nodes"], kind="stable")
    _timed_search(backend, pos[order], par[order], "sorted by node count", runs, **best_cfg)
    # the largest jobs first (as a host would order them by the node counts of its previous
    # iteration): the long jobs start at once instead of ending the batch alone
    longest_first = order[::-1]
    _timed_search(backend, pos[longest_first], par[longest_first], "longest first", runs, **best_cfg)
    # the tail: the batch without its largest jobs, and the largest job alone
    for q in (0.99, 0.9):
        keep = np.flatnonzero(base_raw["nodes"] <= np.quantile(base_raw["nodes"], q))
        _timed_search(backend, pos[keep], par[keep], f"without the top {round((1 - q) * 100)}% of jobs",
                      runs, **best_cfg)
    _timed_search(backend, pos[order[-1:]], par[order[-1:]], "the largest job alone", runs, **best_cfg)
    for budgets in args.split:
        budget, child_budget = budgets
        t0 = time.perf_counter()
        split = search_split(backend, pos, par, budget=budget, child_budget=child_budget)
        seconds = time.perf_counter() - t0
        same = all((split[k] == base_raw[k]).all() for k in ("scores", "best_moves", "nodes"))
        info = {k: backend.last_run[k] for k in ("split_jobs", "split_nodes", "split_rounds",
                                                 "split_child_jobs")}
        runs.append({"label": f"split past {budget} nodes (children past {child_budget})",
                     "jobs": int(len(pos)), "nodes": int(split["nodes"].sum()), "seconds": seconds,
                     "nodes_per_second": split["nodes"].sum() / seconds,
                     "first_launch_seconds": backend.last_run["seconds"],
                     "same_as_whole_jobs": bool(same), **info})
        print(f"  split past {budget}/{child_budget}: {seconds:.3f} s "
              f"({split['nodes'].sum() / seconds / 1e6:.1f} M nodes/s; first launch "
              f"{backend.last_run['seconds']:.3f} s) {info} same results: {same}", flush=True)
    for budget, min_depth in args.device_split:
        for per_unit in args.split_threads or [best_cfg.get("threads_per_unit")]:
            saved = backend.threads_per_unit
            backend.threads_per_unit = per_unit
            try:
                split = backend.run_search_split(pos, par, split_budget=budget, min_depth=min_depth,
                                                 timeline=True)
            finally:
                backend.threads_per_unit = saved
            same = all((split[k] == base_raw[k]).all() for k in ("scores", "best_moves", "nodes"))
            lr = dict(backend.last_run)
            timeline = _timeline(split["times"], base_raw["nodes"])
            runs.append({"label": f"split on the device past {budget} nodes (depth >= {min_depth})",
                         "timeline": timeline,
                         "jobs": int(len(pos)), "nodes": int(split["nodes"].sum()),
                         "kernel_seconds": round(lr["seconds"], 6),
                         "nodes_per_second": split["nodes"].sum() / lr["seconds"],
                         "threads_per_unit": per_unit, "same_as_whole_jobs": bool(same),
                         **{k: lr[k] for k in ("work_items", "local_size", "split_points", "entries",
                                               "entries_helped", "helper_nodes", "helper_nodes_used",
                                               "republished", "owner_waits", "owner_claimed",
                                               "split_budget", "min_depth")}})
            print(f"  device split past {budget} (depth >= {min_depth}, x{per_unit}/CU): "
                  f"{lr['seconds']:.3f} s {split['nodes'].sum() / lr['seconds'] / 1e6:.1f} M nodes/s "
                  f"split points {lr['split_points']} entries {lr['entries']} helped "
                  f"{lr['entries_helped']} same results: {same}", flush=True)
    # one job repeated: no divergence between lanes, the same instruction mix
    median_job = order[len(order) // 2]
    uniform = min(len(pos), max(1000, len(pos) // 4))
    _timed_search(backend, np.repeat(pos[median_job:median_job + 1], uniform, axis=0),
                  np.repeat(par[median_job:median_job + 1], uniform, axis=0),
                  "uniform (median job repeated)", runs, **best_cfg)
    out["leaf_search"] = {"jobs": int(len(chosen)), "stride": args.stride,
                          "nodes": int(base_raw["nodes"].sum()),
                          "node_count_quantiles": [int(np.quantile(base_raw["nodes"], q))
                                                   for q in (0, 0.25, 0.5, 0.75, 0.9, 0.99, 1)],
                          "best": best_cfg, "runs": runs}

    # 3. perft
    names = [str(n) for n in data["perft_names"]]
    perft_runs = []
    for name, depth, mode, leaf_depth in PERFT_PLAN[args.perft_scale]:
        backend.bulk_leaf_depth = backend.make_leaf_depth = leaf_depth
        i = names.index(name)
        depths = list(data["perft_depths"][i])
        expected = int(data["perft_counts"][i][depths.index(depth)]) if depth in depths else None
        # twice: the first ("cold") also allocates the expansion's level buffers, which the
        # backend keeps for the next call (as an engine keeps its working memory); the second
        # is the figure, both are recorded
        try:
            counts, times = [], []
            for _ in range(2):
                t0 = time.perf_counter()
                counts.append(backend.perft_positions(data["perft_positions"][i:i + 1], depth, mode))
                times.append(time.perf_counter() - t0)
        except OpenCLError as e:
            perft_runs.append({"root": name, "depth": depth, "mode": mode, "error": str(e)})
            print(f"  perft {name} {depth} {mode}: {e}", flush=True)
            continue
        nodes, seconds = counts[1], times[1]
        r = {"root": name, "depth": depth, "mode": mode, "leaf_depth_max": leaf_depth,
             "nodes": nodes, "expected": expected,
             "correct": counts[0] == counts[1] == expected, "seconds": round(seconds, 6),
             "nodes_per_second": nodes / seconds,
             "cold_seconds": round(times[0], 6), "cold_nodes_per_second": counts[0] / times[0],
             "leaf_seconds": backend.last_run.get("leaf_seconds"),
             "stage_seconds": backend.last_run.get("stage_seconds"),
             "frontiers": backend.last_run.get("frontiers"),
             "leaf_depth": backend.last_run.get("leaf_depth"),
             "launches": backend.last_run.get("launches")}
        perft_runs.append(r)
        print(f"  perft {name} {depth} {mode:4s} (leaf {leaf_depth}): {nodes:14d} "
              f"{'ok' if r['correct'] else 'WRONG (expected %s)' % expected}  {seconds:8.3f} s "
              f"{r['nodes_per_second'] / 1e9:8.2f} G nodes/s (first run {times[0]:.3f} s, "
              f"{r['cold_nodes_per_second'] / 1e9:.2f} G)", flush=True)
    out["perft"] = perft_runs
    out["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    return out


def _budgets(text):
    try:
        budget, child = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected BUDGET/CHILD node counts, got {text!r}") from None
    if budget <= 0 or child <= 0:
        raise argparse.ArgumentTypeError(f"node budgets must be positive, got {text!r}")
    return budget, child


def _split_args(text):
    try:
        budget, min_depth = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected BUDGET/MIN_DEPTH, got {text!r}") from None
    if budget <= 0 or min_depth < 0:
        raise argparse.ArgumentTypeError(f"expected a positive budget and a depth >= 0, got {text!r}")
    return budget, min_depth


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chessaccel.lab.gpubench",
                                description=__doc__.splitlines()[0])
    p.add_argument("jobs", help="job file from chessaccel.lab.benchjobs")
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--backend", default="opencl")
    p.add_argument("--stride", type=int, default=1, help="run every N-th leaf job")
    p.add_argument("--perft-scale", choices=sorted(PERFT_PLAN), default="small",
                   help="perft runs: none, small (seconds on PoCL) or large (the H100 record's)")
    p.add_argument("--sweep", action="store_true", help="sweep work-group sizes and occupancy")
    p.add_argument("--threads", type=int, nargs="*", default=[],
                   help="also run with these work-items per compute unit (at --local)")
    p.add_argument("--local", type=int, default=64, help="work-group size for --threads")
    p.add_argument("--split", type=_budgets, nargs="*", default=[], metavar="BUDGET/CHILD",
                   help="also run the batch with jobs past BUDGET nodes split (children past CHILD)")
    p.add_argument("--device-split", type=_split_args, nargs="*", default=[],
                   metavar="BUDGET/MIN_DEPTH",
                   help="also run the batch split on the device (search_jobs_split): jobs publish "
                        "nodes of depth >= MIN_DEPTH once past BUDGET nodes")
    p.add_argument("--split-threads", type=int, nargs="*", default=[],
                   help="work-items per compute unit for --device-split (default: the best)")
    args = p.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        result = run(args)
    except OpenCLError as e:
        print(f"gpubench: error: {e}", file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

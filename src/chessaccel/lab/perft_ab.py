"""A/B runs of the bulk perft kernels' build switches on a GPU (docs/opencl.md, "Perft"): every
variant built in one process beside the default kernels, all timed in rounds whose order
alternates (forward, reversed, forward), every count checked against the published one.

    python -m chessaccel.lab.perft_ab PLATFORM [NAME=SWITCHES ...] [--leaf3 NAME,...] [--rounds N]
        [--roots FILE.npz | --write-roots FILE.npz]

SWITCHES: comma-separated KEY:VALUE of device.BUILD_SWITCHES (e.g. r64=PERFT_MAXRREG:64,
loc=PERFT_LOCAL_LINES:1), then @N for a work-group size other than the default (base256=@256);
"base" (the default build) is always there. --leaf3 also times the
named variants with three plies per work-item (perft_bulk_3). Writes perft_ab.json under $OUT
(or /tmp) and prints a table last, then the leaf kernel's own rate (backend last_run's
leaf_seconds: the launch of the bulk kernel to its end, without the breadth-first expansion);
each run's line also gives the expansion's steps (last_run's stage_seconds: the count kernel,
the prefix sum on the host, the buffers, the expand kernel). The roots are benchjobs.PERFT_ROOTS, packed here, or read from
FILE.npz (written with --write-roots where python-chess is installed, for a GPU machine without
it). --kernel-times NAME,... then counts the start position's perft 8 and Kiwipete's perft 7
once more with each named variant on a queue that profiles (kernel_times): every launch's own
time on the device beside the call's, so the host's share of a call shows. ``python -m chessaccel.lab.device perft-ab`` runs it with the device set up. Exit status 1
when a count is wrong.
"""
import json, os, sys, time
import numpy as np
from chessaccel.host.opencl import OpenCLBackend
from chessaccel.host.opencl.backend import FUSED_LEAF
from chessaccel.lab.gpubench import _compiler_report

def kernel_times(b, positions, depth):
    """One bulk perft of ``b`` on a profiling queue: (nodes, the call's seconds, [(kernel, global
    size, seconds on the device)] in launch order). The queue is swapped back afterwards."""
    d = b.device
    cl = b._cl()
    queue = d.queue
    d.queue = cl.CommandQueue(d.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    launches = []
    enqueue = cl.enqueue_nd_range_kernel

    def recorded(q, kernel, global_size, local_size, *args, **kwargs):
        event = enqueue(q, kernel, global_size, local_size, *args, **kwargs)
        launches.append((kernel.function_name, int(global_size[0]), event))
        return event

    cl.enqueue_nd_range_kernel = recorded
    try:
        t0 = time.perf_counter()
        nodes = b.perft_positions(positions, depth, "bulk")
        seconds = time.perf_counter() - t0
        d.queue.finish()
    finally:
        cl.enqueue_nd_range_kernel = enqueue
        d.queue = queue
    return nodes, seconds, [(name, size, (ev.profile.end - ev.profile.start) * 1e-9)
                            for name, size, ev in launches]


def main(argv):
    PLAT = argv[0]
    OUT = os.environ.get("OUT", "/tmp")
    args = list(argv[1:])
    rounds, leaf3, roots_file, timed = 3, [], None, []
    variants = {"base": {}}
    locals_ = {}          # NAME -> work-group size (NAME=SWITCHES@LOCAL; default 64)
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--rounds":
            rounds = int(args[i + 1]); i += 2; continue
        if a in ("--roots", "--write-roots"):
            roots_file = args[i + 1]
            if a == "--write-roots":
                from chessaccel.lab.benchjobs import PERFT_ROOTS
                from chessaccel.host.opencl.layout import pack_positions
                from chessaccel.model.position import parse_position
                np.savez(roots_file, names=np.array([n for n, _, _ in PERFT_ROOTS]),
                         positions=pack_positions([parse_position(f)[0] for _, f, _ in PERFT_ROOTS]),
                         counts=json.dumps([{str(d): c for d, c in cs.items()} for _, _, cs in PERFT_ROOTS]))
                return 0
            i += 2; continue
        if a == "--kernel-times":
            timed = args[i + 1].split(","); i += 2; continue
        if a == "--leaf3":
            leaf3 = args[i + 1].split(","); i += 2; continue
        name, spec = a.split("=", 1)
        spec, _, local = spec.partition("@")
        variants[name] = {k: int(v) for k, v in (kv.split(":") for kv in spec.split(",") if kv)}
        if local:
            locals_[name] = int(local)
        i += 1

    if roots_file is None:
        from chessaccel.lab.benchjobs import PERFT_ROOTS
        from chessaccel.host.opencl.layout import pack_positions
        from chessaccel.model.position import parse_position
        roots = {name: (pack_positions([parse_position(fen)[0]]), counts) for name, fen, counts in PERFT_ROOTS}
    else:
        z = np.load(roots_file)
        roots = {str(n): (z["positions"][k:k + 1], {int(d): c for d, c in cs.items()})
                 for k, (n, cs) in enumerate(zip(z["names"], json.loads(str(z["counts"]))))}
    RUNS = (("startpos", 7), ("startpos", 8), ("kiwipete", 6), ("kiwipete", 7))
    res = {"platform": PLAT, "argv": list(argv), "variants": variants, "local_sizes": locals_,
           "reports": {}, "runs": []}
    backends = {}
    for name, ov in variants.items():
        t0 = time.perf_counter()
        b = OpenCLBackend(PLAT, overrides=ov or None, local_size=locals_.get(name))
        try:
            desc = b.describe()
        except Exception as e:
            print(f"variant {name} {ov} does not build: {e}", flush=True)
            res.setdefault("failed", {})[name] = str(e)
            continue
        rep = _compiler_report(b.device.build_log)
        res["reports"][name] = {k: rep.get(k) for k in ("perft_bulk_1", "perft_bulk_2", "perft_bulk_3",
                                                        "perft_fused_2")}
        print(f"built {name} {ov} in {time.perf_counter() - t0:.1f} s on {desc}:",
              res["reports"][name], flush=True)
        backends[name] = b
    res["device"] = desc

    configs = [(n, 2) for n in backends] + [(n, 3) for n in leaf3 if n in backends]
    for rnd in range(rounds):
        order = configs if rnd % 2 == 0 else configs[::-1]
        for name, leaf in order:
            b = backends[name]
            b.bulk_leaf_depth = leaf
            for root, depth in RUNS:
                pos, counts = roots[root]
                t0 = time.perf_counter()
                n = b.perft_positions(pos, depth, "bulk")
                s = time.perf_counter() - t0
                ok = n == counts[depth]
                leaf_s = b.last_run.get("leaf_seconds")
                stages = b.last_run.get("stage_seconds", {})
                res["runs"].append({"variant": name, "leaf_depth": leaf, "round": rnd, "root": root,
                                    "depth": depth, "nodes": n, "seconds": s, "correct": ok,
                                    "leaf_seconds": leaf_s, "stage_seconds": stages})
                print(f"r{rnd} {name:>8} leaf{leaf} {root} {depth}: {n} {'ok' if ok else 'WRONG'} "
                      f"{s:.3f} s {n / s / 1e9:.1f} G/s (leaf kernel {leaf_s:.3f} s; "
                      + ", ".join(f"{k} {v:.3f}" for k, v in stages.items()) + ")", flush=True)
    for name in (n for n in timed if n in backends):
        b = backends[name]
        b.bulk_leaf_depth = 2
        for root, depth in (("startpos", 8), ("kiwipete", 7)):
            pos, counts = roots[root]
            nodes, seconds, launches = kernel_times(b, pos, depth)
            on_device = sum(s for _, _, s in launches)
            res.setdefault("kernel_times", []).append(
                {"variant": name, "root": root, "depth": depth, "nodes": nodes,
                 "correct": nodes == counts[depth], "seconds": seconds, "launches": launches})
            print(f"\nkernel times, {name} {root} {depth}: {nodes} {'ok' if nodes == counts[depth] else 'WRONG'}"
                  f" in {seconds * 1e3:.2f} ms, {on_device * 1e3:.2f} ms of it in {len(launches)} "
                  f"launches on the device:", flush=True)
            for kname, size, s in launches:
                print(f"  {kname:<16} {size:>11,} work-items {s * 1e3:8.3f} ms", flush=True)
    json.dump(res, open(os.path.join(OUT, "perft_ab.json"), "w"), indent=1)

    print("\nvariant   leaf  registers/spill(st,ld)  " + "  ".join(f"{r}{d}" for r, d in RUNS) + "  (G leaves/s, min-max)")
    for name, leaf in configs:
        fused = leaf == 2 and backends[name].device.perft_leaf & FUSED_LEAF
        rep = res["reports"][name].get(f"perft_{'fused' if fused else 'bulk'}_{leaf}") or {}
        cells = []
        for root, depth in RUNS:
            rates = [r["nodes"] / r["seconds"] / 1e9 for r in res["runs"]
                     if r["variant"] == name and r["leaf_depth"] == leaf and r["root"] == root and r["depth"] == depth]
            cells.append(f"{min(rates):.0f}-{max(rates):.0f}")
        print(f"{name:>8}  {leaf}  {rep.get('registers')}/{rep.get('spill_stores')},{rep.get('spill_loads')}  "
              + "  ".join(cells))
    print("\nthe leaf kernel alone (G leaves/s, min-max; the rest of each run is the expansion):")
    for name, leaf in configs:
        cells = []
        for root, depth in RUNS:
            rates = [r["nodes"] / r["leaf_seconds"] / 1e9 for r in res["runs"]
                     if r["variant"] == name and r["leaf_depth"] == leaf and r["root"] == root
                     and r["depth"] == depth and r["leaf_seconds"]]
            cells.append(f"{min(rates):.0f}-{max(rates):.0f}" if rates else "-")
        print(f"{name:>8}  {leaf}  " + "  ".join(cells))
    correct = all(r["correct"] for r in res["runs"] + res.get("kernel_times", []))
    print("all correct:", correct)
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

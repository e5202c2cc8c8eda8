"""Exploration runs of the OpenCL kernels on a GPU (docs/opencl.md, "Splitting long jobs on the
device" and the perft A/B runs): not a benchmark record, the sweeps behind the choices.

    python -P tools/opencl_explore.py PLATFORM {all,perft,leaf} JOBS.npz
        [[base:][topK:]BUDGET/MIN_DEPTH/PER_CU/IDLE[/PRIO_NODES/PRIO_MAX/PRIO_EXIT/PRIO_FIRST/TAIL]
         ...] [basewhole]
        [alone] [again]   (base: a kernel built with the overrides in $EXPLORE_BASE (JSON), else
                           the .cl files in ../old_kernels beside tools/ when there are, else
                           with SPREAD_JOBS = SPLIT_PRIO = 0; $EXPLORE_NEW: the overrides of the
                           kernel the plain configurations use; $EXPLORE_KERNELS: {"NAME": overrides}
                           of more kernels, for configurations "NAME:..."; PRIO_EXIT 0 wait, 1 end,
                           2 still help)

- perft: bulk perft of the start position (7, 8) and Kiwipete (6, 7) with the current perft.cl
  and with ``perft_old.cl`` beside this script (an older perft.cl to compare with: e.g.
  ``git show main:host/opencl/kernels/perft.cl``), both built in the same process, alternating;
- leaf: the job file's batch with search_jobs, then split on the device (search_jobs_split)
  for each configuration, every result compared with the whole jobs', with each job's start and
  end from the device's clock (NVIDIA) and the nodes of the jobs ended every 0.5 s.

Writes explore.json under $OUT (or /tmp). Run with the project importable as chessaccel (the
H100 runs of 2026-11-24: the tree with a link per pyproject package-dir entry on PYTHONPATH).
"""
import json, os, sys, time
import numpy as np
import chessaccel.host.opencl.device as dev
from chessaccel.host.opencl import OpenCLBackend
from chessaccel.lab.gpubench import _compiler_report

PLAT = sys.argv[1]
OUT = os.environ.get("OUT", "/tmp")
here = os.path.dirname(os.path.abspath(__file__))
old_path = os.path.join(here, "perft_old.cl")
old_perft = open(old_path).read() if os.path.exists(old_path) else ""
old_dir = os.path.join(here, "..", "old_kernels")   # .cl files of an older version, for "base:"
orig = dev.kernel_source
def source(overrides=None):
    if overrides and overrides.get("AB_OLDDIR"):
        from chessaccel.host.opencl.layout import kernel_prelude
        return "\n".join([kernel_prelude()] + [f"// ---- {n} ----\n" + open(os.path.join(old_dir, n)).read()
                                              for n in dev.KERNEL_FILES])
    s = orig({k: v for k, v in (overrides or {}).items() if k != "AB_OLD"} or None)
    if overrides and overrides.get("AB_OLD"):
        head, rest = s.split("// ---- perft.cl ----\n")
        s = head + "// ---- perft.cl ----\n" + old_perft + "\n// old\n"
    return s
dev.kernel_source = source
res = {"perft": [], "leaf": []}
# $EXPLORE_NEW (JSON): the overrides of the kernel the runs use (default: none)
new = OpenCLBackend(PLAT, overrides=json.loads(os.environ.get("EXPLORE_NEW", "null")))
try:
    print(new.describe(), flush=True)
except Exception as e:
    print("BUILD FAILED:", e, "- retrying without the inline membar", flush=True)
    res["asm_failed"] = str(e)
    base = dev.kernel_source
    dev.kernel_source = lambda o=None: base(o).replace('#if defined(cl_nv_pragma_unroll)', '#if 0')
    dev._OPEN.clear()
    new = OpenCLBackend(PLAT)
    print(new.describe(), flush=True)
rep = _compiler_report(new.device.build_log)
for k in ("search_jobs", "search_jobs_split", "perft_bulk_1", "perft_bulk_2", "perft_bulk_3"):
    print(k, rep.get(k), flush=True)
res["report_new"] = rep
mode = sys.argv[2] if len(sys.argv) > 2 else "all"
data = np.load(sys.argv[3] if len(sys.argv) > 3 else "jobs.npz")
if mode in ("all", "perft"):
    # the old perft.cl's bulk kernels from the main program (no program of their own, whose
    # source would be the current perft.cl: device.BUILD_SWITCHES)
    old = OpenCLBackend(PLAT, overrides={"AB_OLD": 1, "PERFT_LOCAL_LINES": 0,
                                          "PERFT_SORT_LANES": 0, "PERFT_COUNT": 0})
    print("old built", old.describe(), flush=True)
    res["report_old"] = _compiler_report(old.device.build_log)
    names = [str(n) for n in data["perft_names"]]
    for rnd in range(2):
        for which, b in (("new", new), ("old", old)) if rnd == 0 else (("old", old), ("new", new)):
            for name, depth in (("startpos", 7), ("startpos", 8), ("kiwipete", 6), ("kiwipete", 7)):
                i = names.index(name)
                t0 = time.perf_counter()
                n = b.perft_positions(data["perft_positions"][i:i + 1], depth, "bulk")
                s = time.perf_counter() - t0
                depths = list(data["perft_depths"][i])
                ok = n == int(data["perft_counts"][i][depths.index(depth)])
                res["perft"].append({"kernel": which, "root": name, "depth": depth, "seconds": s,
                                     "nps": n / s, "correct": ok})
                print(f"perft {which} {name} {depth}: {n} {'ok' if ok else 'WRONG'} {s:.3f} s {n/s/1e9:.1f} G/s", flush=True)
if mode in ("all", "leaf"):
    pos, par = data["positions"], data["params"]
    new.threads_per_unit = 256
    new.local_size = 64
    t0 = time.perf_counter(); whole = new.run_search(pos, par); s = new.last_run["seconds"]
    tot = int(whole["nodes"].sum())
    print(f"whole: {tot} nodes {s:.3f} s {tot/s/1e6:.1f} M/s", flush=True)
    res["leaf"].append({"label": "whole", "seconds": s, "nodes": tot})
    # "base:..." runs a configuration on a kernel built without the scheduling switches
    base = None
    if any(c.startswith("base") for c in sys.argv[4:]):
        base_overrides = json.loads(os.environ.get("EXPLORE_BASE", "null")) or \
            ({"AB_OLDDIR": 1} if os.path.isdir(old_dir) else {"SPREAD_JOBS": 0, "SPLIT_PRIO": 0})
        base = OpenCLBackend(PLAT, overrides=base_overrides)
        print("base kernel:", base_overrides, flush=True)
        base.threads_per_unit, base.local_size = 256, 64
        print("base kernel:", {k: _compiler_report(base.device.build_log).get(k)
                               for k in ("search_jobs", "search_jobs_split")}, flush=True)
    # $EXPLORE_KERNELS (JSON {"NAME": overrides}): more kernels, a configuration "NAME:..." runs
    # on kernel NAME (all built in this process, so the runs are A/B)
    more = {}
    for name, ov in (json.loads(os.environ.get("EXPLORE_KERNELS", "null")) or {}).items():
        try:
            more[name] = OpenCLBackend(PLAT, overrides=ov)
            more[name].describe()
        except Exception as e:
            print(f"kernel {name}: {ov} does not build: {e}", flush=True)
            more.pop(name, None)
            continue
        more[name].threads_per_unit, more[name].local_size = 256, 64
        print(f"kernel {name}: {ov}", {k: _compiler_report(more[name].device.build_log).get(k)
                                       for k in ("search_jobs_split",)}, flush=True)
    if "basewhole" in sys.argv[4:]:
        base.run_search(pos, par); s = base.last_run["seconds"]
        print(f"whole (base kernel): {s:.3f} s {tot/s/1e6:.1f} M/s", flush=True)
    configs = [(c.split(":")[:-1], tuple(int(x) for x in c.split(":")[-1].split("/")))
               for c in sys.argv[4:] if c.split(":")[-1][0].isdigit()] or [([], (20000, 1, 256, 2048))]
    for flags, (budget, md, per_unit, idle, *prio) in configs:
        if any(f not in more and f != "base" and not f.startswith("top") for f in flags):
            print("skipped (kernel not built):", flags, flush=True)
            continue
        prio_nodes, prio_max, prio_exit, prio_first, tail = (list(prio) + [0, 0, 0, 0, 0])[:5]
        use_base = "base" in flags
        b = base if use_base else new
        for f in flags:
            if f in more:
                b = more[f]
        b.threads_per_unit = per_unit
        # "topK": the K largest jobs (by the whole run's node counts: an oracle, for diagnosis)
        # moved to the front of the batch, the others in file order behind them
        top = max([int(f[3:]) for f in flags if f.startswith("top")] or [0])
        perm = np.arange(len(pos))
        if top:
            first = np.argsort(whole["nodes"], kind="stable")[::-1][:top]
            perm = np.concatenate([first, np.setdiff1d(perm, first)])
        sp = b.run_search_split(pos[perm], par[perm], split_budget=budget, min_depth=md, timeline=True,
                                max_idle=idle, prio_nodes=prio_nodes, prio_max=prio_max or None,
                                prio_exit=int(prio_exit), prio_first=prio_first,
                                **({"tail_budget": tail} if tail else {}))
        inv = np.empty_like(perm); inv[perm] = np.arange(len(perm))
        sp = {k: v[inv] for k, v in sp.items()}
        lr = dict(b.last_run)
        t = sp["times"].astype(np.int64); t0 = t[:, 0].min(); st = (t[:, 0] - t0) / 1e9; en = (t[:, 1] - t0) / 1e9
        nn = whole["nodes"].astype(np.int64)
        print(f"  queue empty at {st.max():.3f} s; end quantiles 50/90/99/99.9/100%: "
              + " ".join(f"{np.quantile(en, q):.3f}" for q in (0.5, 0.9, 0.99, 0.999, 1)), flush=True)
        order = np.argsort(en)
        cum = np.cumsum(nn[order])
        for tt in np.arange(0.5, en.max() + 0.5, 0.5):
            k = np.searchsorted(en[order], tt)
            print(f"    by {tt:4.1f} s: {cum[k-1] if k else 0:>11d} nodes of jobs ended, {k} jobs", flush=True)
        last = order[-12:]
        print("  last jobs (start, end, nodes):", [(round(st[i], 2), round(en[i], 2), int(nn[i])) for i in last], flush=True)
        big = np.argsort(nn)[-12:]
        print("  largest jobs (start, end, nodes):", [(round(st[i], 2), round(en[i], 2), int(nn[i])) for i in big], flush=True)
        lr["timeline"] = {"start": st.round(4).tolist()[:0], "end_quantiles": [float(np.quantile(en, q)) for q in (0.5, 0.9, 0.99, 0.999, 1)], "queue_empty": float(st.max())}
        same = all((sp[k] == whole[k]).all() for k in ("scores", "best_moves", "nodes"))
        nbad = int(((sp["nodes"] != whole["nodes"]) | (sp["scores"] != whole["scores"]) | (sp["best_moves"] != whole["best_moves"])).sum())
        lr.update(same=same, mismatches=nbad, per_unit=per_unit, base_kernel=use_base, flags=flags)
        res["leaf"].append(lr)
        print(f"{':'.join(flags)} split {budget}/{md} x{per_unit} idle {idle} prio {prio_nodes}/{lr['prio_max']}/{prio_exit}/{prio_first} tail {tail or budget} events {lr['prio_events']}: {lr['seconds']:.3f} s {tot/lr['seconds']/1e6:.1f} M/s sp {lr['split_points']} entries {lr['entries']} helped {lr['entries_helped']} hn {lr['helper_nodes']/1e6:.0f}M used {lr['helper_nodes_used']/1e6:.0f}M republished {lr['republished']} waits {lr['owner_waits']} claimed {lr['owner_claimed']} same {same} bad {nbad}", flush=True)
    # the largest jobs alone, split with every lane free to help: their critical path
    big = np.argsort(whole["nodes"])[::-1]
    new.threads_per_unit = 256
    for k in ((1, 12) if "alone" in sys.argv[4:] else ()):
        sel = big[:k]
        new.run_search(pos[sel], par[sel]); s0 = new.last_run["seconds"]
        for budget in (100000, 10000, 2000):
            sp = new.run_search_split(pos[sel], par[sel], split_budget=budget, min_depth=0, max_idle=1 << 20)
            lr = dict(new.last_run)
            ok = all((sp[q] == whole[q][sel]).all() for q in ("scores", "best_moves", "nodes"))
            res["leaf"].append({"alone": k, **lr, "unsplit_seconds": s0, "same": ok})
            print(f"largest {k} alone: unsplit {s0:.3f} s; split {budget}: {lr['seconds']:.3f} s sp {lr['split_points']} entries {lr['entries']} helped {lr['entries_helped']} republished {lr['republished']} waits {lr['owner_waits']} claimed {lr['owner_claimed']} hn {lr['helper_nodes']/1e6:.1f}M used {lr['helper_nodes_used']/1e6:.1f}M same {ok}", flush=True)
    if "again" in sys.argv[4:]:
        t0 = time.perf_counter(); whole2 = new.run_search(pos, par); s = new.last_run["seconds"]
        print(f"whole again: {s:.3f} s {tot/s/1e6:.1f} M/s", flush=True)
json.dump(res, open(os.path.join(OUT, "explore.json"), "w"), indent=1, default=str)

"""Nsight Compute on the leaf-search kernel (docs/opencl.md, "Measured on the H100"): ncu does not
profile NVIDIA's OpenCL, so search_jobs' PTX, as NVIDIA's OpenCL compiler writes it, is launched
through CUDA (CuPy) on jobs of the benchmark's job file.

    python -m chessaccel.lab.search_profile prepare DIR JOBS.npz [NAME=OVERRIDES ...]
        builds the search program on the NVIDIA OpenCL platform ("base": the committed kernel;
        NAME=K:V,K:V builds with those kernel overrides) and writes DIR/NAME.ptx; runs the whole
        job file once through OpenCL (search_jobs) for each job's node count and writes two job
        sets: DIR/mixed.npz (the jobs below the 90th percentile of node counts, in the file's
        order: the bulk of the batch, lanes of a warp on different jobs, a dozen jobs per lane
        so that the end of the run, where a few lanes of a warp are left, weighs little; every
        8th of the jobs below the 99th percentile, the first choice, gave a run that was mostly
        such an end) and DIR/uniform.npz (the
        median job repeated as often: no divergence), each with its expected node total
    python -m chessaccel.lab.search_profile launch PTX JOBS.npz
        launches search_jobs of PTX on the job set through CuPy at the benchmark's shape (256
        work-items per multiprocessor, work-groups of 64), twice, and prints each launch's node
        total, its check against the OpenCL run and its time
    python -m chessaccel.lab.search_profile ab JOBS.npz ROUNDS NAME=OVERRIDES[/PER_UNIT] ...
        A/B of kernel variants in one process, through OpenCL as the benchmark runs them (256
        work-items per multiprocessor unless PER_UNIT says, work-groups of 64): for each round (forward, then
        reversed, ...) each variant's whole batch with search_jobs and split on the device past
        100,000 nodes (search_jobs_split), every result compared with the first run's
    python -m chessaccel.lab.search_profile summary SOURCE.csv
        reads ncu's source page (`python -m chessaccel.lab.device search-profile` writes OUT/base_*_source.csv) and prints the totals (warp
        instructions, thread instructions, lanes per instruction), the blocks between
        convergence points (BSSY/BSYNC, as the compiler placed them: each block's share of the
        stall samples and of the instructions, its lanes per instruction) and the branches
        where the warp split most often
"""
import re, sys, time
import numpy as np

LOCAL = 64
PER_UNIT = 256


def prepare(folder, job_file, specs):
    import os
    from chessaccel.host.opencl import OpenCLBackend
    os.makedirs(folder, exist_ok=True)
    variants = {"base": {}}
    for spec in specs:
        name, _, kv = spec.partition("=")
        variants[name] = {k: int(v) for k, v in (x.split(":") for x in kv.split(",") if x)}
    platform = os.environ.get("PROFILE_PLATFORM", "nvidia")
    backend = None
    for name, overrides in variants.items():
        b = OpenCLBackend(platform, overrides=overrides or None)
        d = b.device
        ptx = d.program.get_info(d.cl.program_info.BINARIES)[0]
        with open(f"{folder}/{name}.ptx", "wb") as f:
            f.write(ptx)
        regs = re.findall(r"Compiling entry function '(search_jobs\w*)'.*?Used (\d+) registers",
                          d.build_log or "", re.S)
        print(name, overrides, "registers:", regs, d.kernel_info(b.kernel("search_jobs")), flush=True)
        backend = backend or b
    z = np.load(job_file)
    positions, params = z["positions"], z["params"]
    t0 = time.perf_counter()
    out = backend.run_search(positions, params)
    seconds = time.perf_counter() - t0
    nodes = out["nodes"].astype(np.int64)
    print(f"whole file: {len(nodes)} jobs {int(nodes.sum())} nodes {seconds:.2f} s", flush=True)
    cap = np.quantile(nodes, 0.9)
    bulk = np.flatnonzero(nodes < cap)
    median = int(np.flatnonzero(nodes == int(np.median(nodes[bulk])))[0]) \
        if np.any(nodes == int(np.median(nodes[bulk]))) else int(bulk[np.argsort(nodes[bulk])[len(bulk) // 2]])
    sets = {"mixed": bulk, "uniform": np.full(len(bulk), median)}
    for label, index in sets.items():
        np.savez(f"{folder}/{label}.npz", positions=positions[index], params=params[index],
                 nodes=nodes[index])
        print(f"{label}: {len(index)} jobs, {int(nodes[index].sum())} nodes", flush=True)


def launch(ptx, job_file):
    import cupy as cp
    from chessaccel.host.opencl.layout import line_tables, eval_table
    # NVIDIA's OpenCL reads the global offset and the group offset from %envreg registers, which
    # a CUDA launch does not set: they are 0 here
    with open(ptx, errors="replace") as f:
        text = re.sub(r"%envreg\d+", "0", f.read().replace("\x00", ""))
    # only search_jobs (with the declarations before it): the CUDA driver refused the whole
    # program's PTX (CUDA_ERROR_INVALID_IMAGE on 2026-11-25 18:41)
    parts = re.split(r"(?m)^\s*// \.globl\s+(\w+)\s*$", text)
    text = parts[0] + "".join("\t// .globl\t%s\n%s" % (parts[i], parts[i + 1])
                              for i in range(1, len(parts), 2) if parts[i] == "search_jobs")
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    kernel = cp.RawModule(path=f.name).get_function("search_jobs")
    z = np.load(job_file)
    n = len(z["positions"])
    expected = int(z["nodes"].sum())
    positions = cp.asarray(np.ascontiguousarray(z["positions"]))
    params = cp.asarray(np.ascontiguousarray(z["params"]))
    values = cp.asarray(eval_table())
    lines = cp.asarray(line_tables())
    counter = cp.zeros(1, dtype=cp.uint32)
    stop = cp.zeros(n, dtype=cp.uint32)     # search_jobs' stop flags: none set
    scores = cp.zeros(n, dtype=cp.int32)
    moves = cp.zeros(n, dtype=cp.uint32)
    nodes = cp.zeros(n, dtype=cp.uint64)
    dummy = cp.zeros(8, dtype=cp.uint8)
    units = cp.cuda.Device().attributes["MultiProcessorCount"]
    groups = max(1, min(n, units * PER_UNIT) // LOCAL)
    for rep in range(2):
        counter.fill(0)
        nodes.fill(0)
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        kernel((groups,), (LOCAL,), (positions, params, np.uint32(n), np.uint64(0), counter,
                                     stop, scores, moves, nodes, np.uint32(0), dummy, dummy, values,
                                     lines))
        cp.cuda.Device().synchronize()
        s = time.perf_counter() - t0
        total = int(nodes.sum())
        same = bool((nodes.get().astype(np.int64) == z["nodes"]).all())
        print(f"{ptx} {job_file}: launch {rep}: {total} nodes "
              f"{'ok' if same and total == expected else 'WRONG'} {s * 1e3:.1f} ms "
              f"{total / s / 1e6:.0f} M nodes/s", flush=True)


def summary(path):
    import csv
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[1]
    data = rows[2:]
    col = {h: i for i, h in enumerate(header)}

    def num(r, k):
        try:
            return float(r[col[k]].replace(",", ""))
        except ValueError:
            return 0.0
    SAMPLES, EXEC, THREADS = ("Warp Stall Sampling (All Samples)", "Instructions Executed",
                              "Thread Instructions Executed")
    total_s = sum(num(r, SAMPLES) for r in data)
    total_i = sum(num(r, EXEC) for r in data)
    total_t = sum(num(r, THREADS) for r in data)
    print(f"{len(data)} SASS instructions; {total_i:.4g} warp instructions executed, "
          f"{total_t:.4g} thread instructions: {total_t / total_i:.2f} lanes per instruction")
    cuts = [0] + [i for i, r in enumerate(data) if r[col["Source"]].split()[0] in ("BSSY", "BSYNC")
                  ] + [len(data)]
    print("block (SASS index)   samples  instructions  lanes/instr  first executions")
    for a, b in zip(cuts, cuts[1:]):
        if b <= a:
            continue
        s = sum(num(r, SAMPLES) for r in data[a:b])
        i = sum(num(r, EXEC) for r in data[a:b])
        t = sum(num(r, THREADS) for r in data[a:b])
        if s / total_s >= 0.005 or i / total_i >= 0.005:
            print(f"{a:5d}-{b - 1:<5d} {100 * s / total_s:14.1f}% {100 * i / total_i:12.1f}% "
                  f"{t / max(i, 1):12.1f} {num(data[a], EXEC):16.4g}  {data[a][col['Source']].strip()[:40]}")
    split = sorted(range(len(data)), key=lambda k: -num(data[k], "Divergent Branches"))[:12]
    print("branches that split the warp most often:")
    for k in sorted(split):
        print(f"{k:5d} {num(data[k], 'Divergent Branches'):.4g} of {num(data[k], EXEC):.4g} "
              f"executions, {num(data[k], 'Avg. Threads Executed'):.0f} lanes")


def ab(job_file, rounds, specs):
    from chessaccel.host.opencl import OpenCLBackend
    variants, per_unit = {}, {}
    for spec in specs:
        name, _, kv = spec.partition("=")
        kv, _, threads = kv.partition("/")      # NAME=OVERRIDES/WORK_ITEMS_PER_UNIT
        variants[name] = {k: int(v) for k, v in (x.split(":") for x in kv.split(",") if x)}
        per_unit[name] = int(threads) if threads else PER_UNIT
    import os
    platform = os.environ.get("PROFILE_PLATFORM", "nvidia")
    backends = {name: OpenCLBackend(platform, overrides=ov or None, local_size=LOCAL,
                                    threads_per_unit=per_unit[name])
                for name, ov in variants.items()}
    for b in backends.values():     # build every program before any run is timed
        b.kernel("search_jobs")
        b.kernel("search_jobs_split")
    z = np.load(job_file)
    positions, params = z["positions"], z["params"]
    reference = None
    names = list(variants)
    for r in range(int(rounds)):
        for name in (names if r % 2 == 0 else names[::-1]):
            b = backends[name]
            for kind in ("whole", "split"):
                t0 = time.perf_counter()
                if kind == "whole":
                    out = b.run_search(positions, params)
                else:
                    out = b.run_search_split(positions, params, split_budget=100_000, min_depth=0)
                seconds = time.perf_counter() - t0
                got = (out["scores"], out["best_moves"], out["nodes"])
                if reference is None:
                    reference = got
                same = all(np.array_equal(a, c) for a, c in zip(got, reference))
                total = int(out["nodes"].sum())
                print(f"round {r} {name} {kind}: {seconds:.3f} s {total / seconds / 1e6:.0f} M "
                      f"nodes/s {'same' if same else 'DIFFERENT'}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2])
        sys.exit(0)
    if sys.argv[1] == "ab":
        ab(sys.argv[2], sys.argv[3], sys.argv[4:])
        sys.exit(0)
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        launch(sys.argv[2], sys.argv[3])

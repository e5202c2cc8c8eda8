"""One table of speed for every implementation of the contract: nodes per second.

    python -m chessaccel.lab.crossbench [--h100 docs/benchmarks/opencl-h100.json]
        [--h100-batches docs/benchmarks/opencl-h100-batches.json]
        [--out docs/benchmarks] [--skip-rtl] [--skip-stockfish] [--render-only]

Search (nodes/s, one node = one position entered, docs/semantics.md section 4):

- Python model, PoCL on one CPU core and on all of them: the same sample of the OpenCL
  benchmark's leaf jobs (lab/benchjobs.py: every position 3 plies below the bench
  positions, depth 3, full window), every result equal to the model's;
- Verilator: the RTL search core simulated, on the bench set (contract/bench.py), with its cycles
  per node;
- projected FPGA: Fmax x cores per ECP5-85F / cycles per node, from the synthesis and RTL bench
  records when the repository holds them (synth/**/*.json), else from the figures in
  docs/synthesis.md and the Verilator run above; the JSON names what it used and its commit;
- H100: the record of ``python -m chessaccel.lab.gpubench`` run on an H100 (all leaf
  jobs in one batch), and from gpuscale's summary of several batches
  (lab/gpuscale.py) the largest batch of the jobs real host searches hand out;
- Stockfish (Debian's, one thread): its own search on the bench positions (a different search
  and evaluation: its nodes are not ours, the rate is given for scale).

Perft (leaves/s): PoCL and the H100 in both counting modes, the model, Stockfish's perft.

Writes backends.json, backends.md and backends.png in --out. Timings on this machine depend on
its load, which the JSON records.
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from chessaccel.contract.defs import INF
from chessaccel.contract.bench import BENCH

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_JOBS = ROOT / "out" / "opencl" / "jobs.npz"
DEFAULT_H100 = ROOT / "docs" / "benchmarks" / "opencl-h100.json"
#: gpuscale's summary of the H100 records of several batches (lab/gpuscale.py)
DEFAULT_H100_BATCHES = ROOT / "docs" / "benchmarks" / "opencl-h100-batches.json"
#: LUT4 of an LFE5U-85F (the device of docs/synthesis.md)
ECP5_85F_LUT4 = 83_640
#: Fraction of the LUT4s a design can use and still route, for the estimate of cores per
#: chip when no board record with several cores exists.
ROUTABLE_FRACTION = 0.7
STOCKFISH = "/usr/games/stockfish"
#: The figures the project aims at (brief and issue 10), drawn on the plot.
GOALS = {"search": [(40e6, "40 M per ECP5-85F"), (1e9, "1 G on an H100")],
         "perft": [(300e9, "300 G on an H100")]}
STOCKFISH_DEPTH = 16


def _git_commit(path=None):
    cmd = ["git", "-C", str(ROOT), "log", "-1", "--format=%h"]
    if path is not None:
        cmd += ["--", str(path)]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def _cpu_seconds():
    """CPU seconds of this process and its finished children: on a shared machine the time a
    single-threaded run really spent on a core, whatever the load."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _load(progress):
    return {"load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}


# --- jobs ------------------------------------------------------------------------------------

def _job_file(path, progress):
    if not Path(path).exists():
        from chessaccel.lab import benchjobs
        print(f"building {path} (python -m chessaccel.lab.benchjobs)", file=progress)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        benchjobs.build(path, progress=progress)
    data = np.load(path)
    if "sides" in data:
        sides = data["sides"]
    else:   # 3 plies below each bench position: the other side moves
        from chessaccel.model.position import parse_position
        bench_sides = np.array([parse_position(j.fen)[0].side for j in BENCH], dtype=np.uint8)
        sides = bench_sides[data["bench_index"]] ^ 1
    return data, sides


# --- workers: one process per PoCL configuration (affinity and thread count are fixed before
# PoCL starts) ------------------------------------------------------------------------------

def _worker(args):
    if args.cores == 1:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from chessaccel.host.opencl import OpenCLBackend
    data = np.load(args.jobs)
    idx = np.arange(0, len(data["positions"]), args.stride)
    b = OpenCLBackend(args.platform)
    b.device
    out = {"device": b.describe(), "compute_units": b.device.compute_units,
           "affinity": sorted(os.sched_getaffinity(0))}
    cpu = time.process_time()
    raw = b.run_search(data["positions"][idx], data["params"][idx])
    cpu = time.process_time() - cpu
    out["search"] = {"jobs": int(len(idx)), "stride": args.stride, "nodes": int(raw["nodes"].sum()),
                     "seconds": b.last_run["seconds"], "cpu_seconds": cpu,
                     "nodes_list": raw["nodes"].tolist(),
                     "scores": raw["scores"].tolist(), "best_moves": raw["best_moves"].tolist()}
    out["perft"] = []
    names = [str(n) for n in data["perft_names"]]
    for name, depth in (("startpos", 5), ("kiwipete", 4)):
        i = names.index(name)
        for mode in ("bulk", "make"):
            t0, cpu = time.perf_counter(), time.process_time()
            nodes = b.perft_positions(data["perft_positions"][i:i + 1], depth, mode)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu
            expected = int(data["perft_counts"][i][list(data["perft_depths"][i]).index(depth)])
            out["perft"].append({"root": name, "depth": depth, "mode": mode, "nodes": nodes,
                                 "correct": nodes == expected, "seconds": seconds,
                                 "cpu_seconds": cpu})
    json.dump(out, sys.stdout)
    return 0


def _pocl(jobs, stride, cores, progress):
    env = dict(os.environ)
    if cores == 1:
        env["POCL_MAX_PTHREAD_COUNT"] = "1"
    cmd = [sys.executable, "-P", "-m", "chessaccel.lab.crossbench", "--worker", "--jobs", str(jobs),
           "--stride", str(stride), "--cores", str(cores)]
    print(f"PoCL on {'one core' if cores == 1 else 'all cores'}: every {stride}-th leaf job ...",
          file=progress, flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        raise SystemExit(f"PoCL worker failed: {r.stderr.strip().splitlines()[-1:]}")
    return json.loads(r.stdout)


# --- the other implementations ---------------------------------------------------------------

def _model(data, sides, stride, progress):
    from chessaccel.host.opencl.layout import unpack_positions
    from chessaccel.model.search import search
    idx = np.arange(0, len(data["positions"]), stride)
    boards = unpack_positions(data["positions"][idx], sides[idx])
    print(f"model: {len(idx)} leaf jobs (every {stride}-th) ...", file=progress, flush=True)
    t0, cpu = time.perf_counter(), time.process_time()
    results = [search(b, int(d), int(a), int(be)) for b, (d, a, be, _) in zip(boards, data["params"][idx])]
    return idx, results, time.perf_counter() - t0, time.process_time() - cpu


def _rtl(progress):
    from chessaccel.host.backends import BackendError
    from chessaccel.host.backends.rtl import RtlBackend
    from chessaccel.model.position import parse_position
    jobs = [(parse_position(j.fen)[0], j.depth, -INF, INF) for j in BENCH]
    print("Verilator: the RTL search core on the bench set ...", file=progress, flush=True)
    backend = RtlBackend()
    try:
        backend.search_many(jobs[:1])       # builds (or finds) the simulator: not timed
        t0, cpu = time.perf_counter(), _cpu_seconds()
        results = backend.search_many(jobs)
    except BackendError as e:
        return {"error": str(e)}
    seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - cpu
    nodes = sum(r["nodes"] for r in results)
    cycles = sum(r["cycles"] for r in results)
    return {"what": "bench set (contract/bench.py), Verilator simulation of the SearchCore",
            "jobs": len(jobs), "nodes": nodes, "cycles": cycles, "seconds": seconds,
            "cpu_seconds": cpu, "nodes_per_second": nodes / cpu, "cycles_per_node": cycles / nodes,
            "commit": _git_commit()}


def _records():
    """JSON records under synth/ (synthesis, board and RTL bench records), newest first."""
    found = []
    for path in sorted((ROOT / "src" / "chessaccel" / "synth").rglob("*.json")):
        try:
            found.append((path, json.loads(path.read_text())))
        except (OSError, ValueError):
            continue
    return found


def _synthesis_table_row(block):
    """(LUT4, Fmax MHz) of a block in docs/synthesis.md's table of measured figures."""
    header = None
    for line in (ROOT / "docs" / "synthesis.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "block" and any(c.startswith("Fmax") for c in cells):
            header = cells
        elif header and cells and cells[0] == block:
            row = dict(zip(header, cells))
            lut4 = next(v for k, v in row.items() if k.startswith("LUT4"))
            fmax = next(v for k, v in row.items() if k.startswith("Fmax"))
            return int(lut4.replace(",", "")), float(re.match(r"[\d.]+", fmax).group(0))
    raise SystemExit(f"no {block} Fmax: neither a synth/ record nor a row in docs/synthesis.md")


def _projection(rtl):
    """Fmax x cores / cycles per node, with where each figure came from."""
    records = _records()
    fmax = lut4 = None
    sources = {}
    for path, rec in records:
        if isinstance(rec, dict) and rec.get("block") == "searchcore" and rec.get("fmax_mhz"):
            fmax = min(rec["fmax_mhz"].values())
            lut4 = (rec.get("block_only") or rec.get("total") or {}).get("lut4")
            sources["fmax"] = {"record": str(path.relative_to(ROOT)),
                               "commit": (rec.get("source") or {}).get("commit") or _git_commit(path)}
    if fmax is None:
        lut4, fmax = _synthesis_table_row("searchcore")
        sources["fmax"] = {"record": "docs/synthesis.md (searchcore row)",
                           "commit": _git_commit(ROOT / "docs" / "synthesis.md")}
    # A board built with cores and met timing (synth/records/boards/) is the real figure: its
    # own Fmax (the link and the cores placed together) and its core count.
    cores = None
    best = 0.0
    for path, rec in records:
        if not (isinstance(rec, dict) and rec.get("kind") == "board" and rec.get("timing_met")
                and rec.get("cores") and rec.get("fmax_mhz")):
            continue
        board_fmax = min(rec["fmax_mhz"].values())
        if board_fmax * rec["cores"] > best:
            best = board_fmax * rec["cores"]
            fmax, cores = board_fmax, int(rec["cores"])
            where = {"record": str(path.relative_to(ROOT)), "commit": _git_commit(path),
                     "board": rec.get("board")}
            sources["fmax"] = sources["cores"] = where
    if cores is None:
        cores = max(1, int(ROUTABLE_FRACTION * ECP5_85F_LUT4 // lut4))
        sources["cores"] = {"estimate": f"floor({ROUTABLE_FRACTION} x {ECP5_85F_LUT4} LUT4 / "
                                        f"{lut4} LUT4 per core): no board record with cores yet"}
    cpn = None
    for path, rec in records:
        if isinstance(rec, dict) and rec.get("backend") == "rtl" and rec.get("cycles_per_node"):
            cpn = rec["cycles_per_node"]
            sources["cycles_per_node"] = {"record": str(path.relative_to(ROOT)), "commit": _git_commit(path)}
    if cpn is None:
        if "cycles_per_node" not in rtl:
            raise SystemExit("no cycles per node: no RTL bench record and the Verilator run failed")
        cpn = rtl["cycles_per_node"]
        sources["cycles_per_node"] = {"record": "this run's Verilator bench", "commit": rtl["commit"]}
    return {"fmax_mhz": fmax, "cores": cores, "cycles_per_node": cpn, "lut4_per_core": lut4,
            "nodes_per_second": fmax * 1e6 * cores / cpn, "sources": sources}


class _Stockfish:
    """One Stockfish process; ``close`` returns the CPU seconds it used."""

    def __init__(self):
        self.proc = subprocess.Popen([STOCKFISH], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        self.send("uci")
        self.version = self.until("id name")[-1][len("id name "):]
        self.until("uciok")
        self.send("setoption name Threads value 1")
        self.send("setoption name Hash value 16")
        self.send("isready")
        self.until("readyok")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def until(self, prefix):
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("stockfish stopped")
            lines.append(line.strip())
            if line.startswith(prefix):
                return lines

    def close(self):
        self.send("quit")
        _, _, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = 0
        self.proc.stdin.close()
        self.proc.stdout.close()
        return usage.ru_utime + usage.ru_stime


def _stockfish(progress):
    if not shutil.which(STOCKFISH):
        return {"error": f"{STOCKFISH} not installed (apt-get install stockfish)"}
    print(f"Stockfish: depth {STOCKFISH_DEPTH} on the bench positions, perft ...", file=progress, flush=True)
    sf = _Stockfish()
    version = sf.version
    nodes = millis = 0
    for job in BENCH:
        sf.send("ucinewgame")
        sf.send(f"position fen {job.fen}")
        sf.send(f"go depth {STOCKFISH_DEPTH}")
        info = [l for l in sf.until("bestmove") if l.startswith("info depth")]
        last = info[-1].split()
        nodes += int(last[last.index("nodes") + 1])
        millis += int(last[last.index("time") + 1])
    cpu = sf.close()
    perft = []
    for name, fen, depth in (("startpos", BENCH[0].fen, 6), ("kiwipete", BENCH[1].fen, 5)):
        sf = _Stockfish()
        sf.send(f"position fen {fen}")
        t0 = time.perf_counter()
        sf.send(f"go perft {depth}")
        lines = sf.until("Nodes searched")
        seconds = time.perf_counter() - t0
        count = int(lines[-1].split(":")[1])
        perft_cpu = sf.close()
        perft.append({"root": name, "depth": depth, "nodes": count, "seconds": seconds,
                      "cpu_seconds": perft_cpu, "nodes_per_second": count / perft_cpu})
    return {"version": version, "threads": 1, "search": {
        "what": f"go depth {STOCKFISH_DEPTH} on each bench position", "nodes": nodes,
        "seconds": millis / 1000, "cpu_seconds": cpu, "nodes_per_second": nodes / cpu},
        "perft": perft}


# --- the report -------------------------------------------------------------------------------

def _rows(report):
    """(table, name, what, nodes, seconds, nodes/s, note) for the Markdown table and the plot."""
    rows = []
    m = report["model"]
    rows.append(("search", "Python model (1 core)", f"{m['jobs']} leaf jobs", m["nodes"],
                 m["cpu_seconds"], m["nodes_per_second"], "the golden reference; CPU seconds"))
    r = report.get("verilator", {})
    if "nodes_per_second" in r:
        rows.append(("search", "RTL in Verilator (1 core)", f"bench set, {r['jobs']} jobs", r["nodes"],
                     r["cpu_seconds"], r["nodes_per_second"],
                     f"{r['cycles_per_node']:.2f} cycles/node; CPU seconds"))
    p = report["fpga"]
    rows.append(("search", "FPGA, projected (ECP5-85F)", "Fmax x cores / cycles per node", None, None,
                 p["nodes_per_second"], f"{p['fmax_mhz']} MHz x {p['cores']} cores / "
                 f"{p['cycles_per_node']:.2f} cycles per node"))
    s = report["pocl_1"]["search"]
    rows.append(("search", "PoCL, 1 CPU core", f"{s['jobs']} leaf jobs (the model's)", s["nodes"],
                 s["cpu_seconds"], s["nodes"] / s["cpu_seconds"],
                 f"{report['speedup']['pocl_1_over_model']:.0f}x the model; CPU seconds"))
    s = report["pocl_all"]["search"]
    rows.append(("search", f"PoCL, all {report['pocl_all']['compute_units']} CPU cores",
                 f"{s['jobs']} leaf jobs", s["nodes"], s["seconds"], s["nodes"] / s["seconds"],
                 "wall seconds on the shared machine"))
    h = report.get("h100")
    if h:
        best = h["search"]
        kind = "full-window leaf jobs (the worst case)" if h.get("job_source", {}).get("kind") \
            == "full window" else "leaf jobs"
        rows.append(("search", "H100, OpenCL", f"{best['jobs']:,} {kind}, one batch", best["nodes"],
                     best["kernel_seconds"], best["nodes_per_second"],
                     ("long jobs split on the device; " if best["label"].startswith("split on the device")
                      else "") +
                     f"{best['work_items'] // h['compute_units']} work-items per SM; "
                     f"{h['without_top_1_percent'] / 1e6:.0f} M/s without the "
                     f"largest 1% of jobs, {h['uniform'] / 1e9:.1f} G/s on one job repeated"))
    hb = report.get("h100_batches")
    if hb:
        b = hb["batch"]
        rows.append(("search", "H100, OpenCL", f"{b['jobs']:,} leaf jobs of real searches (depth "
                     f"{b['job_source']['search_depth']}), one batch", b["nodes"], b["best_seconds"],
                     b["best_nodes_per_second"],
                     ("long jobs split on the device; " if b["best_label"].startswith("split on the device")
                      else "file order; ") +
                     f"{b['best_work_items_per_unit']} work-items per SM; "
                     f"{b['bulk_nodes_per_second'] / 1e6:.0f} M/s without the "
                     f"largest 1% of jobs; other batches: {hb['record']}"))
    sf = report.get("stockfish", {})
    if "search" in sf:
        s = sf["search"]
        rows.append(("search", f"{sf['version']} (1 thread)", "its own search, bench positions",
                     s["nodes"], s["cpu_seconds"], s["nodes_per_second"],
                     "a different search: for scale; CPU seconds"))
    for pr in report["pocl_1"]["perft"]:
        rows.append(("perft", f"PoCL, 1 CPU core, {pr['mode']}", f"{pr['root']} perft {pr['depth']}",
                     pr["nodes"], pr["cpu_seconds"], pr["nodes"] / pr["cpu_seconds"], "CPU seconds"))
    if h:
        for pr in h["perft"]:
            rows.append(("perft", f"H100, OpenCL, {pr['mode']}", f"{pr['root']} perft {pr['depth']}",
                         pr["nodes"], pr["seconds"], pr["nodes_per_second"],
                         f"{pr['leaf_depth_max']} plies per work-item"))
    for pr in sf.get("perft", []):
        rows.append(("perft", f"{sf['version']} (1 thread), bulk", f"{pr['root']} perft {pr['depth']}",
                     pr["nodes"], pr["cpu_seconds"], pr["nodes_per_second"], "CPU seconds"))
    return rows


def _rate(x):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:,.3g} {unit}"
    return f"{x:,.0f}"


def _markdown(report, rows):
    out = ["<!-- generated by `python -m chessaccel.lab.crossbench`: do not edit -->", "",
           f"Measured {report['date']} at commit {report['commit']}; this machine: "
           f"{report['machine']['cpus']} CPUs, load average {report['machine']['load_average']} "
           f"at the start, {report['machine_after']['load_average']} at the end (shared with "
           f"other work). Single-threaded rows are timed in CPU seconds (what the run spent on a "
           f"core, whatever the load); the all-cores row and the H100 in wall seconds. H100 "
           f"figures: `{report.get('h100', {}).get('record', 'none')}`.", ""]
    for table, title in (("search", "Search (nodes per second)"), ("perft", "Perft (leaves per second)")):
        out += [f"### {title}", "", "| implementation | work | nodes | seconds | nodes/s | note |",
                "|---|---|---:|---:|---:|---|"]
        for t, name, what, nodes, seconds, rate, note in rows:
            if t == table:
                out.append(f"| {name} | {what} | {'' if nodes is None else f'{nodes:,}'} | "
                           f"{'' if seconds is None else f'{seconds:.3f}'} | {_rate(rate)} | {note} |")
        out.append("")
    p = report["fpga"]
    out.append("FPGA projection sources: " + "; ".join(
        f"{k}: {', '.join(f'{a} {b}' for a, b in v.items())}" for k, v in p["sources"].items()) + ".")
    out.append("")
    out.append(f"PoCL on one core against the model on the same {report['speedup']['jobs']} jobs: "
               f"**{report['speedup']['pocl_1_over_model']:.0f}x** (every score and node count "
               f"equal).")
    return "\n".join(out) + "\n"


def _plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 6), gridspec_kw={"width_ratios": [1, 1.3]})
    for ax, table, title in ((axes[0], "search", "search: nodes per second"),
                             (axes[1], "perft", "perft: leaves per second")):
        chosen = [r for r in rows if r[0] == table]
        labels = [f"{r[1]}\n{r[2]}" for r in chosen]
        values = [r[5] for r in chosen]
        colors = ["tab:gray" if "model" in r[1] else "tab:green" if "FPGA" in r[1] or "Verilator" in r[1]
                  else "tab:blue" if "PoCL" in r[1] else "tab:red" if "H100" in r[1] else "tab:orange"
                  for r in chosen]
        ax.barh(range(len(chosen)), values, color=colors)
        ax.set_yticks(range(len(chosen)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_title(title)
        for i, v in enumerate(values):
            ax.text(v, i, " " + _rate(v), va="center", fontsize=7)
        for goal, label in GOALS[table]:
            ax.axvline(goal, color="black", linestyle="--", linewidth=0.8)
            ax.text(goal, len(chosen) - 0.5, f"goal: {label} ", fontsize=7, rotation=90,
                    va="bottom", ha="right")
        ax.set_xlim(right=max(values + [g for g, _ in GOALS[table]]) * 8)
    fig.suptitle("chessaccel: the search contract on every implementation (log scale)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _record_name(path):
    """A record's path as the report names it: from the repository's root when inside it."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(path)


def _h100(path):
    if not Path(path).exists():
        return None
    rec = json.loads(Path(path).read_text())
    runs = rec["leaf_search"]["runs"]
    full = [r for r in runs if r["jobs"] == rec["leaf_search"]["jobs"]]
    best = max(full, key=lambda r: r["nodes_per_second"])
    top1 = [r for r in runs if r["label"].startswith("without the top 1%")]
    uniform = [r for r in runs if r["label"].startswith("uniform")]
    perft = {}
    for pr in rec["perft"]:
        if pr.get("correct"):
            key = (pr["root"], pr["mode"])
            if key not in perft or pr["nodes_per_second"] > perft[key]["nodes_per_second"]:
                perft[key] = pr
    return {"record": _record_name(path),
            "device": rec["device"]["name"], "compute_units": rec["device"]["compute_units"],
            "job_source": rec.get("job_source", {}),
            "check_mismatches": rec["check"]["mismatches"],
            "search": best, "without_top_1_percent": top1[0]["nodes_per_second"] if top1 else None,
            "uniform": uniform[0]["nodes_per_second"] if uniform else None,
            "perft": sorted(perft.values(), key=lambda p: (p["mode"], p["root"]))}


def _h100_batches(path):
    """The real-search batch with the most nodes from gpuscale's summary (None without one)."""
    if not Path(path).exists():
        return None
    summary = json.loads(Path(path).read_text())
    search = [b for b in summary["batches"] if b["job_source"].get("kind") == "search"]
    if not search:
        return None
    return {"record": _record_name(path), "batch": max(search, key=lambda b: b["nodes"])}


def render(out, h100=None, h100_batches=None):
    """backends.md and backends.png again from backends.json, with the H100 sections read again
    from their records when they are given (no measuring on this machine)."""
    out = Path(out)
    report = json.loads((out / "backends.json").read_text())
    if h100 is not None or h100_batches is not None:
        if h100 is not None:
            report["h100"] = _h100(h100)
        if h100_batches is not None:
            report["h100_batches"] = _h100_batches(h100_batches)
        (out / "backends.json").write_text(json.dumps(report, indent=1) + "\n")
    rows = _rows(report)
    (out / "backends.md").write_text(_markdown(report, rows))
    _plot(rows, out / "backends.png")
    return rows


def run(args, progress=sys.stderr):
    data, sides = _job_file(args.jobs, progress)
    report = {"date": time.strftime("%Y-%m-%d"), "commit": _git_commit(), "machine": _load(progress)}
    idx, model_results, model_seconds, model_cpu = _model(data, sides, args.model_stride, progress)
    nodes = sum(r.nodes for r in model_results)
    report["model"] = {"jobs": len(idx), "stride": args.model_stride, "nodes": nodes,
                       "seconds": model_seconds, "cpu_seconds": model_cpu,
                       "nodes_per_second": nodes / model_cpu}
    report["pocl_1"] = _pocl(args.jobs, args.model_stride, 1, progress)
    report["pocl_all"] = _pocl(args.jobs, args.pocl_stride, 0, progress)
    same = report["pocl_1"]["search"]
    for r, nodes, score in zip(model_results, same["nodes_list"], same["scores"]):
        if (r.nodes, r.score) != (nodes, score):
            raise SystemExit("PoCL and the model disagree on a benchmark job")
    report["speedup"] = {"jobs": len(idx), "pocl_1_over_model":
                         (same["nodes"] / same["cpu_seconds"]) / report["model"]["nodes_per_second"]}
    for key in ("pocl_1", "pocl_all"):
        report[key]["search"].pop("nodes_list")
        report[key]["search"].pop("scores")
        report[key]["search"].pop("best_moves")
    report["verilator"] = {"skipped": True} if args.skip_rtl else _rtl(progress)
    report["fpga"] = _projection(report["verilator"])
    report["stockfish"] = {"skipped": True} if args.skip_stockfish else _stockfish(progress)
    report["h100"] = _h100(args.h100)
    report["h100_batches"] = _h100_batches(args.h100_batches)
    report["machine_after"] = _load(progress)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "backends.json").write_text(json.dumps(report, indent=1) + "\n")
    rows = render(out)
    for t, name, what, nodes, seconds, rate, note in rows:
        print(f"{t:6s} {name:38s} {what:38s} {_rate(rate):>10s}/s  {note}")
    print(f"wrote {out / 'backends.json'}, {out / 'backends.md'} and {out / 'backends.png'}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chessaccel.lab.crossbench",
                                description=__doc__.splitlines()[0])
    p.add_argument("--jobs", default=str(DEFAULT_JOBS), help="job file (built when missing)")
    p.add_argument("--h100", default=str(DEFAULT_H100), help="gpubench record of an H100 run")
    p.add_argument("--h100-batches", default=str(DEFAULT_H100_BATCHES),
                   help="gpuscale summary of H100 runs of several batches")
    p.add_argument("--out", default=str(ROOT / "docs" / "benchmarks"))
    p.add_argument("--model-stride", type=int, default=10_000,
                   help="model and PoCL-one-core: every N-th leaf job")
    p.add_argument("--pocl-stride", type=int, default=1_000, help="PoCL on all cores: every N-th job")
    p.add_argument("--skip-rtl", action="store_true")
    p.add_argument("--skip-stockfish", action="store_true")
    p.add_argument("--render-only", action="store_true",
                   help="redraw backends.md and .png from backends.json without measuring")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--cores", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--stride", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--platform", default="pocl", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return _worker(args)
    if args.render_only:
        render(args.out, args.h100, args.h100_batches)
        print(f"rendered {args.out}/backends.md and backends.png from backends.json")
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

"""The engine as a user meets it: ``chessaccel uci`` on the bench positions at a fixed time a
move, in several configurations side by side (a backend, its threads, its options), one run.

For each configuration and position the engine gets ``position fen ...`` and ``go movetime MS``
(a new game each: ``ucinewgame``, so no table is carried over), and its ``info`` lines give the
depth reached, the time each depth was completed at, the nodes the search used (host nodes and
used accelerator nodes, the UCI ``nodes``) and, from its ``info string`` lines, the speculative
nodes (jobs finished but not used). Printed as a table and written as JSON with a chart of the
time to each depth (median over positions) and used nodes per second per configuration.

    python -m chessaccel.lab.enginebench --movetime 5000 \\
        --config gpu:Backend=opencl:NVIDIA,Threads=16 --config pocl:Backend=opencl:Portable
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import threading
import time

from chessaccel.contract.bench import BENCH
from .record import write_record

__all__ = ["main", "run_config", "parse_config"]

ENGINE = f"{shlex.quote(sys.executable)} -P -m chessaccel.host.cli uci"


def parse_config(text):
    """``NAME:OPTION=VALUE,OPTION=VALUE`` -> (name, {option: value})."""
    name, sep, rest = text.partition(":")
    if not sep or not name:
        raise ValueError(f"configuration {text!r}: expected NAME:OPTION=VALUE[,OPTION=VALUE...]")
    options = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"configuration {text!r}: {item!r} is not OPTION=VALUE")
        options[key] = value
    return name, options


class _Engine:
    def __init__(self, command):
        self.proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines = []

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def until(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        out = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the engine exited: " + " | ".join(out[-3:]))
            line = line.strip()
            out.append(line)
            if predicate(line):
                return out
        raise RuntimeError(f"no answer in {timeout} s")

    def close(self):
        try:
            self.send("quit")
            self.proc.wait(10)
        except Exception:       # gone already, or stuck: make sure it is gone
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:     # the pipe broke with the engine: nothing left to close
                pass


def _fields(line):
    words = line.split()
    out = {}
    for key in ("depth", "nodes", "time", "nps"):
        if key in words:
            at = words.index(key)
            try:
                out[key] = int(words[at + 1])
            except (IndexError, ValueError):
                pass
    return out


def run_position(engine, fen, movetime_ms):
    engine.send("ucinewgame")
    engine.send(f"position fen {fen}")
    engine.send("isready")
    engine.until(lambda l: l == "readyok", 120)
    started = time.monotonic()
    engine.send(f"go movetime {movetime_ms}")
    lines = engine.until(lambda l: l.startswith("bestmove"), movetime_ms / 1000 + 120)
    wall = time.monotonic() - started
    depths, last, speculative, errors = {}, {}, 0, []
    for line in lines:
        if line.startswith("info string error"):
            errors.append(line)
        elif line.startswith("info string host nodes"):
            words = line.split()
            speculative = int(words[words.index("speculative") + 2])
        elif line.startswith("info depth") and "lowerbound" not in line and "upperbound" not in line:
            f = _fields(line)
            if "depth" in f and "time" in f:
                depths[f["depth"]] = f["time"] / 1000
                last = f
    return {"fen": fen, "bestmove": lines[-1].split()[1], "depth": last.get("depth", 0),
            "nodes": last.get("nodes", 0), "seconds": wall, "time_to_depth": depths,
            "used_nps": last.get("nodes", 0) / max(last.get("time", 1) / 1000, 1e-3),
            "speculative_nodes": speculative, "errors": errors}


def run_config(name, options, movetime_ms, positions, engine_command=ENGINE, progress=print):
    engine = _Engine(engine_command)
    try:
        engine.send("uci")
        engine.until(lambda l: l == "uciok", 60)
        for key, value in options.items():
            engine.send(f"setoption name {key} value {value}")
        engine.send("isready")
        out = engine.until(lambda l: l == "readyok", 600)   # a backend's first start
        # the backend's start (workers, the device's program) is paid here, not in a move
        engine.send("position startpos")
        engine.send("go depth 1")
        out += engine.until(lambda l: l.startswith("bestmove"), 600)
        errors = [l for l in out if l.startswith("info string error")]
        if errors:
            raise RuntimeError(f"{name}: {errors[0]}")
        rows = []
        for job in positions:
            row = run_position(engine, job.fen, movetime_ms)
            row["position"] = job.name
            rows.append(row)
            progress(f"  {name:12} {job.name:12} depth {row['depth']:2} used nodes/s "
                     f"{row['used_nps']:12,.0f} speculative {row['speculative_nodes']:,}")
        return rows
    finally:
        engine.close()


def summary(rows):
    depths = [r["depth"] for r in rows]
    return {"mean_depth": statistics.mean(depths),
            "used_nodes_per_second": sum(r["nodes"] for r in rows)
            / sum(max(r["time_to_depth"].get(r["depth"], r["seconds"]), 1e-3) for r in rows),
            "mean_used_nps": statistics.mean(r["used_nps"] for r in rows),
            "speculative_share": sum(r["speculative_nodes"] for r in rows)
            / max(1, sum(r["nodes"] + r["speculative_nodes"] for r in rows))}


def _draw(record, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, result in record["configs"].items():
        by_depth = {}
        for row in result["positions"]:
            for depth, seconds in row["time_to_depth"].items():
                by_depth.setdefault(int(depth), []).append(seconds)
        xs = sorted(d for d, v in by_depth.items() if len(v) * 2 > len(result["positions"]))
        left.plot(xs, [statistics.median(by_depth[d]) for d in xs], marker="o", label=name)
    left.set_yscale("log")
    left.set_xlabel("depth")
    left.set_ylabel("seconds to complete it (median over positions)")
    left.legend()
    names = list(record["configs"])
    right.bar(names, [record["configs"][n]["summary"]["mean_used_nps"] for n in names])
    right.set_yscale("log")
    right.tick_params(axis="x", labelrotation=20)
    right.set_ylabel("used nodes per second (mean over positions)")
    fig.suptitle(f"chessaccel uci, go movetime {record['movetime_ms']} on the bench positions")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chessaccel.lab.enginebench",
                                description=__doc__.splitlines()[0])
    p.add_argument("--config", action="append", default=[],
                   help="NAME:OPTION=VALUE[,OPTION=VALUE...] (repeatable)")
    p.add_argument("--render-only", metavar="JSON",
                   help="draw the chart of an earlier record (e.g. one made where matplotlib "
                        "is not installed) and stop")
    p.add_argument("--movetime", type=int, default=5000, help="ms a move (default 5000)")
    p.add_argument("--positions", type=int, default=len(BENCH),
                   help=f"the first N bench positions (default {len(BENCH)})")
    p.add_argument("--engine", default=ENGINE, help="the engine's command line")
    p.add_argument("--out", default=None, help="JSON record (default out/enginebench.json)")
    args = p.parse_args(argv)
    if args.render_only:
        import json
        with open(args.render_only) as f:
            record = json.load(f)
        plot = os.path.splitext(args.render_only)[0] + ".png"
        _draw(record, plot)
        print(f"wrote {plot}")
        return 0
    if not args.config:
        p.error("give at least one --config")
    try:
        configs = [parse_config(text) for text in args.config]
    except ValueError as error:
        p.error(str(error))
    if not 1 <= args.positions <= len(BENCH) or args.movetime < 1:
        p.error(f"--positions must be 1..{len(BENCH)} and --movetime positive")
    record = {"movetime_ms": args.movetime, "engine": args.engine, "configs": {}}
    out = args.out or os.path.join("out", "enginebench.json")
    failed = []
    for name, options in configs:
        print(f"{name}: {options}", flush=True)
        try:
            rows = run_config(name, options, args.movetime, BENCH[:args.positions], args.engine,
                              progress=lambda line: print(line, flush=True))
        except RuntimeError as error:   # the others still run; the exit status says so
            print(f"error: {error}", file=sys.stderr, flush=True)
            failed.append(name)
            continue
        record["configs"][name] = {"options": options, "positions": rows, "summary": summary(rows)}
        write_record(record, out, None, out, lambda record, path: None, 1)   # kept as it grows
    print(f"\n{'config':12} {'mean depth':>10} {'used nodes/s':>14} {'speculative':>11}")
    for name, result in record["configs"].items():
        s = result["summary"]
        print(f"{name:12} {s['mean_depth']:10.2f} {s['mean_used_nps']:14,.0f} "
              f"{s['speculative_share']:10.1%}")
    try:
        import matplotlib  # noqa: F401
        draw = _draw
    except ImportError:     # a GPU machine without it: the chart is drawn later (--render-only)
        def draw(record, path):
            print(f"matplotlib is not installed: no chart ({__spec__.name} --render-only JSON "
                  "draws it)")
    write_record(record, out, None, out, draw if record["configs"] else lambda *a: None, 1)
    print(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

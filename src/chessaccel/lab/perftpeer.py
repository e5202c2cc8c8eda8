"""Our OpenCL perft beside perft_gpu, the fastest public CUDA perft, on the same GPU in one run.

    python -m chessaccel.lab.perftpeer --peer-source DIR [--backend opencl:nvidia]
        [--root startpos:7,8 --root kiwipete:6,7] [--suite FILE --suite-depth 5]
        [--runs 3] [--suite-runs 1] [--processes] [--out DIR]
    python -m chessaccel.lab.perftpeer --render-only DIR/perftpeer.json

perft_gpu (ankan-ban/perft_gpu_2026) is fetched by the user (``git clone``) and never copied into
this project: ``--peer-source`` names the checkout. Its CMake file passes an MSVC-only flag, so
its sources are compiled here with nvcc directly (``-O3 -std=c++17 -arch=native``: for the GPU
in the machine), into ``--build`` (default out/perftpeer/build), once per source digest.

Both count without a hash table (perft_gpu's ``-nott``; ours never has one) and with the device
open: perft_gpu times each depth of one process (perft 1, 2, ... up to the deepest asked, so
every depth asked is measured after the smaller ones warmed the device), our backend is opened
once, warmed by a perft of the root, and timed around each call. Each root is counted
``--runs`` times on each side, alternating (theirs, ours, theirs, ...), and the fastest run of
each is the figure (every run is in the JSON). Every count is checked against the published one
(the suite's, or the standard roots'); a wrong count fails the command (exit 1).
``--processes`` also times whole processes of the roots, as a user meets them: ``chessaccel perft`` (device
opened, program from the cache) against perft_gpu's process, each to the same depth.

Writes perftpeer.json, perftpeer.md (the table) and, where matplotlib is installed, perftpeer.png
(leaves per second, both programs side by side) in ``--out``; ``--render-only JSON`` redraws
the table and chart from a record, e.g. one made on a GPU machine without matplotlib.
"""

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from chessaccel.model.position import parse_position
from .benchjobs import PERFT_ROOTS

__all__ = ["main", "PeerError", "PEER_SOURCES", "peer_digest", "build_peer", "parse_peer_output",
           "parse_root", "suite_roots", "render"]

#: perft_gpu's translation units (its CMakeLists.txt's add_executable), compiled by nvcc.
PEER_SOURCES = ("perft.cu", "perft_kernels.cu", "launcher.cu", "util.cpp", "GlobalVars.cpp",
                "Magics.cpp", "zobrist.cpp", "randoms.cpp")
#: The published counts of the standard roots (benchjobs.PERFT_ROOTS), by name.
STANDARD = {name: (fen, counts) for name, fen, counts in PERFT_ROOTS}
DEFAULT_ROOTS = ("startpos:7,8", "kiwipete:6,7")
#: A peer process may not take longer than this (seconds): a hang is reported, not waited on.
PEER_TIMEOUT = 600

_PEER_LINE = re.compile(r"^Perft\((\d+)\):\s*([\d,]+),\s*time:\s*([0-9.eE+-]+)\s*seconds", re.M)


class PeerError(Exception):
    """The peer could not be built or run: one line saying why."""


def peer_digest(source):
    """(git commit or None, sha256 of the source files and headers, first 16 digits)."""
    source = Path(source)
    digest = hashlib.sha256()
    for path in sorted(p for p in source.iterdir()
                       if p.suffix in (".cu", ".cpp", ".h", ".hpp") and p.is_file()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    commit = None
    if (source / ".git").exists() and shutil.which("git"):
        done = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"],
                              capture_output=True, text=True)
        commit = done.stdout.strip() or None
    return commit, digest.hexdigest()[:16]


def build_peer(source, build, nvcc="nvcc", arch="native", progress=print):
    """Path of perft_gpu built from ``source`` with ``nvcc`` (cached in ``build`` by digest)."""
    source = Path(source)
    if not source.is_dir():
        raise PeerError(f"--peer-source {source}: no such folder (clone "
                        "https://github.com/ankan-ban/perft_gpu_2026 there)")
    missing = [name for name in PEER_SOURCES if not (source / name).is_file()]
    if missing:
        raise PeerError(f"--peer-source {source} is not a perft_gpu checkout: "
                        f"{', '.join(missing)} missing")
    compiler = shutil.which(nvcc)
    if compiler is None:
        raise PeerError(f"{nvcc} not found: building perft_gpu needs the CUDA toolkit's nvcc")
    _, digest = peer_digest(source)
    binary = Path(build) / f"perft_gpu-{digest}-{arch}"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    command = [compiler, "-O3", "-std=c++17", f"-arch={arch}", "-I", str(source), "-o",
               str(binary), *[str(source / name) for name in PEER_SOURCES]]
    progress(f"building perft_gpu: {shlex.join(command)}")
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        binary.unlink(missing_ok=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise PeerError(f"nvcc could not build perft_gpu (status {done.returncode}): "
                        + " | ".join(tail))
    progress(f"built perft_gpu in {time.perf_counter() - t0:.0f} s")
    return binary


def parse_peer_output(text):
    """perft_gpu's ``Perft(NN): COUNT, time: T seconds`` lines -> {depth: (count, seconds)}."""
    return {int(d): (int(count.replace(",", "")), float(seconds))
            for d, count, seconds in _PEER_LINE.findall(text)}


def run_peer(binary, fen, depth, timeout=PEER_TIMEOUT):
    """One perft_gpu process to ``depth`` without its tables: ({depth: (count, seconds)}, the
    process's wall seconds)."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run([str(binary), fen, str(depth), "-nott"], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PeerError(f"perft_gpu did not finish {fen!r} depth {depth} in {timeout} s")
    wall = time.perf_counter() - t0
    counts = parse_peer_output(done.stdout)
    if done.returncode != 0 or depth not in counts:
        tail = (done.stderr or done.stdout).strip().splitlines()[-2:]
        raise PeerError(f"perft_gpu {fen!r} {depth} -nott: status {done.returncode}, "
                        f"no perft {depth} line: " + " | ".join(tail))
    return counts, wall


def parse_root(text):
    """``NAME:D1,D2`` (a standard root) or ``FEN:D1,D2`` -> (name, fen, [depths], {depth:
    published count})."""
    head, sep, tail = text.rpartition(":")
    try:
        depths = sorted({int(d) for d in tail.split(",")}) if sep else []
    except ValueError:
        depths = []
    if not depths or min(depths) < 1:
        raise ValueError(f"--root {text!r}: expected NAME:DEPTH[,DEPTH...] with depths >= 1")
    if head in STANDARD:
        fen, published = STANDARD[head]
        return head, fen, depths, dict(published)
    try:
        parse_position(head)
    except ValueError as e:
        raise ValueError(f"--root {text!r}: {e}") from None
    return head, head, depths, {}


def suite_roots(path, max_depth):
    """The positions of an EPD perft suite (``FEN ;D1 N ;D2 N ...``) with their deepest
    published count up to ``max_depth``: [(name, fen, [depth], {depth: count})]."""
    roots = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fen, *fields = [part.strip() for part in line.split(";")]
        counts = {}
        for field in fields:
            m = re.fullmatch(r"D(\d+)\s+(\d+)", field)
            if not m:
                raise ValueError(f"{path}:{number}: {field!r} is not 'D<depth> <count>'")
            counts[int(m.group(1))] = int(m.group(2))
        usable = [d for d in counts if d <= max_depth]
        if not usable:
            continue
        parse_position(fen)
        depth = max(usable)
        roots.append((f"suite {number}", fen, [depth], {depth: counts[depth]}))
    if not roots:
        raise ValueError(f"{path}: no position with a count at depth {max_depth} or less")
    return roots


def _ours(backend, board, depth):
    t0 = time.perf_counter()
    nodes = backend.perft(board, depth)["nodes"]
    return nodes, time.perf_counter() - t0


def _process(command, timeout=PEER_TIMEOUT):
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise PeerError(f"{shlex.join(command)}: status {done.returncode}: "
                        + (done.stderr.strip().splitlines() or [""])[-1])
    return time.perf_counter() - t0


def measure(binary, backend, roots, runs, processes=False, spec="opencl", progress=print,
            peer=None):
    """Every (root, depth) counted ``runs`` times by both programs, alternating; rows of the
    record. A count that differs from the published one (or from the other program's, where
    none is published) is marked wrong. ``peer(fen, depth)`` -> {depth: (count, seconds)}
    counts on the peer's side (default: a perft_gpu process of ``binary``)."""
    peer = peer or (lambda fen, depth: run_peer(binary, fen, depth)[0])
    rows = []
    for name, fen, depths, published in roots:
        board = parse_position(fen)[0]
        _ours(backend, board, min(depths))              # warm-up: the expansion's buffers
        deepest = max(depths)
        theirs = {d: [] for d in depths}
        ours = {d: [] for d in depths}
        our_counts, their_counts = {}, {}
        for _ in range(runs):
            counts = peer(fen, deepest)
            for d in depths:
                their_counts[d] = counts[d][0]
                theirs[d].append(counts[d][1])
            for d in depths:
                nodes, seconds = _ours(backend, board, d)
                our_counts[d] = nodes
                ours[d].append(seconds)
        for d in depths:
            expected = published.get(d, their_counts[d])
            row = {"root": name, "fen": fen, "depth": d, "leaves": expected,
                   "published": d in published,
                   "ours_correct": our_counts[d] == expected,
                   "theirs_correct": their_counts[d] == expected,
                   "ours_seconds": ours[d], "theirs_seconds": theirs[d],
                   "ours_best": min(ours[d]), "theirs_best": min(theirs[d])}
            row["ours_leaves_per_second"] = expected / row["ours_best"]
            row["theirs_leaves_per_second"] = expected / row["theirs_best"]
            row["ratio"] = row["theirs_best"] / row["ours_best"]
            if processes:
                ours_cli = [sys.executable, "-P", "-m", "chessaccel.host.cli", "perft", fen,
                            "--depth", str(d), "--backend", spec]
                row["ours_process_seconds"] = min(_process(ours_cli) for _ in range(runs))
                row["theirs_process_seconds"] = min(
                    run_peer(binary, fen, d)[1] for _ in range(runs))
            rows.append(row)
            flag = "" if row["ours_correct"] and row["theirs_correct"] else \
                f"  WRONG (ours {our_counts[d]}, theirs {their_counts[d]}, expected {expected})"
            progress(f"  {name:10s} perft {d}: {expected:>16,d} leaves  ours "
                     f"{row['ours_best']:8.4f} s {row['ours_leaves_per_second'] / 1e9:7.1f} G/s  "
                     f"perft_gpu {row['theirs_best']:8.4f} s "
                     f"{row['theirs_leaves_per_second'] / 1e9:7.1f} G/s  "
                     f"ours/theirs {row['ratio']:.2f}x{flag}")
    return rows


def table(record):
    """The record's rows as a Markdown table (the suite summed into one row)."""
    lines = ["| root | depth | leaves | ours s | ours G leaves/s | perft_gpu s | perft_gpu G "
             "leaves/s | ours / perft_gpu |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    rows = [r for r in record["rows"] if not r["root"].startswith("suite ")]
    suite = [r for r in record["rows"] if r["root"].startswith("suite ")]
    if suite:
        rows.append({"root": f"perft suite ({len(suite)} positions)", "depth": "≤ "
                     + str(max(r["depth"] for r in suite)),
                     "leaves": sum(r["leaves"] for r in suite),
                     "ours_best": sum(r["ours_best"] for r in suite),
                     "theirs_best": sum(r["theirs_best"] for r in suite)})
    for r in rows:
        lines.append(f"| {r['root']} | {r['depth']} | {r['leaves']:,} | {r['ours_best']:.4f} | "
                     f"{r['leaves'] / r['ours_best'] / 1e9:.1f} | {r['theirs_best']:.4f} | "
                     f"{r['leaves'] / r['theirs_best'] / 1e9:.1f} | "
                     f"{r['theirs_best'] / r['ours_best']:.2f}x |")
    timed = [r for r in record["rows"] if "ours_process_seconds" in r]
    if timed:
        lines += ["", "Whole processes (fastest of the runs):", "",
                  "| root | depth | `chessaccel perft` s | perft_gpu process s |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {r['root']} | {r['depth']} | {r['ours_process_seconds']:.3f} | "
                  f"{r['theirs_process_seconds']:.3f} |" for r in timed]
    return "\n".join(lines) + "\n"


def render(record, folder):
    """perftpeer.md and (with matplotlib) perftpeer.png of ``record`` in ``folder``; the
    chart's path or None."""
    folder = Path(folder)
    (folder / "perftpeer.md").write_text(table(record))
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in record["rows"] if not r["root"].startswith("suite ")]
    labels = [f"{r['root']}\nperft {r['depth']}" for r in rows]
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 4.5))
    ax.bar([x - 0.2 for x in xs], [r["leaves"] / r["ours_best"] / 1e9 for r in rows], 0.4,
           label="chessaccel OpenCL perft (bulk)")
    ax.bar([x + 0.2 for x in xs], [r["leaves"] / r["theirs_best"] / 1e9 for r in rows], 0.4,
           label="perft_gpu -nott (CUDA)")
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("G leaves per second (fastest run, device open)")
    ax.set_title(f"perft on {record['device']}: chessaccel {record['ours_commit'] or ''} "
                 f"vs perft_gpu {(record['peer_commit'] or record['peer_digest'])[:7]}")
    ax.legend()
    fig.tight_layout()
    path = folder / "perftpeer.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _our_commit():
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True) if shutil.which("git") else None
    return done.stdout.strip() if done and done.returncode == 0 else None


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chessaccel.lab.perftpeer",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--peer-source", help="a checkout of ankan-ban/perft_gpu_2026")
    p.add_argument("--build", default="out/perftpeer/build", help="where perft_gpu is built")
    p.add_argument("--nvcc", default="nvcc")
    p.add_argument("--arch", default="native", help="nvcc -arch (default: the GPU present)")
    p.add_argument("--backend", default="opencl", help="our side (default: opencl)")
    p.add_argument("--root", action="append", help="NAME:DEPTHS or FEN:DEPTHS (default: "
                   + " and ".join(DEFAULT_ROOTS) + ")")
    p.add_argument("--suite", help="an EPD perft suite (FEN ;D1 N ;D2 N ...) to count too")
    p.add_argument("--suite-depth", type=int, default=5,
                   help="each suite position at its deepest count up to this depth")
    p.add_argument("--runs", type=int, default=3, help="runs of each root on each side")
    p.add_argument("--suite-runs", type=int, default=1, help="runs of each suite position")
    p.add_argument("--processes", action="store_true",
                   help="also time whole processes (chessaccel perft, perft_gpu)")
    p.add_argument("--out", default="out/perftpeer")
    p.add_argument("--render-only", metavar="JSON", help="redraw the table and chart of a record")
    args = p.parse_args(argv)

    def fail(message, status=2):
        print(f"perftpeer: error: {message}", file=sys.stderr)
        return status

    if args.render_only:
        try:
            record = json.loads(Path(args.render_only).read_text())
        except (OSError, ValueError) as e:
            return fail(f"cannot read {args.render_only}: {e}")
        chart = render(record, Path(args.render_only).parent)
        print(table(record), end="")
        print(f"chart: {chart}" if chart else "matplotlib is not installed: no chart")
        return 0
    if args.runs < 1:
        return fail("--runs must be at least 1")
    if not args.peer_source:
        return fail("--peer-source DIR is needed (a checkout of ankan-ban/perft_gpu_2026)")
    if args.suite_runs < 1:
        return fail("--suite-runs must be at least 1")
    try:
        roots = [parse_root(text) for text in (args.root or DEFAULT_ROOTS)]
        suite = suite_roots(args.suite, args.suite_depth) if args.suite else []
    except ValueError as e:
        return fail(str(e))
    except OSError as e:
        return fail(f"cannot read {args.suite}: {e.strerror}")
    try:
        binary = build_peer(args.peer_source, args.build, args.nvcc, args.arch)
    except PeerError as e:
        return fail(str(e))

    from chessaccel.host.backends import get_backend
    from chessaccel.host.backends.base import BackendError
    try:
        t0 = time.perf_counter()
        backend = get_backend(args.backend)
        if hasattr(backend, "open"):
            backend.open()                  # the OpenCL program built or read from its cache
        open_seconds = time.perf_counter() - t0
        device = backend.describe() if hasattr(backend, "describe") else args.backend
    except BackendError as e:
        return fail(f"backend {args.backend!r}: {e}")
    print(f"our side: {args.backend} on {device} (opened in {open_seconds:.1f} s); "
          f"perft_gpu: {binary}", flush=True)
    commit, digest = peer_digest(args.peer_source)
    record = {"device": device, "backend": args.backend, "ours_commit": _our_commit(),
              "peer_commit": commit, "peer_digest": digest, "peer_binary": str(binary),
              "nvcc_arch": args.arch, "runs": args.runs, "open_seconds": open_seconds,
              "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        say = lambda line: print(line, flush=True)      # noqa: E731
        record["rows"] = measure(binary, backend, roots, args.runs, args.processes,
                                 args.backend, progress=say)
        if suite:
            say(f"the suite {args.suite}: {len(suite)} positions, {args.suite_runs} run(s) each")
            record["rows"] += measure(binary, backend, suite, args.suite_runs, progress=say)
    except PeerError as e:
        return fail(str(e), 1)
    finally:
        close = getattr(backend, "close", None)
        if close:
            close()
    record["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "perftpeer.json").write_text(json.dumps(record, indent=1))
    chart = render(record, out)
    print(table(record), end="")
    print(f"record: {out / 'perftpeer.json'}" + (f", chart: {chart}" if chart else
          f" (no matplotlib here: --render-only {out / 'perftpeer.json'} elsewhere)"))
    wrong = [r for r in record["rows"] if not (r["ours_correct"] and r["theirs_correct"])]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

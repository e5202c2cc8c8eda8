"""Mutation testing of chessaccel with mutmut 2: ``make mutation [PATHS="host/position.py ..."]``.

What it does, and why this way:

- The project is installed in editable mode with a package map (pyproject: chessaccel.host ->
  host/, chessaccel.sim -> sim/, ...). mutmut 2 mutates files in place, so the run works on a copy
  of the tree in out/mutation/work/ (tracked and untracked-but-not-ignored files, refreshed on
  every run: a run that was killed half-way leaves nothing mutated in the real tree), and makes
  the tests import that copy: out/mutation/work/chessaccel/host etc. are links, after the package
  map, to the copy's host/ etc., so ``import chessaccel.host`` from the copy (first on sys.path)
  never reaches the tree behind the editable finder; this is checked before the run. New files
  and folders under a mapped folder (host/engine/, ...) are picked up with no change here.
- Each mutant runs only the fast tests that exercise its file (``TEST_SELECTION``; a file not
  listed gets the tests that import its module plus its folder's default), with ``-x`` so that a
  killed mutant stops at the first failure; the seed and hypothesis are fixed so a verdict
  repeats.
- mutmut's cache (out/mutation/work/.mutmut-cache) makes runs incremental and resumable: killed
  mutants are never run again; survivors are run again when the tests change; a file whose
  source changed is mutated afresh.
- The run is niced (``nice -n 10``) and uses one worker. Afterwards the kill rate per folder and
  every surviving mutant go to out/mutation/summary.json and out/mutation/survivors.txt;
  tools/mutation_equivalent.json lists the survivors judged equivalent (same behaviour), with why,
  and the summary gives the rate with and without them.

Usage: python tools/mutation.py [PATH ...] [--report-only]   (default: sim/model host chessaccel)
"""

import argparse
import difflib
import filecmp
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "mutation"
WORK = OUT / "work"
#: Links build_import_shim made (never treated as files of the tree).
LINKS = set()
#: Added to the report's file names when mutation types are skipped (--skip).
SUFFIX = ""
EQUIVALENT_FILE = ROOT / "tools" / "mutation_equivalent.json"
DEFAULT_PATHS = ("sim/model", "host", "chessaccel")
#: Files of the work copy that belong to mutmut, not to the tree.
KEEP = {".mutmut-cache", "mutmut_config.py", "mutmut_pytest.py", "html", ".hypothesis",
        ".mutation-baseline"}
#: Fixed for every mutant so that a verdict repeats.
MUTANT_SEED = "20261201"

#: Fast tests per source file (or folder prefix), most likely killers first.
TEST_SELECTION = {
    "sim/model/evaluate.py": ["tests/test_eval_reference.py"],
    "sim/model/search.py": ["tests/test_model_quick.py", "tests/test_model_search.py"],
    "sim/model/": ["tests/test_model_quick.py", "tests/test_perft_deep.py"],
    "host/position.py": ["tests/test_host_edges.py", "tests/test_position.py"],
    "host/cli.py": ["tests/test_board_backend.py", "tests/test_cli.py", "tests/test_host_edges.py"],
    # the link client, transports and board backend against the scripted board (linkpeer.py)
    "host/client.py": ["tests/test_link_client.py", "tests/test_board_backend.py"],
    "host/transport.py": ["tests/test_link_client.py", "tests/test_board_backend.py"],
    "host/boardcli.py": ["tests/test_board_backend.py"],
    "host/backends.py": ["tests/test_backends.py", "tests/test_board_backend.py",
                         "tests/test_cli.py"],
    "host/bench.py": ["tests/test_cli.py"],
    "host/": ["tests/test_cli.py"],
    "chessaccel/protocol.py": ["tests/test_protocol.py", "tests/test_link_golden.py"],
    "chessaccel/evaltables.py": ["tests/test_eval_reference.py"],
    "chessaccel/": ["tests/test_model_quick.py", "tests/test_eval_reference.py",
                    "tests/test_protocol.py", "tests/test_link_golden.py",
                    "tests/test_position.py"],
}
#: Tests never run on a mutant: they need simulators or take minutes.
SLOW_TESTS = {"tests/test_boardsim.py", "tests/test_search.py", "tests/test_synth.py",
              "tests/test_board.py", "tests/test_movegen.py", "tests/test_link.py",
              "tests/test_uart.py", "tests/test_evaluate.py", "tests/test_genvictim.py",
              "tests/test_genaggressor.py", "tests/test_testcheck.py",
              "tests/test_castlestatus.py", "tests/test_searchstack.py"}
#: ``--assert=plain``: pytest would otherwise rewrite the asserts of every module of its plugins'
#: distributions (all of hypothesis) and, bytecode writing being off in the work copy (a mutant
#: written in the same second as the file it replaces must never run from a stale .pyc), do it
#: afresh for each mutant: over half of a killed mutant's CPU. Verdicts do not change, only
#: the failure messages get shorter.
PYTEST_ARGS = ["-x", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "-m", "not long",
               "--assert=plain", "--hypothesis-seed=0", "--hypothesis-profile=mutation"]


def log(text):
    print(f"[mutation] {text}", flush=True)


# --- the work copy --------------------------------------------------------------------------

def tree_files():
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    return {Path(p) for p in listed if p and (ROOT / p).is_file()}


def sync_work_copy():
    """Copy the tree into WORK: changed files copied, vanished ones removed."""
    files = tree_files()
    WORK.mkdir(parents=True, exist_ok=True)
    copied = 0
    for rel in files:
        src, dst = ROOT / rel, WORK / rel
        if not dst.exists() or not filecmp.cmp(src, dst, shallow=False):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            copied += 1
    removed = 0
    for folder, dirs, names in os.walk(WORK):          # links are not followed
        here = Path(folder)
        rel_dir = here.relative_to(WORK)
        if rel_dir.parts and rel_dir.parts[0] in KEEP:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if d != "__pycache__" and not (here / d).is_symlink()]
        for name in names:
            rel = rel_dir / name
            if rel.parts[0] in KEEP or (here / name).is_symlink():
                continue
            if rel not in files:
                (here / name).unlink()
                removed += 1
    log(f"work copy {WORK.relative_to(ROOT)}: {copied} files refreshed, {removed} removed")


def build_import_shim():
    """Make the work copy importable as the installed package: pyproject maps chessaccel.host to
    host/ and so on; WORK/chessaccel/host etc. become links to the work copy's folders, so that
    ``import chessaccel.host`` from WORK (the first entry of sys.path when pytest runs there)
    finds the copy, never the tree behind the editable install."""
    project = tomllib.loads((WORK / "pyproject.toml").read_text())
    package_dir = project["tool"]["setuptools"]["package-dir"]
    top = next(p for p in package_dir if "." not in p)
    if Path(package_dir[top]) != Path(top):
        raise SystemExit(f"mutation: the top package {top} must live in {top}/")
    for package, folder in sorted(package_dir.items(), key=lambda kv: kv[0].count(".")):
        parts = package.split(".")
        if len(parts) == 1:
            continue
        link = WORK.joinpath(*parts)
        target = (WORK / folder).resolve()
        if link.resolve() == target:
            continue            # already there through its parent (chessaccel.sim.model)
        if link.is_symlink():
            link.unlink()
        if link.exists():
            raise SystemExit(f"mutation: {link} exists and is not {target}")
        link.symlink_to(os.path.relpath(target, link.parent))
        LINKS.add(link.relative_to(WORK))


# --- the mutmut run -------------------------------------------------------------------------

def tests_for(path):
    """The test files a mutant of ``path`` (relative to the tree) runs."""
    chosen = list(TEST_SELECTION.get(path, []))
    if not chosen:
        for prefix in sorted((k for k in TEST_SELECTION if k.endswith("/")), key=len, reverse=True):
            if path.startswith(prefix):
                chosen = list(TEST_SELECTION[prefix])
                break
    if path in TEST_SELECTION:
        return [t for t in chosen if (WORK / t).exists()]
    # tests that import the module by name, e.g. new files under host/
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir = project["tool"]["setuptools"]["package-dir"]
    module = None
    for package, folder in package_dir.items():
        if path.startswith(folder.rstrip("/") + "/"):
            rest = path[len(folder.rstrip("/")) + 1:].removesuffix(".py").replace("/", ".")
            if module is None or len(package) > len(module.split(":")[0]):
                module = f"{package}.{rest}"
    if module:
        for test in sorted((WORK / "tests").glob("test_*.py")):
            rel = f"tests/{test.name}"
            if rel not in chosen and rel not in SLOW_TESTS and module in test.read_text():
                chosen.append(rel)
    return [t for t in chosen if (WORK / t).exists()] or ["tests/test_cli.py"]


#: mutmut 2 counts only exit status 1 as "killed": a mutant that breaks an import makes pytest
#: exit 2 (collection error) and would pass for a survivor. Every failure becomes 1 here.
MUTMUT_PYTEST = '''\
"""Written by tools/mutation.py: pytest whose every failure (tests, collection, usage) exits 1."""
import sys
import pytest

sys.exit(0 if pytest.main(sys.argv[1:]) == 0 else 1)
'''

MUTMUT_CONFIG = '''\
"""Written by tools/mutation.py: each mutant runs the fast tests of its own file."""
import json, shlex, sys

_SELECTION = json.loads({selection!r})
_PYTEST = {pytest!r}


def pre_mutation(context):
    tests = _SELECTION.get(context.filename)
    if tests is None:
        context.skip = True
        return
    context.config.test_command = " ".join(
        [shlex.quote(sys.executable), "mutmut_pytest.py", *_PYTEST, *tests])
'''


def write_mutmut_config(files):
    selection = {f: tests_for(f) for f in files}
    (WORK / "mutmut_pytest.py").write_text(MUTMUT_PYTEST)
    (WORK / "mutmut_config.py").write_text(MUTMUT_CONFIG.format(
        selection=json.dumps(selection), pytest=[shlex_quote(a) for a in PYTEST_ARGS]))
    return selection


def shlex_quote(arg):
    import shlex
    return shlex.quote(arg)


def source_files(paths):
    out = []
    for p in paths:
        p = p.rstrip("/")
        full = WORK / p
        if full.is_file():
            out.append(p)
        elif full.is_dir():
            out += sorted(str(f.relative_to(WORK)) for f in full.rglob("*.py")
                          if "__pycache__" not in f.parts)
        else:
            raise SystemExit(f"mutation: no such file or folder in the tree: {p}")
    return [f for f in out if not f.endswith("__init__.py")]


def check_imports_come_from_the_copy():
    probe = ("import importlib, json, sys, tomllib;"
             "p = tomllib.load(open('pyproject.toml', 'rb'))['tool']['setuptools']['package-dir'];"
             "print(json.dumps([importlib.import_module(n).__file__ for n in p]))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=WORK, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    if out.returncode:
        raise SystemExit(f"mutation: the work copy does not import: {out.stderr.strip()}")
    stray = [f for f in json.loads(out.stdout) if not Path(f).resolve().is_relative_to(WORK)]
    if stray:
        raise SystemExit(f"mutation: tests would import the tree, not the mutated copy: {stray}")


def forget_baseline_unless(baseline):
    """mutmut keeps the baseline's time while the tests do not change, even when this run's
    baseline command (another PATHS, another selection) differs: then drop it, so that the
    timeout (10 x baseline) is measured on the tests this run's mutants actually run."""
    record = WORK / ".mutation-baseline"
    cache = WORK / ".mutmut-cache"
    if cache.exists() and (not record.exists() or record.read_text() != baseline):
        with sqlite3.connect(cache) as db:
            db.execute("DELETE FROM MiscData WHERE key IN ('baseline_time_elapsed', 'hash_of_tests')")
    record.write_text(baseline)


def run_mutmut(files, selection, skip=""):
    env = dict(os.environ, CHESSACCEL_SEED=MUTANT_SEED, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    # mutmut times out a mutant at 10 x the baseline run: the baseline is every test the
    # mutants of this run may need, so no slow survivor passes for a timeout
    union = sorted({t for tests in selection.values() for t in tests})
    baseline = " ".join([shlex_quote(sys.executable), "mutmut_pytest.py",
                         *map(shlex_quote, PYTEST_ARGS), *union])
    forget_baseline_unless(baseline)
    command = ["nice", "-n", "10", mutmut, "run", "--paths-to-mutate", ",".join(files),
               "--runner", baseline, "--tests-dir", "tests", "--simple-output"]
    if skip:
        command += ["--disable-mutation-types", skip]
    log(f"mutmut over {len(files)} files (progress below; resumable: run again to go on)")
    started = time.monotonic()
    status = subprocess.run(command, cwd=WORK, env=env).returncode
    log(f"mutmut finished with status {status} after {time.monotonic() - started:.0f} s")
    if status & 1:
        raise SystemExit("mutation: mutmut failed (see above)")


# --- the report -----------------------------------------------------------------------------

#: mutmut's "suspicious" is a mutant the tests killed, slowly; "timeout", one they never finished.
DETECTED = {"ok_killed", "ok_suspicious", "bad_timeout"}
TESTED = DETECTED | {"bad_survived"}


def folder_of(filename):
    for folder in ("sim/model", "host", "chessaccel"):
        if filename.startswith(folder + "/"):
            return folder
    return filename.split("/")[0]


def mutant_diff(mutant_id, filename):
    shown = subprocess.run([str(Path(sys.executable).with_name("mutmut")), "show", str(mutant_id)],
                           cwd=WORK, capture_output=True, text=True)
    lines = [l for l in shown.stdout.splitlines() if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    before = "\n".join(l[1:].strip() for l in lines if l.startswith("-"))
    after = "\n".join(l[1:].strip() for l in lines if l.startswith("+"))
    return before, after


def report(paths, skip=""):
    cache = WORK / ".mutmut-cache"
    if not cache.exists():
        raise SystemExit("mutation: no results yet (run without --report-only first)")
    db = sqlite3.connect(cache)
    rows = db.execute("""SELECT m.id, f.filename, l.line_number, l.line, m."index", m.status
                         FROM Mutant m JOIN Line l ON m.line = l.id
                         JOIN SourceFile f ON l.sourcefile = f.id""").fetchall()
    wanted = tuple(p.rstrip("/") for p in paths)
    rows = [r for r in rows if r[1] in wanted or r[1].startswith(tuple(w + "/" for w in wanted))]
    equivalent = json.loads(EQUIVALENT_FILE.read_text()) if EQUIVALENT_FILE.exists() else []
    folders, survivors = {}, []
    for mutant_id, filename, line_number, line, index, status in sorted(rows, key=lambda r: (r[1], r[2], r[4])):
        entry = folders.setdefault(folder_of(filename), dict.fromkeys(
            ("mutants", "killed", "timeout", "survived", "suspicious", "equivalent", "untested",
             "skipped"), 0))
        entry["mutants"] += 1
        key = {"ok_killed": "killed", "bad_timeout": "timeout", "bad_survived": "survived",
               "ok_suspicious": "suspicious", "skipped": "skipped"}.get(status, "untested")
        entry[key] += 1
        if status == "bad_survived":
            before, after = mutant_diff(mutant_id, filename)
            why = next((e["why"] for e in equivalent if e["file"] == filename
                        and e["line"].strip() == before and e["mutant"].strip() == after), None)
            if why:
                entry["equivalent"] += 1
            survivors.append({"id": mutant_id, "file": filename, "line_number": line_number,
                              "line": before or line.strip(), "mutant": after,
                              "status": status, "equivalent": why})
    for entry in folders.values():
        tested = entry["killed"] + entry["timeout"] + entry["survived"] + entry["suspicious"]
        detected = entry["killed"] + entry["timeout"] + entry["suspicious"]
        entry["tested"] = tested
        entry["kill_rate"] = round(detected / tested, 4) if tested else None
        judged = tested - entry["equivalent"]
        entry["kill_rate_without_equivalent"] = round(detected / judged, 4) if judged else None
    summary = {"tool": "mutmut 2 (tools/mutation.py)", "paths": list(paths),
               "mutation_types_skipped": skip or None,
               "folders": folders, "survivors": survivors,
               "equivalent_list": str(EQUIVALENT_FILE.relative_to(ROOT))}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"summary{SUFFIX}.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = ["Surviving mutants (file:line, original -> mutant); [equivalent: why] where judged so", ""]
    for s in survivors:
        tag = f"   [equivalent: {s['equivalent']}]" if s["equivalent"] else ""
        lines.append(f"{s['file']}:{s['line_number']} (mutmut id {s['id']}, {s['status']}){tag}")
        lines.append(f"    - {s['line']}")
        lines.append(f"    + {s['mutant']}")
    (OUT / f"survivors{SUFFIX}.txt").write_text("\n".join(lines) + "\n")
    print()
    print(f"{'folder':12s} {'mutants':>8s} {'tested':>7s} {'killed':>7s} {'timeout':>8s} "
          f"{'survived':>9s} {'equiv.':>7s} {'untested':>9s} {'kill rate':>10s} {'w/o equiv.':>11s}")
    for folder, e in sorted(folders.items()):
        rate = f"{100 * e['kill_rate']:.1f} %" if e["kill_rate"] is not None else "-"
        rate2 = (f"{100 * e['kill_rate_without_equivalent']:.1f} %"
                 if e["kill_rate_without_equivalent"] is not None else "-")
        print(f"{folder:12s} {e['mutants']:8d} {e['tested']:7d} {e['killed']:7d} {e['timeout']:8d} "
              f"{e['survived']:9d} {e['equivalent']:7d} {e['untested']:9d} "
              f"{rate:>10s} {rate2:>11s}")
    print(f"\nwrote {OUT.relative_to(ROOT)}/summary{SUFFIX}.json and survivors{SUFFIX}.txt "
          f"({len(survivors)} survivors)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help=f"files or folders (default: {' '.join(DEFAULT_PATHS)})")
    parser.add_argument("--report-only", action="store_true", help="only write the report")
    parser.add_argument("--skip", default="",
                        help="mutation types left out, comma-separated (mutmut's names, e.g. "
                             "'string': help and message texts); the summary records it")
    args = parser.parse_args(argv)
    if args.skip:
        # mutmut numbers a line's mutants among the types applied: another set of types needs
        # its own cache, hence its own work copy and its own report
        global WORK, SUFFIX
        SUFFIX = "-no-" + args.skip.replace(",", "-")
        WORK = OUT / f"work{SUFFIX}"
    paths = [p for arg in args.paths for p in arg.split()] or list(DEFAULT_PATHS)
    if not args.report_only:
        sync_work_copy()
        build_import_shim()
        check_imports_come_from_the_copy()
        files = source_files(paths)
        selection = write_mutmut_config(files)
        for f in files:
            log(f"{f}: {' '.join(selection[f])}")
        run_mutmut(files, selection, args.skip)
    report(paths, args.skip)


if __name__ == "__main__":
    main()

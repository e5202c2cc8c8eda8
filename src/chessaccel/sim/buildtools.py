"""What the simulation builds share: a cross-process lock for build caches, the check that the
Verilator toolchain is present, the word-level netlist and flags Verilator gets, and the input
registers (``LatchedInputs``) the job harness puts in front of the search core.

Why a netlist of our own rather than ``amaranth.back.verilog``: Amaranth's Verilog keeps its
processes (``always @*`` blocks assigning slices of wide signals such as a whole ``Position``) and
one-hot decoders written as ``1'h1 << square`` at 127 bits. Verilator 5.006 turns the first into
``_vl_insert_WW`` calls and inlines the second, a 127-bit shift, into each of ~3,900 bit readers;
on the search core those two were two thirds of the run time (perf). ``verilator_netlist`` runs
Amaranth's built-in Yosys on the RTLIL instead: ``proc`` (processes to multiplexers), ``flatten``,
``opt`` and ``wreduce`` (the decoders shrink to 64 bits, one machine word), then ``write_verilog``:
a word-level netlist, not a gate-mapped one (bit-blasting makes Verilator slower still). Where
that netlist reads one bit of a vector to compute another bit of the same vector (false
combinational loops, Verilator's UNOPTFLAT, which it resolves by iterating), the vector is marked
``/*verilator split_var*/``, found by a Verilator lint pass (seconds). docs/synthesis.md has the
figures.
"""

import ast
import fcntl
import functools
import os
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from amaranth.hdl import ClockDomain, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In

__all__ = ["PACKAGE_ROOT", "build_root", "locked", "module_files", "verilator_missing", "verilator_netlist", "VERILATOR_FLAGS",
           "VERILATOR_MAKEFLAGS", "NETLIST_SCRIPT", "split_false_loops", "LatchedInputs",
           "verilator_version", "make_arguments", "files_digest", "netlist_tools",
           "verilator_build"]

#: The installed package (src/chessaccel in a checkout): cache keys name files relative to it.
PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def build_root(kind, env=None):
    """Folder of the build cache ``kind`` (verilator, cocotb, native): ``$env`` if set; else
    ``build/KIND`` in the source checkout the package runs from (git-ignored), or, for an
    installed package, ``$XDG_CACHE_HOME/chessaccel/KIND`` (never inside site-packages)."""
    if env and os.environ.get(env):
        return Path(os.environ[env])
    checkout = PACKAGE_ROOT.parents[1]
    if (checkout / "pyproject.toml").is_file() and (checkout / "src" / "chessaccel").is_dir():
        return checkout / "build" / kind
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "chessaccel" / kind


#: Verilator options of every compiled simulation: -O3, X assignments and initial values
#: resolved the fast way (Amaranth designs reset every register they read), no assertions;
#: Amaranth's Verilog gives WIDTH / CASEINCOMPLETE warnings, hence -Wno-fatal.
VERILATOR_FLAGS = ["-Wno-fatal", "-Wno-lint", "-Wno-style", "-O3", "--x-assign", "fast",
                   "--x-initial", "fast", "--noassert"]
#: Make variables for Verilator's generated Makefile, one ``-MAKEFLAGS`` each. Its default
#: optimisation for the model is -Os (OPT_FAST; the runtime library: OPT_GLOBAL); these
#: override the -O level a ``-CFLAGS`` gives, which comes earlier on g++'s command line.
#: Measured on the search core (2026-11-24, 10 bench jobs, harness CPU seconds): -Os 1.19-1.26,
#: -O2 1.16-1.18 for as much g++ time, -O1 1.21-1.34 with a third less g++ time (43 against
#: 63 CPU s). The test suite builds four models and runs each for seconds, so -O1.
VERILATOR_MAKEFLAGS = ["OPT_FAST=-O1", "OPT_GLOBAL=-O1"]
#: The Yosys passes of ``verilator_netlist`` (Amaranth's built-in Yosys has these).
NETLIST_SCRIPT = "proc; flatten; opt_clean; opt; wreduce; opt_clean; memory_collect"
#: Lint passes looking for false loops before giving up (each split usually clears them all).
_SPLIT_PASSES = 6


class LatchedInputs(wiring.Component):
    """``inner`` (a wiring.Component) behind registers on every input, clocked by ``latch_clk``.

    Why: Verilator 5.006 evaluates all logic that depends on a top-level input in its ``ico``
    region on *every* ``eval()`` (its trigger is "first iteration"), i.e. twice a clock cycle.
    The search core's FSM reads ``start``, ``abort`` and ``job``, so most of its next-state
    logic was computed three times a cycle (ico on both edges, nba after the rising one): 31 %
    of the run time (perf). Behind registers the inputs are ordinary state: that logic runs only
    in the nba region, once a clock edge, and the falling-edge ``eval()`` costs next to nothing.
    The harness sets the inputs and pulses ``latch_clk`` only when it changes them (a job's
    start, an abort), so the core sees them at the same clock edge as without the wrapper:
    the walk and the cycle counts are unchanged. Outputs pass straight through. Simulation
    only: hardware keeps the bare component.
    """

    def __init__(self, inner):
        for name, member in inner.signature.members.items():
            if not member.is_port:
                self._MustUse__silence = True   # refused: no "created but never used" warning
                raise TypeError(f"LatchedInputs: {name} is not a plain port")
        self.inner = inner
        super().__init__({**inner.signature.members, "latch_clk": In(1)})

    def elaborate(self, platform):
        m = Module()
        m.domains.latch = latch = ClockDomain(reset_less=True)
        m.d.comb += latch.clk.eq(self.latch_clk)
        m.submodules.inner = self.inner
        for name, member in self.inner.signature.members.items():
            outer, wrapped = getattr(self, name), getattr(self.inner, name)
            # a port array (one port per thread of an interleaved core): element by element
            pairs = ([(outer, wrapped)] if not member.dimensions
                     else [(outer[i], wrapped[i]) for i in range(member.dimensions[0])])
            for outer_port, inner_port in pairs:
                if member.flow == In:
                    m.d.latch += inner_port.eq(outer_port)
                else:
                    m.d.comb += outer_port.eq(inner_port)
        return m


def _module_path(name):
    """Source file of the chessaccel module ``name`` (a package's __init__.py), or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE_ROOT.name:
        return None
    base = PACKAGE_ROOT.joinpath(*parts[1:])
    for path in ((base.parent / f"{base.name}.py") if len(parts) > 1 else None,
                 base / "__init__.py"):
        if path is not None and path.is_file():
            return path
    return None


def module_files(*names):
    """Source files of the chessaccel modules ``names`` and of every chessaccel module they
    import, followed through the import statements of their sources (read with ``ast``: an import
    inside a function counts, as hdl/boardtop.py's of the SearchCore) and through their packages'
    __init__ files. What a build cache key hashes: the same files in every process, whatever it
    has imported so far (a key that followed the imported modules' attributes differed between
    pytest-xdist workers, which then built the same design twice), and never short of a module
    the design reads (a hand-kept list missed one). A JSON file beside a module whose source
    names it (evalweights.json) counts as well."""
    files, seen, stack = set(), set(), list(names)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_path(name)
        if path is None and name in names and getattr(sys.modules.get(name), "__file__", None):
            path = Path(sys.modules[name].__file__).resolve()  # a root outside the package
        if path is None:
            continue        # outside the package, or a name imported from a module
        files.add(path)
        text = path.read_text()
        # the data a module reads beside it (contract/evalweights.py's evalweights.json): a
        # design built from other weights is another design
        files.update(data for data in path.parent.glob("*.json") if data.name in text)
        parts = name.split(".")
        stack += [".".join(parts[:i]) for i in range(1, len(parts))]
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.Import):
                stack += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([module] if module else []))
                stack.append(module)
                stack += [f"{module}.{alias.name}" for alias in node.names]
    return sorted(files)


def files_digest(digest, files):
    """Feed ``files``, names (relative to PACKAGE_ROOT when under it) and contents, to the hash
    object ``digest``."""
    for path in files:
        name = path.relative_to(PACKAGE_ROOT) if path.is_relative_to(PACKAGE_ROOT) else path.name
        digest.update(str(name).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest


@contextmanager
def locked(path):
    """Hold an exclusive lock on ``path`` (created with its folder): one builder per cache
    entry, whatever the number of pytest-xdist workers or processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def verilator_missing(purpose="the Verilator simulation"):
    """A one-line reason a Verilator build cannot run here, or None when it can."""
    for tool in ("verilator", "make", "c++"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed ({purpose} needs Verilator, make and a C++ compiler)"
    return None


def make_arguments():
    """``VERILATOR_MAKEFLAGS`` as Verilator command-line arguments."""
    return [argument for flag in VERILATOR_MAKEFLAGS for argument in ("-MAKEFLAGS", flag)]


@functools.cache
def verilator_version():
    """``verilator --version``, asked once a process: the build caches are keyed on it, and the
    query (a Perl start-up, ~0.1 s) was paid on every job run (ten times a bench)."""
    return subprocess.run(["verilator", "--version"], capture_output=True,
                          text=True).stdout.strip()


def _first_line(command):
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError:
        return f"{command[0]}: not found"
    return ((done.stdout or done.stderr).strip().splitlines() or [""])[0]


@functools.cache
def netlist_tools():
    """The tools a Verilator build depends on besides its sources, one line: the Amaranth and
    Yosys versions (``verilator_netlist``), Verilator's and the C++ compiler's. Part of every
    Verilator build's cache key, so that no build made by other tools is taken."""
    import amaranth
    from amaranth._toolchain.yosys import find_yosys
    yosys = find_yosys(lambda version: version >= (0, 40))
    return (f"amaranth {amaranth.__version__}|{yosys.__name__} {yosys.version()}|"
            f"{verilator_version()}|{_first_line(['c++', '--version'])}")


def verilator_netlist(component, name, lint=True):
    """Word-level Verilog of ``component`` as top module ``name``, ready for ``verilator_build``:
    the vectors of the false loops one lint pass reports are marked split (``split_false_loops``
    with ``passes=1``); ``verilator_build`` finds any left in its own Verilator run.
    ``lint=False`` leaves even that pass to the build: for the logic around a shared core's
    netlist (sim/rtl_search.core_netlist, its own loops split already), whose lint would read
    the core again (6-10 CPU s) and which had no false loop (input registers, the link)."""
    from amaranth._toolchain.yosys import find_yosys
    from amaranth.back import rtlil
    text = rtlil.convert(component, name=name, emit_src=False)
    yosys = find_yosys(lambda version: version >= (0, 40))
    verilog = yosys.run(["-q", "-"], f"read_rtlil <<rtlil\n{text}\nrtlil\n{NETLIST_SCRIPT}\n"
                                     "write_verilog -noattr\n", ignore_warnings=True)
    return split_false_loops(verilog, name, passes=1 if lint else 0)


def _declaration(name):
    """A regex for the vector declaration of the (possibly escaped) identifier ``name``."""
    simple = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name)
    ident = re.escape(name) if simple else re.escape("\\" + name)
    return re.compile(r"^(\s*(?:wire|reg)\s+(?:signed\s+)?\[\d+:\d+\]\s+" + ident + r")(\s*;)",
                      re.M)


def _mark_loops(verilog, top, report):
    """(``verilog`` with each vector of the loops in Verilator's ``report`` marked split_var,
    how many were marked now). A vector marked already is not counted."""
    names = set(re.findall(rf"Example path: {re.escape(top)}\.(\S+)", report))
    names |= set(re.findall(rf"Circular combinational logic: '{re.escape(top)}\.([^']+)'",
                            report))
    added = 0
    for name in sorted(names):
        verilog, found = _declaration(name).subn(
            lambda m: f"{m.group(1)} /*verilator split_var*/{m.group(2)}", verilog, count=1)
        added += found
    return verilog, added


def split_false_loops(verilog, top, workdir=None, passes=_SPLIT_PASSES):
    """``verilog`` with each vector Verilator reports in a combinational loop marked split_var.

    The loops through such vectors are false (bit i feeds bit j), so splitting the vector into
    its bits removes them; a loop through no vector is left as it is (and will show as
    UNOPTFLAT in the build log). At most ``passes`` lint passes (seconds each): each marks what
    its report names, and the next checks the marks cleared every loop. ``passes=1`` leaves that
    check to the build (``verilator_build``): on every design here one pass clears them all, and
    the checking pass cost as much again (3.6 CPU s on the core, 11.5 on the terms core).
    """
    import tempfile
    with tempfile.TemporaryDirectory(dir=workdir) as folder:
        source = Path(folder) / f"{top}.v"
        for _ in range(passes):
            source.write_text(verilog)
            lint = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "-Wno-lint",
                                   "-Wno-style", "--top-module", top, str(source)],
                                  capture_output=True, text=True)
            if "UNOPTFLAT" not in lint.stderr:
                break
            verilog, added = _mark_loops(verilog, top, lint.stderr)
            if not added:
                break
    return verilog


def verilator_build(verilog, top, command, folder):
    """Write ``verilog`` to ``folder``/``top``.v and run the Verilator build ``command`` there
    (it names ``top``.v). Where its report still shows a false loop through a vector not yet
    split (UNOPTFLAT: simulated correctly, by iteration, only slower), the vector is marked and
    the build run again, at most _SPLIT_PASSES times. Returns (return code, the build's output);
    the output is also written to ``folder``/build.log."""
    source = Path(folder) / f"{top}.v"
    for _ in range(_SPLIT_PASSES):
        source.write_text(verilog)
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
        output = done.stdout + done.stderr
        if done.returncode != 0 or "UNOPTFLAT" not in output:
            break
        verilog, added = _mark_loops(verilog, top, output)
        if not added:
            break
    (Path(folder) / "build.log").write_text(output)
    return done.returncode, output

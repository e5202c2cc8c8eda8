"""Synthesis of chessaccel's blocks for ECP5 FPGAs with the YoWASP tools, and their reports.

``python -m chessaccel.synth BLOCK`` (see ``--list``) synthesises one block of hdl/ behind a scan
harness (synth/harness.py), places and routes it, and writes LUT4, flip-flops, carries, block RAM,
multipliers and the achieved Fmax as JSON. ``python -m chessaccel.synth.board ulx3s-85f`` builds a
bitstream for a real board. docs/synthesis.md describes the flow and records the figures.

Python API::

    from chessaccel.synth import SynthOptions, synthesise_block, summary_line
    record = synthesise_block("genvictim", SynthOptions(freq_mhz=75))
    print(summary_line(record))
"""

from .flow import (DEFAULT_OUT, SynthOptions, ToolchainMissing, ToolFailed, summary_line,
                   synthesise_block, synthesise_component, toolchain_problem)
from .harness import HarnessBaseline, ScanHarness, harness_cost, port_widths
from .registry import BLOCKS, GROUPS, BlockUnavailable, expand, resolve

__all__ = [
    "DEFAULT_OUT", "SynthOptions", "ToolchainMissing", "ToolFailed", "summary_line",
    "synthesise_block", "synthesise_component", "toolchain_problem",
    "HarnessBaseline", "ScanHarness", "harness_cost", "port_widths",
    "BLOCKS", "GROUPS", "BlockUnavailable", "expand", "resolve",
]

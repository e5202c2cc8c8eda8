"""Run the search core's RTL (Amaranth -> Verilog -> Icarus under cocotb) from plain Python.

``rtl_search`` and ``rtl_perft`` run one job; ``run_jobs`` runs a whole list of jobs in one
simulator run (the tests and ``chessaccel bench --backend rtl`` use it) and returns, per job, the
result fields, the node count and the cycle count, plus the trace of nodes entered when asked.

``run_cocotb`` is the small helper every testbench of the search blocks goes through: it exports a
component to Verilog into a git-ignored cache folder (``build/rtl/<name>``), builds it with Icarus
once per design change, and runs a cocotb test module with the given environment. Waveforms are
written when ``CHESSACCEL_WAVES=1``.
"""

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ToolchainMissing", "toolchain_missing", "run_cocotb", "RtlJob", "RtlResult",
           "run_jobs", "rtl_search", "rtl_perft", "BUILD_ROOT"]

#: Where exported Verilog and simulator builds are cached (ignored by git).
BUILD_ROOT = Path(os.environ.get("CHESSACCEL_BUILD", Path(__file__).resolve().parent.parent
                                 / "build" / "rtl"))
_WAVES = "CHESSACCEL_WAVES"
_TIMESCALE = ("1ns", "1ps")


class ToolchainMissing(RuntimeError):
    """Icarus Verilog or cocotb is not installed."""


def toolchain_missing():
    """A one-line reason the RTL simulation cannot run here, or None when it can."""
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        return "Icarus Verilog (iverilog, vvp) is not on PATH"
    try:
        import cocotb_tools.runner  # noqa: F401
    except ImportError:
        return "cocotb is not installed"
    return None


def _export(component_factory, name):
    """Verilog of the component in ``BUILD_ROOT/name``; rewritten only when it changed."""
    from amaranth.back import verilog
    folder = BUILD_ROOT / name
    folder.mkdir(parents=True, exist_ok=True)
    text = verilog.convert(component_factory(), name=name, emit_src=False)
    path = folder / f"{name}.v"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return path, folder / f"sim_{digest}"


def run_cocotb(component_factory, name, test_module, env):
    """Export, build (once per design) and run ``test_module`` against the component.

    ``env`` is passed to the simulation's environment (file paths of jobs and results).
    """
    reason = toolchain_missing()
    if reason:
        raise ToolchainMissing(reason)
    from cocotb_tools.runner import get_runner
    verilog_path, build_dir = _export(component_factory, name)
    waves = os.environ.get(_WAVES) == "1"
    runner = get_runner("icarus")
    runner.build(sources=[verilog_path], hdl_toplevel=name, build_dir=build_dir,
                 timescale=_TIMESCALE, waves=waves, log_file=build_dir / "build.log")
    results_xml = runner.test(test_module=test_module, hdl_toplevel=name, build_dir=build_dir,
                              test_dir=build_dir, extra_env={k: str(v) for k, v in env.items()},
                              waves=waves, timescale=_TIMESCALE,
                              log_file=build_dir / f"{test_module.rsplit('.', 1)[-1]}.log")
    from cocotb_tools.runner import get_results
    total, failed = get_results(results_xml)
    if failed:
        raise RuntimeError(f"cocotb test {test_module} failed ({failed} of {total}); "
                           f"log in {build_dir}")

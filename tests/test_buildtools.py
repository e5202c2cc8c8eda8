"""sim/buildtools.py's LatchedInputs: the wrapper the Verilator job harness puts around the core.

The harness relies on two properties (sim/verilator/searchcore.cpp): an input reaches the
wrapped component only when ``latch_clk`` pulses, and then at the same clock edge as if it had
been driven directly; outputs pass through unchanged. Checked here in Amaranth's simulator on a
toy component (no toolchain needed); tests/test_search.py checks the real core node for node.
"""

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from chessaccel.sim import buildtools
from chessaccel.sim.buildtools import LatchedInputs


class Accumulator(wiring.Component):
    """``total`` adds ``step`` every cycle ``enable`` is high; ``peek`` is comb from ``step``."""
    step: In(4)
    enable: In(1)
    total: Out(8)
    peek: Out(4)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.peek.eq(self.step)
        with m.If(self.enable):
            m.d.sync += self.total.eq(self.total + self.step)
        return m


def test_inputs_reach_the_core_only_through_the_latch():
    dut = LatchedInputs(Accumulator())
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    seen = []

    async def bench(ctx):
        async def pulse():
            ctx.set(dut.latch_clk, 1)
            await ctx.delay(1e-8)
            ctx.set(dut.latch_clk, 0)
            await ctx.delay(1e-8)

        ctx.set(dut.step, 3)
        ctx.set(dut.enable, 1)
        await ctx.tick()
        seen.append((ctx.get(dut.total), ctx.get(dut.peek)))   # not latched yet: nothing
        await pulse()
        seen.append((ctx.get(dut.total), ctx.get(dut.peek)))   # latched: comb output follows
        await ctx.tick().repeat(2)
        seen.append((ctx.get(dut.total), ctx.get(dut.peek)))   # two edges of +3
        ctx.set(dut.enable, 0)
        await pulse()
        await ctx.tick()
        seen.append((ctx.get(dut.total), ctx.get(dut.peek)))   # held

    sim.add_testbench(bench)
    sim.run()
    assert seen == [(0, 0), (0, 3), (6, 3), (6, 3)]


def test_only_plain_ports_are_wrapped():
    class Nested(wiring.Component):
        bus: Out(wiring.Signature({"data": Out(8)}))

        def elaborate(self, platform):
            return Module()

    nested = Nested()
    nested._MustUse__silence = True     # refused before use: Amaranth's unused warning is moot
    with pytest.raises(TypeError, match="bus is not a plain port"):
        LatchedInputs(nested)


# --- what a build cache key hashes (module_files) ------------------------------------------

def _names(files):
    from chessaccel.sim.buildtools import PACKAGE_ROOT
    return {str(path.relative_to(PACKAGE_ROOT)) for path in files}


def test_module_files_follow_every_import_of_the_sources():
    """hdl/search.py's closure holds what it imports at any depth (contract/relative.py, which a
    hand-kept list of the core's modules missed) and the packages' __init__ files; hdl/boardtop.py's
    holds the SearchCore's through the import inside a function; the link's does not."""
    from chessaccel.sim.buildtools import module_files
    core = _names(module_files("chessaccel.hdl.search"))
    assert {"hdl/search.py", "hdl/genvictim.py", "hdl/squarearray.py", "contract/relative.py",
            "contract/defs.py", "contract/evaltables.py", "hdl/__init__.py",
            "__init__.py"} <= core
    assert not any(name.startswith(("host/", "sim/", "model/", "lab/")) for name in core), core
    assert _names(module_files("chessaccel.hdl.boardtop")) >= core | {"hdl/uart.py", "hdl/link.py"}
    assert "hdl/search.py" not in _names(module_files("chessaccel.hdl.link"))


def test_build_keys_do_not_depend_on_what_the_process_has_imported():
    """Two pytest-xdist workers, having run different tests, must find the same build: the keys
    are computed in fresh interpreters, one of which imports much of the package first."""
    import subprocess
    import sys
    script = ("import sys\n"
              "if sys.argv[1] == 'more':\n"
              "    import chessaccel.host.cli, chessaccel.hdl.search, chessaccel.hdl.boardtop\n"
              "from chessaccel.sim import boardsim, cocotb_runner, rtl_search\n"
              "from chessaccel.hdl.movegen import MoveWalker\n"
              "print(rtl_search._verilator_key(), boardsim._key(2, 4),\n"
              "      cocotb_runner._design_key(MoveWalker, 'movewalker', 'gates'))\n")
    keys = {subprocess.run([sys.executable, "-c", script, imports], capture_output=True,
                           text=True, check=True).stdout for imports in ("less", "more")}
    assert len(keys) == 1, keys


def test_a_changed_source_changes_the_key(tmp_path):
    """The key of a build hashes the contents of every file the closure names."""
    import hashlib
    from chessaccel.sim import buildtools
    source = tmp_path / "design.py"
    source.write_text("x = 1\n")
    first = buildtools.files_digest(hashlib.sha256(), [source]).hexdigest()
    source.write_text("x = 2\n")
    assert buildtools.files_digest(hashlib.sha256(), [source]).hexdigest() != first


#: A false loop through one vector (bit i feeds bit j > i), as Yosys writes them.
_FALSE_LOOP = """module top(input [1:0] a, output [3:0] y);
  wire [3:0] v;
  assign v[0] = a[0];
  assign v[1] = v[0] ^ a[1];
  assign v[2] = v[1] & a[0];
  assign v[3] = v[2] | v[0];
  assign y = v;
endmodule
"""


@pytest.mark.skipif(buildtools.verilator_missing() is not None,
                    reason=f"{buildtools.verilator_missing()}")
def test_a_loop_the_netlist_left_is_split_by_the_build(tmp_path):
    """``verilator_netlist`` marks the loops of one lint pass and leaves the check to the build:
    ``verilator_build`` marks a vector its own Verilator run still reports (UNOPTFLAT) and runs
    the build again, so its log ends clean. A lint pass stands in for the build here."""
    command = ["verilator", "--lint-only", "-Wno-fatal", "-Wno-lint", "-Wno-style",
               "--top-module", "top", "top.v"]
    status, output = buildtools.verilator_build(_FALSE_LOOP, "top", command, tmp_path)
    assert status == 0 and "UNOPTFLAT" not in output
    assert (tmp_path / "build.log").read_text() == output
    assert "wire [3:0] v /*verilator split_var*/;" in (tmp_path / "top.v").read_text()
    assert buildtools.split_false_loops(_FALSE_LOOP, "top", passes=1) == (
        tmp_path / "top.v").read_text()

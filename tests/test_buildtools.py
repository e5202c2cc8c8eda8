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

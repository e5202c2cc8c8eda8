"""hdl/uart.py against the 8N1 line as a host UART sees it (Amaranth simulator).

The model is the serial line itself: ``line_bits(byte)`` is what pyserial's UART puts on the wire.
The transmitter's pin is compared with it bit time by bit time; the receiver is fed lines with
bit rates off by up to +-2%, glitches and broken stop bits.
"""

import random

import pytest
from amaranth.hdl import Module
from amaranth.sim import Simulator

from chessaccel.hdl.uart import (DATA_BITS, MIN_CLOCKS_PER_BIT, UARTReceiver, UARTTransmitter,
                                 clocks_per_bit)

CLOCK_PERIOD = 1e-6
IDLE = 1


def line_bits(byte):
    """The 8N1 frame of one byte: start bit, data LSB first, stop bit."""
    return [0] + [(byte >> i) & 1 for i in range(DATA_BITS)] + [1]


def _simulate(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(CLOCK_PERIOD)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("divisor", [MIN_CLOCKS_PER_BIT, 7, 16])
def test_transmitter_drives_the_8n1_line(divisor):
    payload = [0x00, 0xFF, 0xA5, 0x5A] + random.Random(divisor).choices(range(256), k=6)
    dut = UARTTransmitter(divisor)
    seen = []

    async def bench(ctx):
        await ctx.tick().repeat(3)
        assert ctx.get(dut.tx) == IDLE
        queue = list(payload)
        while queue or ctx.get(dut.busy):
            ctx.set(dut.data.valid, bool(queue))
            if queue:
                ctx.set(dut.data.payload, queue[0])
            if queue and ctx.get(dut.data.ready):
                queue.pop(0)
            await ctx.tick()
            seen.append(ctx.get(dut.tx))
        ctx.set(dut.data.valid, 0)
        await ctx.tick().repeat(divisor * 3)
        seen.extend([ctx.get(dut.tx)])

    _simulate(dut, bench)
    # decode the recorded line as a host UART would: find start bits, sample mid-bit
    got, i = [], 0
    while i < len(seen):
        if seen[i] == 0:
            bits = [seen[i + k * divisor + divisor // 2] for k in range(DATA_BITS + 2)]
            assert bits[0] == 0 and bits[-1] == 1, f"bad frame at sample {i}: {bits}"
            got.append(sum(b << k for k, b in enumerate(bits[1:-1])))
            assert bits == line_bits(got[-1])
            i += (DATA_BITS + 1) * divisor + divisor // 2
        else:
            i += 1
    assert got == payload
    assert seen[-1] == IDLE


def _drive_line(ctx, dut, cycles_per_bit):
    """Async generator factory: send bytes with a (possibly fractional) bit time in cycles."""
    async def send(byte, bits=None):
        position = 0.0
        for bit in bits or line_bits(byte):
            ctx.set(dut.rx, bit)
            position += cycles_per_bit
            steps = round(position)
            position -= steps
            await ctx.tick().repeat(steps)
    return send


@pytest.mark.parametrize("divisor,rate_error", [(4, 0.0), (8, -0.02), (8, 0.02), (16, 0.02),
                                                (16, -0.02), (13, 0.0)])
def test_receiver_reads_bytes_at_rate_errors(divisor, rate_error):
    payload = [0x00, 0xFF, 0xA5, 0x5A] + random.Random(divisor).choices(range(256), k=12)
    dut = UARTReceiver(divisor)
    got = []

    async def bench(ctx):
        ctx.set(dut.rx, IDLE)
        ctx.set(dut.data.ready, 1)
        await ctx.tick().repeat(5)
        send = _drive_line(ctx, dut, divisor * (1 + rate_error))
        for byte in payload:
            await send(byte)
        await ctx.tick().repeat(divisor * 2)

    async def collect(ctx):
        async for _clk, _rst, valid, byte in ctx.tick().sample(dut.data.valid, dut.data.payload):
            if valid:
                got.append(byte)

    sim = Simulator(dut)
    sim.add_clock(CLOCK_PERIOD)
    sim.add_testbench(bench)
    sim.add_process(collect)
    sim.run()
    assert got == payload


def test_receiver_drops_glitches_and_broken_stop_bits():
    divisor = 8
    dut = UARTReceiver(divisor)
    got, framing = [], []

    async def bench(ctx):
        ctx.set(dut.rx, IDLE)
        ctx.set(dut.data.ready, 1)
        await ctx.tick().repeat(5)
        send = _drive_line(ctx, dut, divisor)
        ctx.set(dut.rx, 0)                   # a glitch shorter than half a bit: no byte
        await ctx.tick().repeat(divisor // 2 - 2)
        ctx.set(dut.rx, IDLE)
        await ctx.tick().repeat(divisor * 3)
        await send(0x3C, bits=line_bits(0x3C)[:-1] + [0])   # stop bit low: dropped
        ctx.set(dut.rx, IDLE)
        await ctx.tick().repeat(divisor * 3)
        await send(0xC3)
        await ctx.tick().repeat(divisor * 2)

    async def collect(ctx):
        async for _clk, _rst, valid, byte, error in ctx.tick().sample(dut.data.valid, dut.data.payload,
                                                          dut.framing_error):
            if valid:
                got.append(byte)
            if error:
                framing.append(1)

    sim = Simulator(dut)
    sim.add_clock(CLOCK_PERIOD)
    sim.add_testbench(bench)
    sim.add_process(collect)
    sim.run()
    assert got == [0xC3]
    assert framing == [1]


def test_divisor_from_clock_and_rate():
    assert clocks_per_bit(50_000_000, 115_200) == 434
    assert clocks_per_bit(48_000_000, 3_000_000) == 16
    with pytest.raises(ValueError, match="needs at least"):
        clocks_per_bit(1_000_000, 1_000_000)
    with pytest.raises(ValueError, match="off by"):
        clocks_per_bit(25_000_000, 3_000_000)
    with pytest.raises(ValueError, match="clocks_per_bit"):
        UARTReceiver(2)

"""cocotb testbench of hdl/boardtop.py at its pins: bytes go in and out through the real UART.

Parameters (``read_params``): ``clocks_per_bit`` and a list of ``exchanges``, each
``{"send": hex string, "wait_cycles": n, "until_idle": bool}``: the bench serialises the bytes
onto ``uart_rx``, bit by bit, waits (when ``until_idle``) until every LED is off (no frame in the
link, no core busy), then lets ``wait_cycles`` clock cycles pass, while it deserialises
everything that appears on ``uart_tx``. Results: ``replies``, per exchange the hex string of the
bytes the board sent during it, and ``cycles`` / ``seconds``, the clock cycles simulated and the
wall time they took (for the speed comparison with the Verilator board). The pytest side
decodes and judges the replies; this bench holds no expectations.
"""

import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge

from chessaccel.hdl.uart import DATA_BITS
from chessaccel.sim.cocotb_runner import read_params, write_results

CLOCK_PERIOD_NS = 10
#: How often, in cycles, the bench looks at the LEDs while a job runs.
IDLE_CHECK_CYCLES = 64
IDLE, START, STOP = 1, 0, 1


async def send_byte(dut, byte, clocks_per_bit):
    for bit in (START, *((byte >> i) & 1 for i in range(DATA_BITS)), STOP):
        dut.uart_rx.value = bit
        await ClockCycles(dut.clk, clocks_per_bit)


async def receive_bytes(dut, clocks_per_bit, sink):
    """Deserialise uart_tx forever, sampling each bit in its middle, like a host's UART."""
    while True:
        await FallingEdge(dut.uart_tx)
        await ClockCycles(dut.clk, clocks_per_bit // 2)
        if int(dut.uart_tx.value) != START:
            continue    # a glitch, not a start bit
        byte = 0
        for i in range(DATA_BITS):
            await ClockCycles(dut.clk, clocks_per_bit)
            byte |= int(dut.uart_tx.value) << i
        await ClockCycles(dut.clk, clocks_per_bit)
        assert int(dut.uart_tx.value) == STOP, "the board sent a byte without a stop bit"
        sink.append(byte)


@cocotb.test()
async def exchange_frames(dut):
    params = read_params()
    clocks_per_bit = params["clocks_per_bit"]
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl="gpi").start()
    dut.uart_rx.value = IDLE
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 4)
    received = []
    cocotb.start_soon(receive_bytes(dut, clocks_per_bit, received))
    replies = []
    cycles = 0
    started = time.perf_counter()
    for exchange in params["exchanges"]:
        first = len(received)
        for byte in bytes.fromhex(exchange["send"]):
            await send_byte(dut, byte, clocks_per_bit)
        cycles += len(bytes.fromhex(exchange["send"])) * (DATA_BITS + 2) * clocks_per_bit
        if exchange.get("until_idle"):
            while int(dut.led.value) != 0:
                await ClockCycles(dut.clk, IDLE_CHECK_CYCLES)
                cycles += IDLE_CHECK_CYCLES
        await ClockCycles(dut.clk, exchange["wait_cycles"])
        cycles += exchange["wait_cycles"]
        replies.append(bytes(received[first:]).hex())
    write_results({"replies": replies, "cycles": cycles,
                   "seconds": time.perf_counter() - started})

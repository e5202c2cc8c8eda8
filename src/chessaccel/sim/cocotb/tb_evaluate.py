"""cocotb testbench of hdl/evaluate.py: drive packed positions, record the scores.

Params: a list of packed Position ints; results: their scores in the same order. The pytest side
compares them with the model, so this bench holds no expectations of its own.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, NextTimeStep, ReadOnly, RisingEdge

from chessaccel.sim.cocotb_runner import read_params, write_results

CLOCK_PERIOD_NS = 10


@cocotb.test()
async def evaluate_positions(dut):
    positions = read_params()
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst.value = 1
    dut.start.value = 0
    dut.position.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    scores = []
    # One position per cycle: the score of position i appears LATENCY cycles later, strobed by
    # done, so this also checks that the pipeline stages never mix neighbouring positions.
    pending = list(positions)
    while len(scores) < len(positions):
        if pending:
            dut.position.value = pending.pop(0)
            dut.start.value = 1
        else:
            dut.start.value = 0
        await RisingEdge(dut.clk)
        await ReadOnly()
        if int(dut.done.value):
            scores.append(dut.score.value.to_signed())
        await NextTimeStep()
    write_results(scores)

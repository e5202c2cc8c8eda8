"""cocotb testbench of hdl/evaluate.py: drive packed positions, record the scores.

Positions come from the JSON file named by CHESSACCEL_JOBS (a list of packed Position ints);
the scores go to CHESSACCEL_RESULTS in the same order. The pytest side compares them with the
model, so this bench holds no expectations of its own.
"""

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from chessaccel.hdl.evaluate import LATENCY

CLOCK_PERIOD_NS = 10


@cocotb.test()
async def evaluate_positions(dut):
    positions = json.loads(open(os.environ["CHESSACCEL_JOBS"]).read())
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst.value = 1
    dut.start.value = 0
    dut.position.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    scores = []
    # One position per cycle: the pipeline's score for position i appears LATENCY cycles later,
    # strobed by done, so this also checks that the stages do not mix neighbouring positions.
    pending = list(positions)
    while len(scores) < len(positions):
        if pending:
            dut.position.value = pending.pop(0)
            dut.start.value = 1
        else:
            dut.start.value = 0
        await RisingEdge(dut.clk)
        await cocotb.triggers.ReadOnly()
        if int(dut.done.value):
            scores.append(dut.score.value.to_signed())
        await cocotb.triggers.NextTimeStep()
    with open(os.environ["CHESSACCEL_RESULTS"], "w") as out:
        json.dump(scores, out)

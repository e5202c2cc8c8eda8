"""cocotb testbench of hdl/movegen.py (MoveWalker): walks nodes, records their legal moves.

Nodes come from ``read_params()["nodes"]`` as ``[packed Position, captures_only]``; for each the
bench pulses ``start``, keeps ``moves.ready`` high and samples the stream at every rising clock
edge until ``done``. It writes, per node, the packed moves in stream order and the clock cycles
from ``start`` to ``done``.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from chessaccel.sim.cocotb_runner import read_params, write_results

CLOCK_PERIOD_NS = 10
#: A node has at most a few hundred pseudo-legal moves of 3 cycles each: a walk longer than this
#: is a hung walker.
MAX_NODE_CYCLES = 4000


@cocotb.test()
async def walk_nodes(dut):
    nodes = read_params()["nodes"]
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst.value = 0
    dut.start.value = 0
    dut.moves__ready.value = 1
    edge = RisingEdge(dut.clk)
    await edge
    valid, payload, done = dut.moves__valid, dut.moves__payload, dut.done
    walked = []
    for position, captures_only in nodes:
        dut.position.value = position
        dut.captures_only.value = captures_only
        dut.start.value = 1
        await edge
        dut.start.value = 0
        moves, cycles = [], 1
        while True:
            await edge
            cycles += 1
            if int(valid.value):
                moves.append(int(payload.value))
            if int(done.value):
                break
            assert cycles < MAX_NODE_CYCLES, f"walker hung on node {len(walked)}"
        walked.append({"moves": moves, "cycles": cycles})
    write_results(walked)

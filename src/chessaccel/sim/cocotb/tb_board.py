"""cocotb testbench of hdl/board.py (Board): replays LOAD / MAKE / UNMAKE operations.

Rows come from tests/test_board.py as ``[op, load_position, move, moving, castle, restore]``;
for each the bench
records ``[undo, position, king_squares]``: ``undo`` sampled during the operation's clock (what a
MAKE asks to keep), the others after its clock edge. The pytest side compares with the model.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from chessaccel.sim.cocotb_runner import read_params, write_results

CLOCK_PERIOD_NS = 10
SETTLE_NS = 1


@cocotb.test()
async def replay_board_operations(dut):
    rows = read_params()["rows"]
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst.value = 0
    dut.op.value = 0
    await FallingEdge(dut.clk)
    observed = []
    relative = hasattr(dut, "unmake_move")
    for op, load_position, move, moving, castle, restore in rows:
        dut.op.value = op
        dut.load_position.value = load_position
        dut.move.value = move
        if relative:     # the relative board takes the move back from its own port
            dut.unmake_move.value = move
            dut.unmake_moving.value = moving
        dut.moving.value = moving
        dut.castle.value = castle
        dut.restore.value = restore
        await Timer(SETTLE_NS, unit="ns")
        undo = int(dut.undo.value)
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        observed.append([undo, int(dut.position.value), int(dut.king_squares.value)])
    write_results(observed)

"""cocotb testbench of hdl/castlestatus.py (CastleStatus): replays the model's transactions, records the outputs.

The transactions (position, and the block's other inputs) are built by tests/test_castlestatus.py from
sim/model/castlestatus.py; see combinational.py for the format.
"""

import cocotb

from .combinational import replay_transactions


@cocotb.test()
async def replay_castlestatus_transactions(dut):
    await replay_transactions(dut)

"""cocotb testbench of hdl/genaggressor.py (GenAggressor): replays the model's transactions, records the outputs.

The transactions (position, and the block's other inputs) are built by tests/test_genaggressor.py from
sim/model/genaggressor.py; see combinational.py for the format.
"""

import cocotb

from .combinational import replay_transactions


@cocotb.test()
async def replay_genaggressor_transactions(dut):
    await replay_transactions(dut)

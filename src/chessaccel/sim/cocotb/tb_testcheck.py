"""cocotb testbench of hdl/testcheck.py (TestCheck): replays the model's transactions, records the outputs.

The transactions (position, and the block's other inputs) are built by tests/test_testcheck.py from
sim/model/testcheck.py; see combinational.py for the format.
"""

import cocotb

from .combinational import replay_transactions


@cocotb.test()
async def replay_testcheck_transactions(dut):
    await replay_transactions(dut)

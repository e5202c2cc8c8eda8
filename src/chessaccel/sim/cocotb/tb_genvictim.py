"""cocotb testbench of hdl/genvictim.py (GenVictim): replays the model's transactions, records the outputs.

The transactions (position, and the block's other inputs) are built by tests/test_genvictim.py from
sim/model/genvictim.py; see combinational.py for the format.
"""

import cocotb

from .combinational import replay_transactions


@cocotb.test()
async def replay_genvictim_transactions(dut):
    await replay_transactions(dut)

"""Shared driver of the combinational move-generation blocks' testbenches.

A combinational block needs no clock: each transaction sets the inputs that changed, lets the
simulator settle for one nanosecond and samples the outputs. The transactions come from
``read_params()`` as ``{"inputs": [port, ...], "outputs": [port, ...], "rows": [[value, ...]]}``
and the sampled outputs go back, one list per row, through ``write_results``; the pytest side
compares them with the model, so the benches hold no expectations of their own.
"""

from cocotb.triggers import Timer

from chessaccel.sim.cocotb_runner import read_params, write_results

__all__ = ["replay_transactions"]

SETTLE_NS = 1


async def replay_transactions(dut):
    params = read_params()
    inputs = [getattr(dut, name) for name in params["inputs"]]
    outputs = [getattr(dut, name) for name in params["outputs"]]
    previous = [None] * len(inputs)
    observed = []
    for row in params["rows"]:
        for i, value in enumerate(row):
            if value != previous[i]:
                inputs[i].value = value
                previous[i] = value
        await Timer(SETTLE_NS, unit="ns")
        observed.append([int(port.value) for port in outputs])
    write_results(observed)

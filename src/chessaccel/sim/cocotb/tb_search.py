"""cocotb testbench of hdl/search.py (SearchCore): runs a list of jobs, records the results.

Params (from sim/rtl_search.py): ``{"jobs": [{"job": packed SearchJob, "trace": bool,
"abort_after": cycles or null}, ...]}``. For each job the bench raises ``start`` for one cycle,
waits for ``busy`` to fall (raising ``abort`` after ``abort_after`` cycles when asked) and
records the packed ``SearchResult``, the cycles it waited and, when traced, the (ply, move) of
every node entered. The expectations live on the pytest side.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge

from chessaccel.sim.cocotb_runner import read_params, write_results

CLOCK_PERIOD_NS = 10
RESET_CYCLES = 2
#: Cycles the bench waits for busy to fall after abort before it gives up counting.
ABORT_PATIENCE = 100


async def _record_trace(dut, trace):
    # starts in the first cycle of the job (the root's), then samples every cycle
    await ReadOnly()
    while True:
        if int(dut.trace_valid.value):
            trace.append([int(dut.trace_ply.value), int(dut.trace_move.value)])
        await RisingEdge(dut.clk)
        await ReadOnly()


async def _run_job(dut, spec):
    dut.job.value = spec["job"]
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    trace = []
    tracer = cocotb.start_soon(_record_trace(dut, trace)) if spec.get("trace") else None
    abort_latency = None
    if spec.get("abort_after") is not None:
        await ClockCycles(dut.clk, spec["abort_after"])
        dut.abort.value = 1
        abort_latency = 0
        while abort_latency < ABORT_PATIENCE:
            await RisingEdge(dut.clk)
            await ReadOnly()
            abort_latency += 1
            if not int(dut.busy.value):
                break
    else:
        await ReadOnly()
    if int(dut.busy.value):
        await FallingEdge(dut.busy)
        await ReadOnly()
    result = int(dut.result.value)
    await RisingEdge(dut.clk)
    dut.abort.value = 0
    if tracer is not None:
        tracer.cancel()
    return {"result": result, "trace": trace, "abort_latency": abort_latency}


@cocotb.test()
async def run_search_jobs(dut):
    params = read_params()
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst.value = 1
    dut.start.value = 0
    dut.abort.value = 0
    dut.job.value = 0
    await ClockCycles(dut.clk, RESET_CYCLES)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    out = []
    for spec in params["jobs"]:
        out.append(await _run_job(dut, spec))
    write_results(out)

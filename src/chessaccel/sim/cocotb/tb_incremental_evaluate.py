"""cocotb testbench of hdl/evaluate.py's IncrementalEvaluate: drive make / unmake / root events,
record the sums and score after each.

Params: a list of events (tests/test_incremental_evaluate.py builds them from the model):
``{"op": "root", "pieces": [64 codes]}`` (the normalised board's squares: 64 SQUARE ops from
sums of zero), ``{"op": "make", from, to, promo, moving, castle, captured, ep_file, ep_valid}``
(the make's ports, mover's frame), ``{"op": "unmake"}``; each may carry ``"bounds"`` (the block's ``bound`` inputs, given with
the sums; the block must be built with that many). The bench keeps the stack of sums as
the SearchStack does (a make pushes the block's ``after``, an unmake pops, a root starts a new
stack) and gives the sums the op started from (the stack's top) on ``sums`` in the cycle after
the op. Results: per event [mg, eg, phase, after_score, score, at_least]: ``after``, ``after_score``
and ``at_least`` (a list of bits) in the cycle after the (last) op, ``score`` one cycle later. No expectations of its own: the pytest side compares with the model.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly

from chessaccel.hdl.evaluate import BOUND_BITS, EvalOp
from chessaccel.sim.cocotb_runner import read_params, write_results

CLOCK_PERIOD_NS = 10


def _idle(dut):
    dut.op.value = EvalOp.HOLD.value
    dut.castle.value = 0


def _signed(value, bits):
    value = int(value)
    return value - (1 << bits) if value >> (bits - 1) else value


def _pack_sums(mg, eg, phase):
    return (mg & 0x3FFFF) | ((eg & 0x3FFFF) << 18) | (phase << 36)


def _give_bounds(dut, event):
    bounds = event.get("bounds", [])
    if bounds:
        dut.bound.value = sum((b & ((1 << BOUND_BITS) - 1)) << (BOUND_BITS * i)
                              for i, b in enumerate(bounds))


def _at_least(dut, event):
    count = len(event.get("bounds", []))
    value = int(dut.at_least.value) if count else 0
    return [(value >> i) & 1 for i in range(count)]


def _unpack_sums(value):
    value = int(value)
    return (_signed(value & 0x3FFFF, 18), _signed((value >> 18) & 0x3FFFF, 18), value >> 36)


@cocotb.test()
async def incremental_evaluate_events(dut):
    events = read_params()
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl="gpi").start()
    dut.rst.value = 1
    for port in ("op", "move", "moving", "castle", "captured", "ep", "square", "piece", "sums"):
        getattr(dut, port).value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    await FallingEdge(dut.clk)
    # Inputs change at falling edges. An op is sampled at the next rising edge; in the cycle
    # after it the bench gives the sums it started from and reads ``after`` (ReadOnly); the
    # score, registered from ``after`` at the rising edge after that, is read at the next
    # falling edge.
    results, stack = [], []
    for event in events:
        if event["op"] == "root":
            # back to back, as the core's SUM_ROOT: each cycle issues the next square and gives
            # the sums so far, to which ``after`` adds the previous square's term
            sums = (0, 0, 0)
            for square, piece in enumerate(event["pieces"] + [None]):
                dut.sums.value = _pack_sums(*sums)
                if piece is None:
                    _idle(dut)
                else:
                    dut.op.value = EvalOp.SQUARE.value
                    dut.square.value = square
                    dut.piece.value = piece
                await ReadOnly()
                if square:
                    sums = _unpack_sums(dut.after.value)
                await FallingEdge(dut.clk)
            stack = [sums]
            # ``after`` of the last square was read with the sums before it: give them again
            # until the score register has taken it
            dut.sums.value = _pack_sums(*sums)
            _idle(dut)
            await FallingEdge(dut.clk)
            await FallingEdge(dut.clk)
            dut.sums.value = _pack_sums(*sums)
            _give_bounds(dut, event)
            await ReadOnly()
            sums = _unpack_sums(dut.after.value)
            after_score = _signed(dut.after_score.value, 16)
            at_least = _at_least(dut, event)
        else:
            if event["op"] == "make":
                dut.op.value = EvalOp.MAKE.value
                dut.move.value = event["from"] | (event["to"] << 6) | (event["promo"] << 12)
                dut.moving.value = event["moving"]
                dut.castle.value = event["castle"]
                dut.captured.value = event["captured"]
                dut.ep.value = event["ep_file"] | (event["ep_valid"] << 3)
            else:
                stack.pop()
                _idle(dut)
            await FallingEdge(dut.clk)
            _idle(dut)
            dut.sums.value = _pack_sums(*stack[-1])
            _give_bounds(dut, event)
            await ReadOnly()
            sums = _unpack_sums(dut.after.value)
            after_score = _signed(dut.after_score.value, 16)
            at_least = _at_least(dut, event)
            if event["op"] == "make":
                stack.append(sums)
        await FallingEdge(dut.clk)
        results.append([*sums, after_score, _signed(dut.score.value, 16), at_least])
    write_results(results)

"""SearchStack (hdl/searchstack.py) against a plain Python stack, cycle by cycle.

The reference is the obvious model: a list of frames (the model's ``Frame`` objects, packed) with
the top kept separately, exactly the mapping the AlphaBetaFSM relies on (docs/fsm.md).
"""

import random

from amaranth.sim import Simulator

from chessaccel.contract.defs import MAX_PLY
from chessaccel.hdl.searchstack import SearchStack, StackOp, Frame

CYCLES = 3000
CLEAR_RATE = 0.005
FRAME_BITS = Frame.as_shape().size


class StackModel:
    """top + the ancestors' frames; ``parent`` is the frame one ply below the top."""

    def __init__(self):
        self.top, self.frames = 0, []

    def apply(self, op, next_top, store):
        if op == StackOp.WRITE:
            self.top = next_top
        elif op == StackOp.PUSH:
            self.frames.append(store)
            self.top = next_top
        elif op == StackOp.POP:
            self.frames.pop()
            self.top = next_top
        elif op == StackOp.CLEAR:
            self.frames, self.top = [], next_top

    @property
    def ply(self):
        return len(self.frames)


def _legal_ops(ply):
    ops = [StackOp.HOLD, StackOp.WRITE]
    if ply < MAX_PLY:
        ops += [StackOp.PUSH] * 3   # favoured so that deep plies are reached
    if ply > 0:
        ops += [StackOp.POP] * 2
    return ops


def _pick_op(rng, ply):
    # a new job (CLEAR) now and then; otherwise wander up and down the stack
    return StackOp.CLEAR if rng.random() < CLEAR_RATE else rng.choice(_legal_ops(ply))


def test_searchstack_matches_list_model():
    rng = random.Random(4)
    dut = SearchStack()
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    deepest = []

    async def bench(ctx):
        model = StackModel()
        ctx.set(dut.op, StackOp.CLEAR)
        await ctx.tick()
        for cycle in range(CYCLES):
            # drift towards the deep end and back, so every entry is written and read
            op = _pick_op(rng, model.ply)
            next_top, store = rng.getrandbits(FRAME_BITS), rng.getrandbits(FRAME_BITS)
            ctx.set(dut.op, op)
            ctx.set(dut.next_top.as_value(), next_top)
            ctx.set(dut.store.as_value(), store)
            await ctx.tick()
            model.apply(op, next_top, store)
            deepest.append(model.ply)
            assert ctx.get(dut.ply) == model.ply, f"cycle {cycle} after {op}: ply"
            assert ctx.get(dut.top.as_value()) == model.top, f"cycle {cycle} after {op}: top"
            if model.ply:
                got = ctx.get(dut.parent.as_value())
                assert got == model.frames[-1], (
                    f"cycle {cycle} after {op}: parent at ply {model.ply - 1} "
                    f"rtl {got:#x} model {model.frames[-1]:#x}")

    sim.add_testbench(bench)
    sim.run()
    assert max(deepest) == MAX_PLY

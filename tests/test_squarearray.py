"""The square array's ray builders: ``ray_fill_prefix`` (the parallel prefix GenAggressor's super
piece uses) reaches exactly the squares the cell chain ``ray_fill`` reaches, in every direction,
for random sources and blockers and for the one-hot sources a super piece radiates from."""

import random

from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from chessaccel.contract.geometry import QUEEN_DIRS
from chessaccel.hdl.squarearray import SQUARES, ray_fill, ray_fill_prefix

import seeds


def test_prefix_rays_reach_what_the_cell_chain_reaches():
    m = Module()
    sources, passable = Signal(SQUARES), Signal(SQUARES)
    pairs = []
    for d in QUEEN_DIRS:
        chain, prefix = Signal(SQUARES), Signal(SQUARES)
        m.d.comb += [chain.eq(ray_fill(sources, passable, d)),
                     prefix.eq(ray_fill_prefix(sources, passable, d))]
        pairs.append((d, chain, prefix))
    rng = random.Random(seeds.run_seed())
    vectors = [(1 << rng.randrange(SQUARES), rng.getrandbits(SQUARES)) for _ in range(150)]
    vectors += [(rng.getrandbits(SQUARES) & rng.getrandbits(SQUARES), rng.getrandbits(SQUARES))
                for _ in range(150)]
    vectors += [(1 << s, (1 << SQUARES) - 1) for s in range(SQUARES)]   # empty board
    mismatches = []

    async def bench(ctx):
        for src, pas in vectors:
            ctx.set(sources, src)
            ctx.set(passable, pas)
            for d, chain, prefix in pairs:
                want, got = ctx.get(chain), ctx.get(prefix)
                if want != got:
                    mismatches.append(f"direction {d}, sources {src:#018x}, passable "
                                      f"{pas:#018x}: chain {want:#018x}, prefix {got:#018x}")

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    assert not mismatches, (f"{len(mismatches)} mismatches, first: {mismatches[0]} "
                            f"({seeds.describe()})")

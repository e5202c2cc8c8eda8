"""EvaluateTerms (hdl/evalterms.py) against the model's terms (model/evalterms.py
``term_values``), position by position, term by term, in Amaranth's simulator (an async
testbench: one position a transaction, the block being combinational).

Each transaction is one position; the block's 13 terms and their total are compared with the
model's (white's view; material and piece-square values are the incremental Evaluate's and not
the block's). The positions: the public suites, random play drawn with the run's seed
(tests/seeds.py), the colour-mirrored twin of each random one, and the children of random
moves (what the search core evaluates after a make). A mismatch fails with, per term, how many
positions differ and the first of them with both values.

Amaranth's simulator, not cocotb + Icarus as the other evaluate tests: on this block's gate
netlist Icarus took about 2.5 s a position (2026-11-28, the shared 2-core machine), Amaranth's
simulator about 0.05 s after some 20 s of elaboration. The fast tier runs every
``SUITE_STRIDE``-th suite position and ``DEFAULT_RANDOM`` random ones with their twins and
children (about 450 transactions, about 40 s); ``@pytest.mark.long`` (``make test-long``,
or ``pytest -m long tests/test_evalterms_rtl.py``) runs every suite position and
``LONG_RANDOM`` random ones with their twins and children, and each term group's block alone.
"""

import random

import chess
import pytest

from chessaccel.contract.defs import Position
from chessaccel.contract.evalweights import TERMS
from chessaccel.contract.geometry import COLOR_OF, TYPE_OF
from chessaccel.hdl.evalterms import EvaluateTerms, TERM_NAMES
from chessaccel.model.evalterms import term_values
from chessaccel.model.movegen import legal_moves
from chessaccel.model.position import board_from_chess, chess_from_board
from amaranth.sim import Simulator

from movegen_positions import suite_fens
import seeds
import suites

#: The fast tier's sample: every SUITE_STRIDE-th suite position (from an offset the run's seed
#: picks), DEFAULT_RANDOM random ones. The block also runs in the terms core, whose tests compare
#: it with the model node for node.
SUITE_STRIDE = 12
DEFAULT_RANDOM = 30
LONG_RANDOM = 2000
#: Children of random legal moves added per random position.
CHILDREN = 2


def _boards(random_count, seed, suite_stride=1):
    """(fen, model Board) of the suites (every ``suite_stride``-th), random play, mirrored
    twins and children."""
    rng = random.Random(seed)
    fens = suite_fens()[seed % suite_stride::suite_stride]
    drawn = suites.random_play_positions(seed, random_count)
    fens += drawn
    fens += [chess.Board(f).mirror().fen() for f in drawn]
    out = []
    for fen in dict.fromkeys(fens):
        board = suites.board_of(fen)
        out.append((fen, board))
    for fen in drawn:
        board = suites.board_of(fen)
        moves = legal_moves(board)
        for move in rng.sample(moves, min(CHILDREN, len(moves))):
            child = suites.board_of(fen)
            child.make(move)
            out.append((chess_from_board(child).fen(), child))
    return out


def _position(board):
    """The block's input for a model Board."""
    return Position.const({"squares": [{"type": TYPE_OF[c], "color": COLOR_OF[c]}
                                       for c in board.sq],
                           "side": board.side})


def simulate(boards, groups=None):
    """[(terms {name: (mg, eg)}, total (mg, eg))] of EvaluateTerms on each board, in one
    simulation (``groups``: the block's parameter, default all)."""
    dut = EvaluateTerms() if groups is None else EvaluateTerms(groups=groups)
    observed = []

    async def bench(ctx):
        for _, board in boards:
            ctx.set(dut.position, _position(board))
            terms = {name: (ctx.get(dut.terms[i].mg), ctx.get(dut.terms[i].eg))
                     for i, name in enumerate(TERM_NAMES)}
            observed.append((terms, (ctx.get(dut.total.mg), ctx.get(dut.total.eg))))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return observed


def check_positions(boards):
    observed = simulate(boards)
    assert len(observed) == len(boards)
    differ = {}   # term -> [count, first (fen, rtl, model)]
    for (fen, board), (got, total) in zip(boards, observed):
        want = term_values(board)
        want_total = tuple(sum(want[t][i] for t in TERMS[1:]) for i in (0, 1))
        for name in TERM_NAMES + ("total",):
            rtl = total if name == "total" else got[name]
            model = want_total if name == "total" else tuple(want[name])
            if rtl != model:
                entry = differ.setdefault(name, [0, (fen, rtl, model)])
                entry[0] += 1
    if differ:
        lines = [f"{name}: {count} of {len(boards)} positions differ; first {fen}: "
                 f"rtl (mg, eg) {rtl}, model {model}"
                 for name, (count, (fen, rtl, model)) in differ.items()]
        pytest.fail(f"EvaluateTerms differs from model/evalterms.py ({seeds.describe()}):\n"
                    + "\n".join(lines))


def test_evaluate_terms_rtl_matches_model():
    """A sample of the suites and DEFAULT_RANDOM random-play positions of the run's seed with
    their mirrored twins and CHILDREN children each: every term equal to the model's."""
    boards = _boards(DEFAULT_RANDOM, seeds.run_seed(), SUITE_STRIDE)
    assert len(boards) >= 200
    check_positions(boards)


@pytest.mark.long
def test_evaluate_terms_rtl_matches_model_long():
    """Every suite position (1,129) and LONG_RANDOM random-play positions (fixed seed), their
    twins and children."""
    check_positions(_boards(LONG_RANDOM, 30))


@pytest.mark.long
def test_term_groups_leave_the_others_out():
    """A block of one group computes that group's terms alike and reads 0 for the others
    (what the synthesis table's per-group rows measure)."""
    from chessaccel.hdl.evalterms import GROUPS, TERM_GROUP
    boards = _boards(20, 7, 8 * SUITE_STRIDE)
    for group in GROUPS:
        for (fen, board), (got, total) in zip(boards, simulate(boards, (group,))):
            want = term_values(board)
            for name in TERM_NAMES:
                expected = tuple(want[name]) if TERM_GROUP[name] == group else (0, 0)
                assert got[name] == expected, (group, name, fen)

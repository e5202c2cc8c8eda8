"""EvaluateTerms (hdl/evalterms.py) against the model's terms (model/evalterms.py
``term_values``), position by position, term by term, in Amaranth's simulator (an async
testbench: one position a transaction, the block being combinational).

Each transaction is one position; the block's 14 terms and their total are compared with the
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
The threats group also runs alone on a few chosen positions (``THREAT_CASES``), each a case of
the attack rule a random sample may miss by chance.
"""

import random

import chess
import pytest

from chessaccel.contract.defs import Position
from chessaccel.contract.evalweights import TERMS
from chessaccel.contract.geometry import COLOR_OF, TYPE_OF
from chessaccel.hdl.evalterms import EvaluateTerms, TERM_NAMES
from chessaccel.model.evalterms import frames, side_features, term_values
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


#: Positions for the threats term (docs/semantics.md section 6.1), each with what it checks;
#: the test adds their colour-mirrored twins, so each case is met by both colours.
THREAT_CASES = (
    ("4k3/8/4p3/3N4/8/8/8/4K3 w - - 0 1", "a pawn attacks an undefended knight: hanging too"),
    ("4k2b/8/8/8/8/4n3/8/R2QK3 w - - 0 1",
     "a bishop attacks a rook, a knight a queen; the queen defends the rook, the king the queen"),
    ("3rk3/8/8/8/3Q3q/8/8/4K3 w - - 0 1", "a rook attacks a queen; a queen is no rook threat"),
    ("3rk3/3r4/8/8/3Q4/8/8/4K3 w - - 0 1", "the rook behind a rook does not attack"),
    ("4k3/4N3/8/8/8/8/8/4K3 w - - 0 1", "a king attacks a hanging knight"),
    ("4k3/8/8/3p4/2B5/8/8/2R1K3 w - - 0 1", "a rook defends the bishop a pawn attacks"),
    ("4k3/8/8/8/2N5/4n3/2B5/2R1K3 w - - 0 1", "a rook behind a bishop does not defend"),
    ("4k3/4n3/8/8/8/8/8/3KR3 w - - 0 1", "a king defends: the knight a rook attacks is not hanging"),
)
_THREAT_FEATURES = ("threat_by_pawn", "threat_by_minor", "threat_by_rook", "hanging")


def test_threats_on_chosen_positions():
    """The threats group's block alone on THREAT_CASES and their twins: the threats term (and
    so the total) equal to the model's, the others 0; and the cases between them set each of
    the term's four features for each colour (so they keep checking what they say)."""
    fens = [fen for fen, _ in THREAT_CASES]
    fens += [chess.Board(fen).mirror().fen() for fen in fens]
    boards = [(fen, suites.board_of(fen)) for fen in fens]
    met = set()
    for (fen, board), (got, total) in zip(boards, simulate(boards, ("threats",))):
        want = tuple(term_values(board)["threats"])
        assert got["threats"] == want == total, (fen, got["threats"], want, total)
        assert all(got[name] == (0, 0) for name in TERM_NAMES if name != "threats"), fen
        for colour, frame in enumerate(frames(board)):
            features = side_features(*frame)
            met |= {(colour, name) for name in _THREAT_FEATURES if features[name]}
    assert met == {(c, name) for c in (0, 1) for name in _THREAT_FEATURES}


def test_synthesis_registry_builds_one_block_per_group():
    """synth/registry.py writes the groups out (its blocks are looked up lazily): the same as
    the block's, each group a block of its own and in the "evalterms-all" group."""
    from chessaccel.hdl.evalterms import GROUPS
    from chessaccel.synth.registry import BLOCKS, EVALTERMS_GROUPS, GROUPS as SYNTH_GROUPS
    assert EVALTERMS_GROUPS == tuple(GROUPS)
    for group in GROUPS:
        assert BLOCKS[f"evalterms-{group}"].kwargs == {"groups": (group,)}
        assert f"evalterms-{group}" in SYNTH_GROUPS["evalterms-all"]


"""hdl/genaggressor.py against sim/model/genaggressor.py, transaction by transaction.

Each position's MovePicker is walked with ``trace=True`` (full width and quiescence); every
GenAggressor transaction it records (victim, disable mask -> aggressor) is replayed through the
RTL, which must answer the same aggressor, its piece type, whether it promotes and whether another
enabled candidate follows it (``more``, the one-aggressor look-ahead of the search core). Every
third transaction is replayed with ``king_only`` and ``safe_king`` as well (the search core's
filters: in a node in check only the king may take a victim off the evasions, and the king never
takes on a square the enemy attacks).
"""

import pytest

from chessaccel.contract.defs import PieceType
from chessaccel.contract.geometry import TYPE_OF, rank_of
from chessaccel.contract.relative import LAST_RANK, relative
from chessaccel.hdl.genaggressor import GenAggressor
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.rtl_movegen import pack_position
from chessaccel.model.genaggressor import candidates, select_aggressor
from chessaccel.model.movegen import MovePicker
from movegen_positions import (LONG_RANDOM, SEED, board_of, fast_fens, movegen_fens,
                               report_first_mismatch, requires_simulator)

pytestmark = requires_simulator

#: Default-suite cap on transactions replayed per node; the long sweeps replay them all.
DEFAULT_STEPS_PER_NODE = 8


def aggressor_transactions(fen_list, steps_per_node=None):
    rows, expected, context = [], [], []
    for fen in fen_list:
        board = board_of(fen)
        bits = pack_position(board)
        for captures_only in (False, True):
            picker = MovePicker(board, captures_only, trace=True)
            while picker.next() is not None:
                pass
            steps = [step for step in picker.steps if step[0] == "aggressor"]
            if steps_per_node is not None:
                steps = steps[:steps_per_node]
            for i, (_, victim, mask, traced) in enumerate(steps):
                filters = ((0, 0), (1, 0), (0, 1), (1, 1)) if i % 3 == 0 else ((0, 0),)
                for king_only, safe_king in filters:
                    rows.append([bits, victim, mask, int(captures_only), king_only, safe_king])
                    cands = candidates(board, victim, captures_only, king_only, safe_king)
                    enabled = [s for s in cands if not (mask >> s) & 1]
                    aggressor = select_aggressor(cands, mask)
                    assert king_only or safe_king or aggressor == traced
                    more = int(len(enabled) >= 2)
                    if aggressor is None:
                        expected.append([0, None, PieceType.NONE.value, 0, more])
                    else:
                        kind = TYPE_OF[board.sq[aggressor]]
                        promotes = (kind == PieceType.PAWN.value
                                    and rank_of(relative(victim, board.side)) == LAST_RANK)
                        expected.append([1, aggressor, kind, int(promotes), more])
                    context.append((fen, f"captures_only={captures_only} king_only={king_only} "
                                         f"safe_king={safe_king} victim={victim} "
                                         f"mask={mask:#018x}"))
    return rows, expected, context


def check_genaggressor(fen_list, steps_per_node=None):
    rows, expected, context = aggressor_transactions(fen_list, steps_per_node)
    observed = run_testbench(GenAggressor, "genaggressor",
                             "chessaccel.sim.cocotb.tb_genaggressor", {
        "inputs": ["position", "victim", "mask", "captures_only", "king_only", "safe_king"],
        "outputs": ["valid", "aggressor", "aggressor_type", "promotion", "more"],
        "rows": rows,
    })
    observed = [[v, a if v else None, t, p, more] for v, a, t, p, more in observed]
    report_first_mismatch("GenAggressor", context, expected, observed)
    return len(rows), sum(want[4] for want in expected)


def test_genaggressor_matches_model():
    rows, with_more = check_genaggressor(fast_fens(), DEFAULT_STEPS_PER_NODE)
    assert rows > 10_000 and 500 < with_more < rows - 500   # both answers of ``more`` occur


@pytest.mark.long
def test_genaggressor_matches_model_every_step():
    check_genaggressor(movegen_fens())


@pytest.mark.long
def test_genaggressor_matches_model_random_sweep():
    check_genaggressor(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:])

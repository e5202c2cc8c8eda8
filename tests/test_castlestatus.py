"""hdl/castlestatus.py against sim/model/castlestatus.py, one transaction per position.

Positions: every suite and random-play position, plus the position after each of its legal
moves (rights lost by king and rook moves, squares attacked or freed), so castling through,
into and out of check, blocked paths and missing rights all occur for both colours.
"""

import pytest

from chessaccel.hdl.castlestatus import CastleStatus
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.model.castlestatus import castle_status
from chessaccel.sim.model.movegen import legal_moves
from chessaccel.geometry import move_uci
from movegen_positions import (LONG_RANDOM, SEED, board_of, movegen_fens, report_first_mismatch,
                               requires_simulator)

pytestmark = requires_simulator


def castle_transactions(fen_list, with_children):
    rows, expected, context = [], [], []

    def ask(board, fen, what):
        rows.append([board.to_bits()])
        expected.append([int(ok) for ok in castle_status(board)])
        context.append((fen, what))

    for fen in fen_list:
        board = board_of(fen)
        ask(board, fen, "root")
        if with_children and board.castling:
            for move in legal_moves(board):
                undo = board.make(move)
                ask(board, fen, f"after {move_uci(move)}")
                board.unmake(move, undo)
    return rows, expected, context


def check_castlestatus(fen_list, with_children):
    rows, expected, context = castle_transactions(fen_list, with_children)
    observed = run_testbench(CastleStatus, "castlestatus",
                             "chessaccel.sim.cocotb.tb_castlestatus", {
        "inputs": ["position"],
        "outputs": ["kingside_ok", "queenside_ok"],
        "rows": rows,
    })
    report_first_mismatch("CastleStatus", context, expected, observed)
    return rows, expected


def test_castlestatus_matches_model():
    rows, expected = check_castlestatus(movegen_fens(), with_children=True)
    # the set must exercise both answers of both castlings
    assert {tuple(e) for e in expected} == {(0, 0), (0, 1), (1, 0), (1, 1)}


@pytest.mark.long
def test_castlestatus_matches_model_random_sweep():
    check_castlestatus(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:], with_children=True)

"""hdl/castlestatus.py against sim/model/castlestatus.py, one transaction per position.

Positions: every suite and random-play position, plus the position after each of its legal
moves (rights lost by king and rook moves, squares attacked or freed), so castling through,
into and out of check, blocked paths and missing rights all occur for both colours.
"""

import random

import pytest

from chessaccel.hdl.castlestatus import CastleStatus
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.rtl_movegen import pack_position
from chessaccel.model.castlestatus import castle_status
from chessaccel.model.movegen import legal_moves
from chessaccel.contract.geometry import move_uci
from movegen_positions import (LONG_RANDOM, SEED, board_of, fast_fens, movegen_fens,
                               report_first_mismatch, requires_simulator)

pytestmark = requires_simulator

#: Default-suite cap on children asked per position with castling rights (seeded choice).
DEFAULT_CHILDREN = 3


def castle_transactions(fen_list, with_children, children_per_position=None):
    rng = random.Random(SEED)
    rows, expected, context = [], [], []

    def ask(board, fen, what):
        rows.append([pack_position(board)])
        expected.append([int(ok) for ok in castle_status(board)])
        context.append((fen, what))

    for fen in fen_list:
        board = board_of(fen)
        ask(board, fen, "root")
        if with_children and board.castling:
            moves = legal_moves(board)
            if children_per_position is not None and len(moves) > children_per_position:
                moves = rng.sample(moves, children_per_position)
            for move in moves:
                undo = board.make(move)
                ask(board, fen, f"after {move_uci(move)}")
                board.unmake(move, undo)
    return rows, expected, context


def check_castlestatus(fen_list, with_children, children_per_position=None):
    rows, expected, context = castle_transactions(fen_list, with_children, children_per_position)
    observed = run_testbench(CastleStatus, "castlestatus",
                             "chessaccel.sim.cocotb.tb_castlestatus", {
        "inputs": ["position"],
        "outputs": ["kingside_ok", "queenside_ok"],
        "rows": rows,
    })
    report_first_mismatch("CastleStatus", context, expected, observed)
    return rows, expected


def test_castlestatus_matches_model():
    rows, expected = check_castlestatus(fast_fens(), True, DEFAULT_CHILDREN)
    # the set must exercise both answers of both castlings
    assert {tuple(e) for e in expected} == {(0, 0), (0, 1), (1, 0), (1, 1)}


@pytest.mark.long
def test_castlestatus_matches_model_every_child():
    check_castlestatus(movegen_fens(), with_children=True)


@pytest.mark.long
def test_castlestatus_matches_model_random_sweep():
    check_castlestatus(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:], with_children=True)

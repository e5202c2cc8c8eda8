"""hdl/testcheck.py against sim/model/testcheck.py, transaction by transaction.

The transactions are the legality tests of move generation (after each pseudo-legal move is
made: is the mover's king attacked by the side now to move?) plus, on every position, both kings
and a spread of other squares asked for both colours. Each transaction compares both outputs:
``attacked``, the ``evasions`` mask (the attackers and the rays between a slider and the
square) and the king-step ``neighbours``, which the search core uses to skip the moves that
cannot end a check.
"""

import random

import pytest

from chessaccel.hdl.testcheck import TestCheck
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.rtl_movegen import pack_position
from chessaccel.model.movegen import pseudo_moves
from chessaccel.model.testcheck import attacked, evasion_squares
from chessaccel.contract.geometry import KING_TARGETS, move_uci
from movegen_positions import (LONG_RANDOM, SEED, board_of, fast_fens, movegen_fens,
                               report_first_mismatch, requires_simulator)

pytestmark = requires_simulator

#: Default-suite caps: made moves tested per position, and extra squares asked per position.
DEFAULT_MOVES_PER_POSITION = 4
DEFAULT_SQUARES_PER_POSITION = 4


def check_transactions(fen_list, moves_per_position=None, squares_per_position=None):
    rng = random.Random(SEED)
    rows, expected, context = [], [], []

    def ask(board, target, by, fen, what):
        rows.append([pack_position(board), target, by])
        expected.append([int(attacked(board, target, by)), evasion_squares(board, target, by),
                         sum(1 << s for s in KING_TARGETS[target])])
        context.append((fen, f"{what}: square {target} attacked by colour {by}?"))

    for fen in fen_list:
        board = board_of(fen)
        for color in (0, 1):
            ask(board, board.kings[color], color ^ 1, fen, "king")
        squares = range(64) if squares_per_position is None else rng.sample(
            range(64), squares_per_position)
        for target in squares:
            for by in (0, 1):
                ask(board, target, by, fen, "square")
        moves = pseudo_moves(board) + pseudo_moves(board, captures_only=True)
        if moves_per_position is not None:
            moves = rng.sample(moves, min(moves_per_position, len(moves)))
        for move in moves:
            mover = board.side
            undo = board.make(move)
            ask(board, board.kings[mover], board.side, fen, f"after {move_uci(move)}")
            board.unmake(move, undo)
    return rows, expected, context


def check_testcheck(fen_list, moves_per_position=None, squares_per_position=None):
    rows, expected, context = check_transactions(fen_list, moves_per_position,
                                                 squares_per_position)
    observed = run_testbench(TestCheck, "testcheck", "chessaccel.sim.cocotb.tb_testcheck", {
        "inputs": ["position", "square", "by"],
        "outputs": ["attacked", "evasions", "neighbours"],
        "rows": rows,
    })
    report_first_mismatch("TestCheck", context, expected, observed)
    return len(rows)


def test_testcheck_matches_model():
    assert check_testcheck(fast_fens(), DEFAULT_MOVES_PER_POSITION,
                           DEFAULT_SQUARES_PER_POSITION) > 7_500


@pytest.mark.long
def test_testcheck_matches_model_every_square_and_move():
    check_testcheck(movegen_fens())


@pytest.mark.long
def test_testcheck_matches_model_random_sweep():
    check_testcheck(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:], None,
                    DEFAULT_SQUARES_PER_POSITION)

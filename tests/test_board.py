"""hdl/board.py against sim/model/board.py: LOAD, then MAKE / UNMAKE round trips.

For every position: LOAD it, then for each tested move MAKE it, told the moving piece's type and
whether it castles as the move generator tells it (the record ``undo`` shown during
the MAKE must equal the model's Undo; the board after it the model's board after ``make``), and
UNMAKE it with that record (the board must be the loaded one again). The moves are every legal
move, and the pseudo-legal ones (so kings step into check too), including all castlings,
en-passant captures and promotions with and without capture, for both colours.
"""

import random

import pytest
from amaranth.lib import data

from chessaccel.defs import CastlingRights, EnPassant, Piece, PieceType, UndoRecord
from chessaccel.geometry import TYPE_OF, ep_pack, move_uci, pack_move
from chessaccel.hdl.board import Board, BoardOp, KingSquares
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.rtl_movegen import pack_position
from chessaccel.sim.model.movegen import pseudo_moves
from movegen_positions import (LONG_RANDOM, SEED, board_of, movegen_fens, report_first_mismatch,
                               requires_simulator)

pytestmark = requires_simulator

#: Default-suite cap on moves made per position (chosen at random, seeded; the rare kinds kept).
DEFAULT_MOVES_PER_POSITION = 4
NO_UNDO = 0


_UNDO = data.Layout.cast(UndoRecord)
_KINGS = data.Layout.cast(KingSquares)


def pack_undo(undo):
    """The UndoRecord bits of a model Undo (offsets read from the layout: fast)."""
    return (undo.captured << _UNDO["captured"].offset
            | undo.castling << _UNDO["castling"].offset
            | ep_pack(undo.ep) << _UNDO["ep"].offset)


def pack_kings(board):
    return board.kings[0] << _KINGS[0].offset | board.kings[1] << _KINGS[1].offset


def test_fast_packers_match_layout_constants():
    for fen in movegen_fens()[::50]:
        board = board_of(fen)
        assert pack_position(board) == board.to_bits()
        assert pack_kings(board) == KingSquares.const(board.kings).as_value().value
        for move in pseudo_moves(board)[:3]:
            undo = board.make(move)
            assert pack_undo(undo) == UndoRecord.const({
                "captured": Piece.from_bits(undo.captured),
                "castling": CastlingRights.from_bits(undo.castling),
                "ep": EnPassant.from_bits(ep_pack(undo.ep)),
            }).as_value().value
            board.unmake(move, undo)


def board_operations(fen_list, moves_per_position=None):
    rng = random.Random(SEED)
    rows, expected, context = [], [], []
    for fen in fen_list:
        board = board_of(fen)
        loaded = pack_position(board)
        rows.append([BoardOp.LOAD.value, loaded, 0, 0, 0, NO_UNDO])
        expected.append([None, loaded, pack_kings(board)])
        context.append((fen, "LOAD"))
        moves = pseudo_moves(board)
        if moves_per_position is not None and len(moves) > moves_per_position:
            special = [m for m in moves if m[2] or m[1] == board.ep or
                       (board.kings[board.side] == m[0] and abs(m[1] - m[0]) == 2)]
            moves = special[:moves_per_position // 2] + rng.sample(
                moves, moves_per_position - len(special[:moves_per_position // 2]))
        for move in moves:
            bits = pack_move(*move)
            # what the move generator tells MAKE: the moving piece's type, castling or not
            moving = TYPE_OF[board.sq[move[0]]]
            castle = int(moving == PieceType.KING.value and abs(move[1] - move[0]) == 2)
            undo = board.make(move)
            rows.append([BoardOp.MAKE.value, 0, bits, moving, castle, NO_UNDO])
            expected.append([pack_undo(undo), pack_position(board), pack_kings(board)])
            context.append((fen, f"MAKE {move_uci(move)}"))
            board.unmake(move, undo)
            rows.append([BoardOp.UNMAKE.value, 0, bits, 0, 0, pack_undo(undo)])
            expected.append([None, loaded, pack_kings(board)])
            context.append((fen, f"UNMAKE {move_uci(move)}"))
    return rows, expected, context


def check_board(fen_list, moves_per_position=None):
    rows, expected, context = board_operations(fen_list, moves_per_position)
    observed = run_testbench(Board, "board", "chessaccel.sim.cocotb.tb_board", {"rows": rows})
    # ``undo`` is only meaningful during a MAKE
    observed = [[u if want[0] is not None else None, p, k]
                for (u, p, k), want in zip(observed, expected)]
    report_first_mismatch("Board", context, expected, observed)
    return len(rows)


def test_board_make_unmake_match_model():
    assert check_board(movegen_fens(), DEFAULT_MOVES_PER_POSITION) > 10_000


@pytest.mark.long
def test_board_every_move_matches_model():
    check_board(movegen_fens())


@pytest.mark.long
def test_board_random_sweep():
    check_board(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:])

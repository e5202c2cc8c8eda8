"""hdl/board.py against sim/model/board.py: LOAD, then MAKE / UNMAKE round trips.

For every position: LOAD it, then for each tested move MAKE it, told the moving piece's type and
whether it castles as the move generator tells it (the record ``undo`` shown during
the MAKE must equal the model's Undo; the board after it the model's board after ``make``), and
UNMAKE it with that record (the board must be the loaded one again). The moves are every legal
move, and the pseudo-legal ones (so kings step into check too), including all castlings,
en-passant captures and promotions with and without capture, for both colours.
"""

import random
from functools import partial
from types import SimpleNamespace

import pytest
from amaranth.lib import data

from chessaccel.contract.defs import CastlingRights, EnPassant, Piece, PieceType, UndoRecord
from chessaccel.contract.geometry import TYPE_OF, ep_pack, move_uci, pack_move
from chessaccel.contract.relative import MIRROR
from chessaccel.hdl.board import Board, BoardOp, KingSquares
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.rtl_movegen import pack_position
from chessaccel.model.movegen import pseudo_moves
from movegen_positions import (LONG_RANDOM, SEED, board_of, fast_fens, movegen_fens,
                               report_first_mismatch, requires_simulator)

pytestmark = requires_simulator

#: Default-suite cap on moves made per position (chosen at random, seeded; the rare kinds kept).
DEFAULT_MOVES_PER_POSITION = 4
NO_UNDO = 0
COLOR_BIT = 8           # a piece code's colour bit (Piece: type in bits 0-2, colour in bit 3)
TYPE_MASK = 7


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


def _recolor(code):
    """A piece code with its colour swapped (empty stays empty)."""
    return code ^ COLOR_BIT if code & TYPE_MASK else code


def _swap_castling(rights):
    return (rights & 3) << 2 | (rights >> 2) & 3


def pack_relative(board):
    """The position bits Board(relative=True) shows: seen from the side to move (white to
    move, own pieces white, squares mirrored for black, own castling rights in the white
    fields), and its (own, enemy) king squares in that frame."""
    black = board.side
    flip = MIRROR if black else 0
    seen = SimpleNamespace(
        sq=[_recolor(board.sq[r ^ flip]) if black else board.sq[r] for r in range(64)],
        side=0, castling=_swap_castling(board.castling) if black else board.castling,
        ep=board.ep)
    kings = (board.kings[black] ^ flip) << _KINGS[0].offset \
        | (board.kings[1 - black] ^ flip) << _KINGS[1].offset
    return pack_position(seen), kings


def _relative_undo(undo, mover_black):
    """The undo record in the mover's frame (what Board(relative=True) shows and takes back)."""
    if not mover_black:
        return undo
    return SimpleNamespace(captured=_recolor(undo.captured),
                           castling=_swap_castling(undo.castling), ep=undo.ep)


def board_operations(fen_list, moves_per_position=None, relative=False):
    """Rows for tb_board and the expected observations. ``relative``: for Board(relative=True),
    moves and undo records in the mover's frame, positions and kings as ``pack_relative``."""
    rng = random.Random(SEED)
    rows, expected, context = [], [], []

    def shown(board):
        return pack_relative(board) if relative else (pack_position(board), pack_kings(board))

    for fen in fen_list:
        board = board_of(fen)
        loaded = pack_position(board)
        rows.append([BoardOp.LOAD.value, loaded, 0, 0, 0, NO_UNDO])
        expected.append([None, *shown(board)])
        context.append((fen, "LOAD"))
        moves = pseudo_moves(board)
        if moves_per_position is not None and len(moves) > moves_per_position:
            special = [m for m in moves if m[2] or m[1] == board.ep or
                       (board.kings[board.side] == m[0] and abs(m[1] - m[0]) == 2)]
            moves = special[:moves_per_position // 2] + rng.sample(
                moves, moves_per_position - len(special[:moves_per_position // 2]))
        for move in moves:
            mover_black = board.side
            flip = MIRROR if relative and mover_black else 0
            bits = pack_move(move[0] ^ flip, move[1] ^ flip, move[2])
            # what the move generator tells MAKE: the moving piece's type, castling or not
            moving = TYPE_OF[board.sq[move[0]]]
            castle = int(moving == PieceType.KING.value and abs(move[1] - move[0]) == 2)
            undo = board.make(move)
            kept = pack_undo(_relative_undo(undo, mover_black) if relative else undo)
            rows.append([BoardOp.MAKE.value, 0, bits, moving, castle, NO_UNDO])
            expected.append([kept, *shown(board)])
            context.append((fen, f"MAKE {move_uci(move)}"))
            board.unmake(move, undo)
            # (``moving`` again: the relative board's UNMAKE is told it, the absolute one
            # ignores it)
            rows.append([BoardOp.UNMAKE.value, 0, bits, moving, 0, kept])
            expected.append([None, *shown(board)])
            context.append((fen, f"UNMAKE {move_uci(move)}"))
    return rows, expected, context


def check_board(fen_list, moves_per_position=None, relative=False):
    rows, expected, context = board_operations(fen_list, moves_per_position, relative)
    factory, name = (partial(Board, relative=True), "board_relative") if relative else (Board, "board")
    observed = run_testbench(factory, name, "chessaccel.sim.cocotb.tb_board", {"rows": rows})
    # ``undo`` is only meaningful during a MAKE
    observed = [[u if want[0] is not None else None, p, k]
                for (u, p, k), want in zip(observed, expected)]
    report_first_mismatch("Board" + (" (relative)" if relative else ""), context, expected,
                          observed)
    return len(rows)


def test_board_make_unmake_match_model():
    assert check_board(fast_fens(), DEFAULT_MOVES_PER_POSITION) > 5_000


def test_relative_board_matches_model_seen_from_the_side_to_move():
    """The search core's Board(relative=True): the same operations in the mover's frame (every
    other position of the fast tier's list)."""
    assert check_board(fast_fens()[::2], DEFAULT_MOVES_PER_POSITION, relative=True) > 2_500


@pytest.mark.long
def test_board_every_move_matches_model():
    check_board(movegen_fens())


@pytest.mark.long
def test_board_random_sweep():
    check_board(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:])

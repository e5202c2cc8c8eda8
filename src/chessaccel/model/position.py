"""Positions between python-chess and the model: the model's ``Board`` of a FEN or EPD line
(checked by ``chessaccel.contract.position.read_position``), and the python-chess board of a
model ``Board`` (the oracle's view of the same position)."""

import chess

from chessaccel.contract.defs import Color, PieceType
from chessaccel.contract.geometry import CODE, COLOR_OF, EMPTY, CASTLE_BIT, TYPE_OF
from chessaccel.contract.position import PositionError, read_position
from chessaccel.model.board import Board

__all__ = ["PositionError", "parse_position", "board_from_chess", "chess_from_board"]

_TYPE = {chess.PAWN: PieceType.PAWN, chess.KNIGHT: PieceType.KNIGHT, chess.BISHOP: PieceType.BISHOP,
         chess.ROOK: PieceType.ROOK, chess.QUEEN: PieceType.QUEEN, chess.KING: PieceType.KING}
_CHESS_TYPE = {v.value: k for k, v in _TYPE.items()}
_PIECE_TYPES = tuple(_TYPE)
#: piece code by colour value and python-chess piece type
_CODES = {color.value: {t: CODE[color.value][_TYPE[t].value] for t in _TYPE} for color in Color}


def board_from_chess(cb):
    """The model Board of a python-chess board (castling rights cleaned, standard chess only)."""
    squares = [EMPTY] * 64
    for chess_color, color in ((chess.WHITE, Color.WHITE.value), (chess.BLACK, Color.BLACK.value)):
        codes = _CODES[color]
        for piece_type in _PIECE_TYPES:
            code = codes[piece_type]
            for s in chess.scan_forward(cb.pieces_mask(piece_type, chess_color)):
                squares[s] = code
    rights = cb.clean_castling_rights()
    castling = 0
    for color, kingside, rook in ((0, True, chess.H1), (0, False, chess.A1),
                                  (1, True, chess.H8), (1, False, chess.A8)):
        if rights & chess.BB_SQUARES[rook]:
            castling |= CASTLE_BIT[color, kingside]
    side = Color.WHITE.value if cb.turn == chess.WHITE else Color.BLACK.value
    # where no double push can have passed over it, the FEN's field is dropped (python-chess's
    # STATUS_INVALID_EP_SQUARE: the square differs from _valid_ep_square, without the rest of
    # status()'s work)
    ep = cb.ep_square
    if ep is not None and cb._valid_ep_square() != ep:
        ep = None
    return Board(squares, side, castling, ep)


def chess_from_board(board):
    """The python-chess board of a model Board (the oracle's view of the same position)."""
    cb = chess.Board(None)
    for s, code in enumerate(board.sq):
        if code != EMPTY:
            cb.set_piece_at(s, chess.Piece(_CHESS_TYPE[TYPE_OF[code]],
                                           chess.WHITE if COLOR_OF[code] == 0 else chess.BLACK))
    cb.turn = chess.WHITE if board.side == 0 else chess.BLACK
    fen_rights = ""
    for color, kingside, letter in ((0, True, "K"), (0, False, "Q"), (1, True, "k"), (1, False, "q")):
        if board.castling & CASTLE_BIT[color, kingside]:
            fen_rights += letter
    cb.set_castling_fen(fen_rights or "-")
    cb.ep_square = board.ep
    return cb


def parse_position(text):
    """Parse one FEN or EPD line; returns ``(board, operations)`` with the model's Board.

    Raises PositionError naming the problem (``read_position`` says which problems).
    """
    cb, ops = read_position(text)
    return board_from_chess(cb), ops

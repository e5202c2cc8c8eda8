"""CastleStatus: the model of hdl/castlestatus.py.

For the side to move: is each castling move legal now? The right must be held (rights imply the
king and rook stand on their home squares: the host cleans them and make keeps them true), the
squares between king and rook must be empty, and the king's start, transit and destination
squares must not be attacked.
"""

from chessaccel.contract.geometry import CASTLE_BIT, EMPTY, square
from chessaccel.contract.relative import (CASTLE_KING_FILE, CASTLE_PATHS, CASTLING_RANK, KING_FILE,
                                          relative_rank)
from .testcheck import attacked

__all__ = ["castle_status", "castle_move"]

def castle_move(color, kingside):
    """The king's move (from, to, promo) for a castling."""
    rank = relative_rank(CASTLING_RANK, color)
    return (square(KING_FILE, rank), square(CASTLE_KING_FILE[kingside], rank), 0)


def castle_status(board):
    """(kingside_ok, queenside_ok) for the side to move."""
    side = board.side
    rank = relative_rank(CASTLING_RANK, side)
    out = []
    for kingside in (True, False):
        ok = bool(board.castling & CASTLE_BIT[side, kingside])
        empty_files, king_files = CASTLE_PATHS[kingside]
        ok = ok and all(board.sq[square(f, rank)] == EMPTY for f in empty_files)
        ok = ok and not any(attacked(board, square(f, rank), side ^ 1) for f in king_files)
        out.append(ok)
    return tuple(out)

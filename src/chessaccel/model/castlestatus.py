"""CastleStatus: the model of hdl/castlestatus.py.

For the side to move: is each castling move legal now? The right must be held (rights imply the
king and rook stand on their home squares: the host cleans them and make keeps them true), the
squares between king and rook must be empty, and the king's start, transit and destination
squares must not be attacked.
"""

from chessaccel.contract.geometry import CASTLE_BIT, EMPTY, square
from .testcheck import attacked

__all__ = ["castle_status", "castle_move"]

# (kingside?) -> (files that must be empty, files the king stands on or crosses)
_PATH = {
    True:  ((5, 6), (4, 5, 6)),
    False: ((1, 2, 3), (4, 3, 2)),
}


def castle_move(color, kingside):
    """The king's move (from, to, promo) for a castling."""
    rank = 0 if color == 0 else 7
    return (square(4, rank), square(6 if kingside else 2, rank), 0)


def castle_status(board):
    """(kingside_ok, queenside_ok) for the side to move."""
    side = board.side
    rank = 0 if side == 0 else 7
    out = []
    for kingside in (True, False):
        ok = bool(board.castling & CASTLE_BIT[side, kingside])
        empty_files, king_files = _PATH[kingside]
        ok = ok and all(board.sq[square(f, rank)] == EMPTY for f in empty_files)
        ok = ok and not any(attacked(board, square(f, rank), side ^ 1) for f in king_files)
        out.append(ok)
    return tuple(out)

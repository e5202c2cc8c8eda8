"""TestCheck: the model of hdl/testcheck.py.

Whether a square is attacked by one side: the square radiates the "super piece" (every pattern at
once) and looks for an enemy piece that receives its own pattern. After a make, the move is legal
exactly when the mover's king square is not attacked.
"""

from chessaccel.defs import PieceType
from chessaccel.geometry import (CODE, EMPTY, KNIGHT_TARGETS, KING_TARGETS, RAYS, FORWARD,
                                 file_of)

__all__ = ["attacked", "in_check"]

_P, _N, _B, _R, _Q, _K = (PieceType[n].value for n in
                          ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))


def attacked(board, target, by_color):
    """True when a piece of ``by_color`` attacks ``target`` (pawns by their capture pattern)."""
    sq = board.sq
    code = CODE[by_color]
    knight, king, pawn = code[_N], code[_K], code[_P]
    for s in KNIGHT_TARGETS[target]:
        if sq[s] == knight:
            return True
    for s in KING_TARGETS[target]:
        if sq[s] == king:
            return True
    # An attacking pawn stands one rank behind the target, from its own side's view.
    pawn_rank_step = -FORWARD[by_color] * 8
    f = file_of(target)
    for df in (-1, 1):
        if 0 <= f + df < 8:
            s = target + pawn_rank_step + df
            if 0 <= s < 64 and sq[s] == pawn:
                return True
    straight = (code[_R], code[_Q])
    diagonal = (code[_B], code[_Q])
    rays = RAYS[target]
    for d in range(8):
        sliders = straight if d < 4 else diagonal
        for s in rays[d]:
            c = sq[s]
            if c != EMPTY:
                if c in sliders:
                    return True
                break
    return False


def in_check(board, color):
    """True when the king of ``color`` is attacked."""
    return attacked(board, board.kings[color], color ^ 1)

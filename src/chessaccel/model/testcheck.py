"""TestCheck: the model of hdl/testcheck.py.

Whether a square is attacked by one side: the square radiates the "super piece" (every pattern at
once) and looks for an enemy piece that receives its own pattern. After a make, the move is legal
exactly when the mover's king square is not attacked.
"""

from chessaccel.contract.defs import PieceType
from chessaccel.contract.geometry import CODE, EMPTY, KNIGHT_TARGETS, KING_TARGETS, RAYS, file_of
from chessaccel.contract.relative import PAWN_PUSH

__all__ = ["attacked", "evasion_squares", "in_check"]

_P, _N, _B, _R, _Q, _K = (PieceType[n].value for n in
                          ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))


def _pawn_attackers(target, by_color):
    # an attacking pawn stands one rank behind the target, from its own side's view
    behind = target - PAWN_PUSH[by_color]
    f = file_of(target)
    return tuple(behind + df for df in (-1, 1) if 0 <= f + df < 8 and 0 <= behind + df < 64)


#: PAWN_ATTACKERS[color][target]: the squares from which a pawn of ``color`` attacks ``target``.
PAWN_ATTACKERS = tuple(tuple(_pawn_attackers(t, color) for t in range(64)) for color in (0, 1))


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
    for s in PAWN_ATTACKERS[by_color][target]:
        if sq[s] == pawn:
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


def evasion_squares(board, target, by_color):
    """The squares a piece other than the king may move to to end an attack on ``target`` (a
    64-bit mask): the square of every piece of ``by_color`` attacking it and, for a sliding
    attacker, the squares between the two.

    With ``target`` the king of the side to move, a move of another piece can be legal only onto
    one of these squares (or, taking a checking pawn en passant, onto the en-passant square), so
    the search core skips the rest unmade (hdl/testcheck.py has the array; docs/fsm.md the use).
    Under double check no such move is legal; the mask is then the union, still a superset.
    """
    sq = board.sq
    code = CODE[by_color]
    mask = 0
    for s in KNIGHT_TARGETS[target]:
        if sq[s] == code[_N]:
            mask |= 1 << s
    for s in KING_TARGETS[target]:
        if sq[s] == code[_K]:
            mask |= 1 << s
    for s in PAWN_ATTACKERS[by_color][target]:
        if sq[s] == code[_P]:
            mask |= 1 << s
    straight = (code[_R], code[_Q])
    diagonal = (code[_B], code[_Q])
    for d, line in enumerate(RAYS[target]):
        sliders = straight if d < 4 else diagonal
        between = 0
        for s in line:
            between |= 1 << s
            if sq[s] != EMPTY:
                if sq[s] in sliders:
                    mask |= between
                break
    return mask


def in_check(board, color):
    """True when the king of ``color`` is attacked."""
    return attacked(board, board.kings[color], color ^ 1)

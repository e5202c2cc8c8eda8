"""GenAggressor: the model of hdl/genaggressor.py.

For the chosen victim square, the square radiates the "super piece" (every pattern at once,
pawn pushes and pawn captures seen backwards); own pieces that receive the pattern of their own
kind are candidates, and the comparator tree picks the least valuable one not disabled, ties to
the lowest square index as the side to move sees it.

In quiescence (``captures_only``) an empty victim can only be the en-passant square, and then only
pawns (capturing en passant) are its aggressors. With ``king_only`` only the king is a candidate;
with ``safe_king`` the king is none on a victim the enemy attacks.
"""

from chessaccel.contract.defs import PieceType
from chessaccel.contract.geometry import (CODE, EMPTY, KNIGHT_TARGETS, KING_TARGETS, RAYS, file_of,
                                          rank_of)
from chessaccel.contract.relative import DOUBLE_PUSH_RANK, PAWN_PUSH, relative
from .testcheck import attacked

__all__ = ["candidates", "select_aggressor"]

_P, _N, _B, _R, _Q, _K = (PieceType[n].value for n in
                          ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))


def candidates(board, victim, captures_only, king_only=False, safe_king=False):
    """Own squares that can move to ``victim``, in aggressor order (least valuable first);
    ``king_only``: the king's square alone, if it is one (the search core sets it in a node in
    check for a victim off the evasions, where no other piece's move can be legal);
    ``safe_king``: not the king when the enemy attacks ``victim`` as the board stands (the king
    would step into check: the search core skips such moves unmade)."""
    sq = board.sq
    side = board.side
    own = CODE[side]
    found = []  # (kind, relative square, square)
    fwd = PAWN_PUSH[side]
    is_capture = sq[victim] != EMPTY or victim == board.ep
    if is_capture:
        f = file_of(victim)
        for df in (-1, 1):
            s = victim - fwd + df
            if 0 <= f + df < 8 and 0 <= s < 64 and sq[s] == own[_P]:
                found.append((_P, relative(s, side), s))
    elif not captures_only:
        s = victim - fwd
        if 0 <= s < 64:
            if sq[s] == own[_P]:
                found.append((_P, relative(s, side), s))
            elif sq[s] == EMPTY and rank_of(relative(victim, side)) == DOUBLE_PUSH_RANK:
                s2 = s - fwd
                if sq[s2] == own[_P]:
                    found.append((_P, relative(s2, side), s2))
    if not (captures_only and sq[victim] == EMPTY):
        for s in KNIGHT_TARGETS[victim]:
            if sq[s] == own[_N]:
                found.append((_N, relative(s, side), s))
        for s in KING_TARGETS[victim]:
            if sq[s] == own[_K]:
                found.append((_K, relative(s, side), s))
        rays = RAYS[victim]
        for d in range(8):
            kind = _R if d < 4 else _B
            for s in rays[d]:
                c = sq[s]
                if c != EMPTY:
                    if c == own[kind] or c == own[_Q]:
                        found.append((_Q if c == own[_Q] else kind, relative(s, side), s))
                    break
    found.sort()
    king_barred = safe_king and attacked(board, victim, side ^ 1)
    return [s for kind, _, s in found
            if (kind == _K and not king_barred) or (kind != _K and not king_only)]


def select_aggressor(cands, mask):
    """The comparator tree over the candidates: the first not disabled in ``mask``, or None."""
    for s in cands:
        if not (mask >> s) & 1:
            return s
    return None

"""GenVictim: the model of hdl/genvictim.py.

Every square holding a piece of the side to move transmits that piece's move pattern; empty
squares pass sliding rays on. Each square's receiver raises a ``VictimClass``; the disable mask
gates the receivers (never the rays) and a comparator tree picks the highest class, ties to the
lowest square index as the side to move sees it (``relative``).

``receivers`` is the array of 64 receivers (a function of the board alone, so the search model
computes it once per node); ``select_victim`` is the masked comparator tree.
"""

from chessaccel.contract.defs import PieceType, VictimClass
from chessaccel.contract.geometry import (TYPE_OF, COLOR_OF, EMPTY, KNIGHT_TARGETS, KING_TARGETS, RAYS,
                                 file_of, rank_of)
from chessaccel.contract.relative import PAWN_PUSH, PAWN_START_RANK, relative, relative_rank

__all__ = ["receivers", "select_victim", "victim_ranking", "NONE", "QUIET", "CAPTURE_MIN"]

NONE = VictimClass.NONE.value
QUIET = VictimClass.QUIET.value
#: Lowest class that is a capture (the en-passant square included): quiescence's threshold.
CAPTURE_MIN = VictimClass.PAWN.value

_P, _N, _B, _R, _Q, _K = (PieceType[n].value for n in
                          ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))
_SLIDER_DIRS = {_B: range(4, 8), _R: range(0, 4), _Q: range(0, 8)}


def _capture_class(code):
    return TYPE_OF[code] + 1  # VictimClass.PAWN .. KING follow PieceType.PAWN .. KING


def receivers(board):
    """VictimClass raised by each of the 64 receivers, before the disable mask."""
    sq = board.sq
    side = board.side
    enemy = side ^ 1
    cls = [NONE] * 64

    def receive(t):
        c = sq[t]
        if c == EMPTY:
            if cls[t] < QUIET:
                cls[t] = QUIET
        elif COLOR_OF[c] == enemy:
            k = _capture_class(c)
            if cls[t] < k:
                cls[t] = k

    fwd = PAWN_PUSH[side]
    home_rank = relative_rank(PAWN_START_RANK, side)
    for s in range(64):
        code = sq[s]
        if code == EMPTY or COLOR_OF[code] != side:
            continue
        kind = TYPE_OF[code]
        if kind == _P:
            t = s + fwd
            if sq[t] == EMPTY:
                receive(t)
                if rank_of(s) == home_rank and sq[t + fwd] == EMPTY:
                    receive(t + fwd)
            f = file_of(s)
            for df in (-1, 1):
                if 0 <= f + df < 8:
                    t = s + fwd + df
                    c = sq[t]
                    if c != EMPTY and COLOR_OF[c] == enemy:
                        receive(t)
                    elif t == board.ep and cls[t] < CAPTURE_MIN:
                        cls[t] = CAPTURE_MIN
        elif kind == _N:
            for t in KNIGHT_TARGETS[s]:
                receive(t)
        elif kind == _K:
            for t in KING_TARGETS[s]:
                receive(t)
        else:
            rays = RAYS[s]
            for d in _SLIDER_DIRS[kind]:
                for t in rays[d]:
                    c = sq[t]
                    if c == EMPTY:
                        receive(t)
                    else:
                        if COLOR_OF[c] == enemy:
                            receive(t)
                        break
    return cls


#: Squares of each side in ascending relative order: the tree's tie-break order.
_SCAN = tuple(tuple(sorted(range(64), key=lambda s: relative(s, side))) for side in (0, 1))


def select_victim(classes, mask, side, min_class=QUIET):
    """The comparator tree: next victim square not disabled in ``mask``, or None.

    ``min_class`` is QUIET in a full-width node and CAPTURE_MIN in quiescence.
    """
    best, best_class = None, min_class - 1
    for s in _SCAN[side]:
        k = classes[s]
        if k > best_class and not (mask >> s) & 1:   # strictly greater: ties keep the lowest
            best, best_class = s, k
    return best


def victim_ranking(classes, side, min_class=QUIET):
    """Every square the tree can pick, in the order it picks them with nothing disabled.

    ``select_victim(classes, mask, ...)`` is the first square of this list not in ``mask``; the
    search model scans it instead of the 64 receivers (same result, faster).
    """
    ranked = [s for s in _SCAN[side] if classes[s] >= min_class]
    ranked.sort(key=lambda s: -classes[s])   # stable: ties stay in relative order
    return ranked

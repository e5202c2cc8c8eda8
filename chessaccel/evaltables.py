"""The evaluation's tables, generated from the formulas of docs/semantics.md ("Evaluation").

One source for the Evaluate block's ROMs (hdl/evaluate.py) and the model (sim/model/evaluate.py).
Values are from white's view on white's squares; a black piece uses the rank-mirrored square.
"""

from .defs import PieceType
from .geometry import file_of, rank_of

__all__ = ["MATERIAL_MG", "MATERIAL_EG", "PST_MG", "PST_EG", "PHASE_INC", "PHASE_MAX",
           "PHASE_WEIGHT", "TAPER_SHIFT", "SQUARE_MG", "SQUARE_EG", "centre"]

P, N, B, R, Q, K = (PieceType[n].value for n in ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))

#: Material in centipawns, middlegame and endgame, indexed by PieceType.
MATERIAL_MG = {P: 100, N: 320, B: 330, R: 500, Q: 950, K: 0}
MATERIAL_EG = {P: 120, N: 300, B: 310, R: 540, Q: 1000, K: 0}

#: Game-phase contribution of each piece; the phase is their sum, capped at PHASE_MAX.
PHASE_INC = {P: 0, N: 1, B: 1, R: 2, Q: 4, K: 0}
PHASE_MAX = 24
#: The taper is (mg * w + eg * (2**TAPER_SHIFT - w)) >> TAPER_SHIFT with w = PHASE_WEIGHT[phase].
TAPER_SHIFT = 5
PHASE_WEIGHT = tuple((phase * (1 << TAPER_SHIFT) + PHASE_MAX // 2) // PHASE_MAX
                     for phase in range(PHASE_MAX + 1))

_KING_SHELTER = (20, 30, 10, 0, 0, 10, 30, 20)


def centre(sq):
    """0 on the rim .. 3 on d4, e4, d5, e5."""
    f, r = file_of(sq), rank_of(sq)
    return 3 - max(3 - f if f < 4 else f - 4, 3 - r if r < 4 else r - 4)


def _pst(kind, sq):
    f, r, c = file_of(sq), rank_of(sq), centre(sq)
    if kind == P:
        return (4 * (r - 1) + 3 * c, 10 * (r - 1)) if 0 < r < 7 else (0, 0)
    if kind == N:
        return (12 * c - 18, 8 * c - 12)
    if kind == B:
        return (6 * c - 6, 6 * c - 6)
    if kind == R:
        return ((20 if r == 6 else 0) + (5 if r == 0 and f in (3, 4) else 0), 10 if r == 6 else 0)
    if kind == Q:
        return (3 * c - 5, 8 * c - 12)
    if kind == K:
        return (_KING_SHELTER[f] - 15 * r, 12 * c - 18)
    raise ValueError(kind)


PST_MG = {k: tuple(_pst(k, s)[0] for s in range(64)) for k in (P, N, B, R, Q, K)}
PST_EG = {k: tuple(_pst(k, s)[1] for s in range(64)) for k in (P, N, B, R, Q, K)}

#: What a white piece of kind k on square s adds: material + piece-square value.
SQUARE_MG = {k: tuple(MATERIAL_MG[k] + PST_MG[k][s] for s in range(64)) for k in PST_MG}
SQUARE_EG = {k: tuple(MATERIAL_EG[k] + PST_EG[k][s] for s in range(64)) for k in PST_EG}

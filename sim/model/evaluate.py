"""Evaluate: the model of hdl/evaluate.py (docs/semantics.md, "Evaluation").

A sum of terms, each giving (middlegame, endgame) from white's view; today one term, material
plus piece-square tables. Pawn structure, king cover and mobility are further terms of the same
kind. The sums are turned to the side to move's view before the taper so that a position and its
colour-mirrored twin score exactly the same.
"""

from chessaccel.defs import EVAL_MAX
from chessaccel.evaltables import SQUARE_MG, SQUARE_EG, PHASE_INC, PHASE_MAX, PHASE_WEIGHT, TAPER_SHIFT
from chessaccel.geometry import TYPE_OF, COLOR_OF, EMPTY

__all__ = ["evaluate", "material_pst", "phase", "taper", "TERMS"]

_FLIP = 0o70


def material_pst(board):
    """(mg, eg) of material and piece-square values, white minus black."""
    mg = eg = 0
    for s, code in enumerate(board.sq):
        if code == EMPTY:
            continue
        k = TYPE_OF[code]
        if COLOR_OF[code] == 0:
            mg += SQUARE_MG[k][s]
            eg += SQUARE_EG[k][s]
        else:
            mg -= SQUARE_MG[k][s ^ _FLIP]
            eg -= SQUARE_EG[k][s ^ _FLIP]
    return mg, eg


#: The evaluation terms, summed. Each maps a board to (mg, eg) from white's view.
TERMS = (material_pst,)


_PHASE_OF_CODE = tuple(PHASE_INC.get(TYPE_OF[c], 0) for c in range(16))


def phase(board):
    return min(sum(_PHASE_OF_CODE[c] for c in board.sq), PHASE_MAX)


def taper(mg, eg, game_phase):
    w = PHASE_WEIGHT[game_phase]
    return (mg * w + eg * ((1 << TAPER_SHIFT) - w)) >> TAPER_SHIFT


def evaluate(board):
    """Static score in centipawns from the side to move's view, clamped to +-EVAL_MAX."""
    mg = eg = 0
    for term in TERMS:
        m, e = term(board)
        mg += m
        eg += e
    if board.side == 1:
        mg, eg = -mg, -eg
    score = taper(mg, eg, phase(board))
    return max(-EVAL_MAX, min(EVAL_MAX, score))

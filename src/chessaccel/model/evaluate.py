"""Evaluate: the model of hdl/evaluate.py (docs/semantics.md, "Evaluation").

A sum of terms, each giving (middlegame, endgame) from white's view. This module is the "pst"
evaluation, the default and the RTL's: one term, material plus piece-square tables. The "terms"
evaluation (pawn structure, king safety, mobility, piece terms) is model/evalterms.py, which
reuses this term, the phase and the taper. The sums are turned to the side to move's view before the taper so that a position and its
colour-mirrored twin score exactly the same.

The incremental form (the SearchCore's IncrementalEvaluate, hdl/evaluate.py) keeps the sums
instead of the board: ``side_sums`` are a position's (mg, eg, phase before the cap) from the side
to move's view, ``sums_after_make`` gives the child's from the parent's and the move (the table
values of the squares the move changes), and ``sums_score`` is the taper and clamp of them, so
``evaluate(board) == sums_score(*side_sums(board))`` while material + piece-square values are the
only term. ``evaluate`` stays the definition; the search calls it.
"""

from chessaccel.contract.defs import EVAL_MAX
from chessaccel.contract.evaltables import SQUARE_MG, SQUARE_EG, PHASE_INC, PHASE_MAX, PHASE_WEIGHT, TAPER_SHIFT
from chessaccel.contract.defs import PieceType
from chessaccel.contract.geometry import TYPE_OF, COLOR_OF, EMPTY
from chessaccel.contract.relative import CASTLE_ROOK_MOVE, CASTLE_STEP, MIRROR, PAWN_PUSH, relative

__all__ = ["evaluate", "material_pst", "phase", "taper", "TERMS", "side_sums", "sums_score",
           "sums_after_make"]

def material_pst(board, squares=None):
    """(mg, eg) of material and piece-square values, white minus black; ``squares``: the tables
    (SQUARE_MG, SQUARE_EG) to read, by default the pst evaluation's (contract/evalweights.py's
    ``square_tables`` gives each evaluation's)."""
    square_mg, square_eg = squares or (SQUARE_MG, SQUARE_EG)
    mg = eg = 0
    for s, code in enumerate(board.sq):
        if code == EMPTY:
            continue
        k = TYPE_OF[code]
        if COLOR_OF[code] == 0:
            mg += square_mg[k][s]
            eg += square_eg[k][s]
        else:
            mg -= square_mg[k][s ^ MIRROR]
            eg -= square_eg[k][s ^ MIRROR]
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


# --- the incremental form ----------------------------------------------------------------------

_PAWN, _KING, _ROOK = PieceType.PAWN.value, PieceType.KING.value, PieceType.ROOK.value


def side_sums(board, squares=None):
    """(mg, eg, phase) of material and piece-square values (of the tables ``squares``, as
    material_pst) from the side to move's view, the phase before the cap at PHASE_MAX (the
    state IncrementalEvaluate keeps per ply)."""
    mg, eg = material_pst(board, squares)
    if board.side == 1:
        mg, eg = -mg, -eg
    return mg, eg, sum(_PHASE_OF_CODE[c] for c in board.sq)


def sums_score(mg, eg, game_phase):
    """The static score of a position whose ``side_sums`` are (mg, eg, game_phase)."""
    score = taper(mg, eg, min(game_phase, PHASE_MAX))
    return max(-EVAL_MAX, min(EVAL_MAX, score))


def sums_after_make(sums, board, move, squares=None):
    """The ``side_sums`` of the child of ``board`` (not yet made) by ``move`` (from, to, promo),
    from ``sums``, the board's own: the mover's sums gain the value of the piece landing on the
    to-square, lose the piece leaving the from-square, gain the value of the enemy piece taken
    (on the to-square, or behind it en passant) and the castling rook's move; then the view
    turns to the child's side. The phase gains the promoted piece's increment and loses the
    taken piece's. ``squares``: the tables, as material_pst."""
    square_mg, square_eg = squares or (SQUARE_MG, SQUARE_EG)
    mg, eg, game_phase = sums
    f, t, promo = move
    mover = board.side
    def own(s):   # a square in the mover's frame
        return relative(s, mover)
    moving = TYPE_OF[board.sq[f]]
    placed = promo if promo else moving
    victim_sq = t
    if moving == _PAWN and t == board.ep:
        victim_sq = t - PAWN_PUSH[mover]
    victim = board.sq[victim_sq]
    d_mg = square_mg[placed][own(t)] - square_mg[moving][own(f)]
    d_eg = square_eg[placed][own(t)] - square_eg[moving][own(f)]
    d_phase = PHASE_INC[placed] - PHASE_INC[moving]
    if victim != EMPTY:
        k = TYPE_OF[victim]
        d_mg += square_mg[k][own(victim_sq) ^ MIRROR]
        d_eg += square_eg[k][own(victim_sq) ^ MIRROR]
        d_phase -= PHASE_INC[k]
    if moving == _KING and abs(t - f) == CASTLE_STEP:
        rook_from, rook_to = CASTLE_ROOK_MOVE[t]
        d_mg += square_mg[_ROOK][own(rook_to)] - square_mg[_ROOK][own(rook_from)]
        d_eg += square_eg[_ROOK][own(rook_to)] - square_eg[_ROOK][own(rook_from)]
    return -(mg + d_mg), -(eg + d_eg), game_phase + d_phase

"""Legal moves at the top of the tree, in the accelerator's own generation order.

The accelerator generates moves most valuable victim first, least valuable aggressor first, ties
to the lowest relative square, promotions Q R B N, castling last (docs/semantics.md, section 2).
The host searches its plies in the same order, so that with no hash move and no killer its tree
is the one the accelerator would walk; python-chess finds the legal moves (it is the project's
oracle for the rules) and one integer key per move sorts them.

The key, from the most significant field down: stage (victims, then castling), victim class
(highest first), the victim's relative square, the aggressor's piece type, its relative square,
the promotion's rank in PROMOTION_ORDER. The en-passant square ranks as a pawn capture for every
move to it when an own pawn attacks it, exactly as the accelerator's receivers rank it.
"""

import chess

from chessaccel.contract.defs import PROMOTION_ORDER, VictimClass
from chessaccel.contract.relative import MIRROR as _MIRROR

__all__ = ["ordered_moves", "order_key", "to_model", "from_model", "is_quiet"]

_CAPTURE_CLASS = {chess.PAWN: VictimClass.PAWN.value, chess.KNIGHT: VictimClass.KNIGHT.value,
                  chess.BISHOP: VictimClass.BISHOP.value, chess.ROOK: VictimClass.ROOK.value,
                  chess.QUEEN: VictimClass.QUEEN.value, chess.KING: VictimClass.KING.value}
_QUIET = VictimClass.QUIET.value
_EP_CLASS = VictimClass.PAWN.value
#: python-chess piece types and the contract's PieceType share their numbers (pawn 1 .. king 6).
_PROMO_RANK = {p.value: i for i, p in enumerate(PROMOTION_ORDER)}
_CASTLING_STAGE = 1 << 30


def order_key(cb, move, ep_hot=None):
    """The sort key of a legal ``move`` of ``cb`` in generation order (smaller first)."""
    us = cb.turn
    flip = 0 if us == chess.WHITE else _MIRROR
    f, t = move.from_square, move.to_square
    aggressor = cb.piece_type_at(f)
    if aggressor == chess.KING and abs(t - f) == 2:
        return _CASTLING_STAGE + (0 if t > f else 1)
    victim = cb.piece_type_at(t)
    if victim is not None:
        cls = _CAPTURE_CLASS[victim]
    else:
        if ep_hot is None:
            ep_hot = _en_passant_is_hot(cb)
        cls = _EP_CLASS if ep_hot and t == cb.ep_square else _QUIET
    promo = _PROMO_RANK[move.promotion] if move.promotion else 0
    return (((7 - cls) << 20) | ((t ^ flip) << 14) | (aggressor << 10) | ((f ^ flip) << 4)
            | promo)


def _en_passant_is_hot(cb):
    """True when the position's en-passant square is attacked by a pawn of the side to move."""
    ep = cb.ep_square
    if ep is None:
        return False
    own_pawns = cb.pawns & cb.occupied_co[cb.turn]
    return bool(chess.BB_PAWN_ATTACKS[not cb.turn][ep] & own_pawns)


def ordered_moves(cb):
    """The legal moves of ``cb`` (python-chess board) in the accelerator's generation order.

    ``order_key`` inlined over the board's bitboards. The search's nodes below the root get
    the same order from engine/hostboard.py (compiled; tests/test_hostboard.py holds it to
    this function)."""
    us = cb.turn
    flip = 0 if us == chess.WHITE else _MIRROR
    theirs = cb.occupied_co[not us]
    pawns, knights, bishops, rooks, queens = cb.pawns, cb.knights, cb.bishops, cb.rooks, cb.queens
    ep = cb.ep_square if _en_passant_is_hot(cb) else None
    keyed = []
    for move in cb.generate_legal_moves():
        f, t = move.from_square, move.to_square
        bit = 1 << f
        aggressor = (1 if pawns & bit else 2 if knights & bit else 3 if bishops & bit else
                     4 if rooks & bit else 5 if queens & bit else 6)
        if aggressor == 6 and (t - f == 2 or f - t == 2):
            keyed.append((_CASTLING_STAGE + (0 if t > f else 1), move))
            continue
        bit = 1 << t
        if theirs & bit:
            victim = (1 if pawns & bit else 2 if knights & bit else 3 if bishops & bit else
                      4 if rooks & bit else 5 if queens & bit else 6)
            cls = victim + 1            # _CAPTURE_CLASS: PieceType + 1
        elif t == ep:
            cls = _EP_CLASS
        else:
            cls = _QUIET
        promo = _PROMO_RANK[move.promotion] if move.promotion else 0
        keyed.append((((7 - cls) << 20) | ((t ^ flip) << 14) | (aggressor << 10)
                      | ((f ^ flip) << 4) | promo, move))
    keyed.sort(key=_first)      # keys are unique: (to, from, promotion) names the move
    return [move for _, move in keyed]


def _first(pair):
    return pair[0]


def is_quiet(cb, move):
    """Neither a capture (en passant included) nor a promotion: a killer candidate."""
    return not move.promotion and not cb.is_capture(move)


def to_model(move):
    """The accelerator's (from, to, promo) of a python-chess move (same square numbers)."""
    return (move.from_square, move.to_square, move.promotion or 0)


def from_model(move):
    """The python-chess move of an accelerator (from, to, promo), or None."""
    if not move:
        return None
    f, t, promo = move
    return chess.Move(f, t, promo or None)

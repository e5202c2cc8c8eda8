"""Independent references for the model tests, written from docs/semantics.md with python-chess
generating the moves; they share nothing with sim/model (the static evaluation is the document's,
from tests/evalref.py).

- ``contract_key`` / ``expected_order``: the contract's move order (section 2), as a sort key
  over python-chess's legal moves.
- ``minimax``: the plain negamax value of the contract's search (fixed depth, quiescence with
  stand pat, evasions at the horizon when in check, mate and stalemate scores, MAX_PLY), with
  no pruning at all.
- ``alphabeta``: the contract's fail-soft alpha-beta, recursive, over python-chess moves sorted
  by ``contract_key``; it counts nodes the contract's way, so the model must match it node for
  node.
"""

import chess

from chessaccel.contract.defs import INF, MATE, MAX_PLY, PROMOTION_ORDER, PieceType, VictimClass

from evalref import reference_eval

__all__ = ["contract_key", "expected_order", "static_eval", "minimax", "alphabeta",
           "victim_class"]

_TYPE = {chess.PAWN: PieceType.PAWN, chess.KNIGHT: PieceType.KNIGHT,
         chess.BISHOP: PieceType.BISHOP, chess.ROOK: PieceType.ROOK,
         chess.QUEEN: PieceType.QUEEN, chess.KING: PieceType.KING}
_CAPTURE_CLASS = {chess.PAWN: VictimClass.PAWN, chess.KNIGHT: VictimClass.KNIGHT,
                  chess.BISHOP: VictimClass.BISHOP, chess.ROOK: VictimClass.ROOK,
                  chess.QUEEN: VictimClass.QUEEN, chess.KING: VictimClass.KING}
_PROMO_RANK = {p: i for i, p in enumerate(PROMOTION_ORDER)}
_VICTIM_STAGE = 0
_CASTLING_STAGE = 1     # castling comes after every victim


# --- move order -------------------------------------------------------------------------------

def _relative(square, color):
    """The square as the side to move sees it: ranks flipped for black (all tie-breaks)."""
    return square if color == chess.WHITE else chess.square_mirror(square)


def _en_passant_square(cb):
    """The position's en-passant square as the accelerator holds it (dropped when impossible)."""
    if cb.ep_square is None or cb.status() & chess.STATUS_INVALID_EP_SQUARE:
        return None
    return cb.ep_square


def victim_class(cb, square):
    """The receiver class of a square some own piece can move to."""
    piece = cb.piece_at(square)
    if piece is not None:
        return _CAPTURE_CLASS[piece.piece_type]
    own_pawns = cb.pieces_mask(chess.PAWN, cb.turn)
    if square == _en_passant_square(cb) and cb.attackers_mask(cb.turn, square) & own_pawns:
        return VictimClass.PAWN
    return VictimClass.QUIET


def contract_key(cb, move):
    """Sort key of a legal move in the contract's generation order: victims by class (highest
    first) then relative square; per victim, aggressors by piece value then relative square;
    promotions Q, R, B, N; castling last, kingside first."""
    us = cb.turn
    if cb.is_castling(move):
        kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
        return (_CASTLING_STAGE, 0 if kingside else 1)
    aggressor = _TYPE[cb.piece_type_at(move.from_square)]
    promo = _PROMO_RANK[_TYPE[move.promotion]] if move.promotion else 0
    return (_VICTIM_STAGE, -victim_class(cb, move.to_square).value,
            _relative(move.to_square, us), aggressor.value, _relative(move.from_square, us), promo)


def ordered_moves(cb, captures_only=False):
    """python-chess's legal moves (captures only in quiescence) in the contract's order."""
    moves = [m for m in cb.legal_moves if not captures_only or cb.is_capture(m)]
    return sorted(moves, key=lambda m: contract_key(cb, m))


def expected_order(cb, captures_only=False):
    return [m.uci() for m in ordered_moves(cb, captures_only)]


# --- evaluation and search --------------------------------------------------------------------

def static_eval(cb):
    """The document's evaluation of a python-chess position (tests/evalref.py)."""
    return reference_eval(cb)


def minimax(cb, depth, ply=0):
    """The contract's search value with no pruning (exponential: small depths only)."""
    if ply == MAX_PLY:
        return static_eval(cb)
    in_check = cb.is_check()
    quiescence = depth == 0 and not in_check
    best = static_eval(cb) if quiescence else -INF
    legal = 0
    for move in cb.legal_moves:
        if quiescence and not cb.is_capture(move):
            continue
        legal += 1
        cb.push(move)
        best = max(best, -minimax(cb, max(depth - 1, 0), ply + 1))
        cb.pop()
    if legal == 0 and not quiescence:
        return -(MATE - ply) if in_check else 0
    return best


class AlphaBeta:
    """The contract's fail-soft alpha-beta, recursive, counting nodes."""

    def __init__(self, max_ply=MAX_PLY):
        self.nodes = 0
        self.max_ply = max_ply

    def node(self, cb, ply, depth, alpha, beta):
        """(score, best move or None)."""
        self.nodes += 1
        if ply == self.max_ply:
            return static_eval(cb), None
        in_check = cb.is_check()
        quiescence = depth == 0 and not in_check
        best, best_move = -INF, None
        if quiescence:
            best = static_eval(cb)
            if best >= beta:
                return best, None
            alpha = max(alpha, best)
        moves = ordered_moves(cb, quiescence)
        for move in moves:
            cb.push(move)
            score = -self.node(cb, ply + 1, max(depth - 1, 0), -beta, -alpha)[0]
            cb.pop()
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        if not moves and not quiescence:
            return (-(MATE - ply) if in_check else 0), None
        return best, best_move


def alphabeta(cb, depth, alpha=-INF, beta=INF, max_ply=MAX_PLY):
    """(score, best move uci or None, nodes) of the contract's search (stack of ``max_ply``)."""
    searcher = AlphaBeta(max_ply)
    score, move = searcher.node(cb, 0, depth, alpha, beta)
    return score, (move.uci() if move else None), searcher.nodes

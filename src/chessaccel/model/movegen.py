"""Move generation at one node, as the hardware walks it: the model of hdl/movegen.py.

``MovePicker`` holds exactly the per-ply generation state the SearchStack keeps (disable mask,
the pending promotion, the stage) and yields pseudo-legal moves in the contract's order:

1. victims by class (queen captured first ... pawn / en passant, then quiet squares), ties to the
   lowest relative square; for each victim its aggressors, pawn first and king last, ties to the
   lowest relative square; a pawn reaching the last rank yields Q, R, B, N promotions in turn;
2. after all victims: castling kingside, then queenside, when CastleStatus allows it.

Disable-mask rule: after an aggressor's move(s), its from-square is disabled; a victim with no
aggressor left is disabled and the own squares are re-enabled.
"""

from chessaccel.contract.defs import PieceType, PROMOTION_ORDER
from chessaccel.contract.geometry import TYPE_OF, rank_of
from chessaccel.contract.relative import LAST_RANK, relative
from .genvictim import receivers, victim_ranking, QUIET, CAPTURE_MIN
from .genaggressor import candidates, select_aggressor
from .castlestatus import castle_status, castle_move
from .testcheck import in_check

__all__ = ["MovePicker", "pseudo_moves", "legal_moves", "Stage"]

_PAWN = PieceType.PAWN.value
_PROMOS = tuple(p.value for p in PROMOTION_ORDER)


class Stage:
    VICTIMS = 0
    CASTLE_KINGSIDE = 1
    CASTLE_QUEENSIDE = 2
    DONE = 3


class MovePicker:
    __slots__ = ("board", "captures_only", "mask", "own", "ranking", "stage",
                 "victim", "cands", "promo", "aggressor", "steps")

    def __init__(self, board, captures_only=False, trace=False):
        self.board = board
        self.captures_only = captures_only
        self.mask = 0
        self.own = board.own_mask()
        # The victim tree's order with nothing disabled; the first entry not in the mask is
        # what select_victim(receivers(board), mask, ...) returns (model speed only).
        self.ranking = victim_ranking(receivers(board), board.side,
                                      CAPTURE_MIN if captures_only else QUIET)
        self.stage = Stage.VICTIMS
        self.victim = None      # victim whose candidates are cached (model speed only)
        self.cands = None
        self.promo = 0          # index into PROMOTION_ORDER of the next promotion
        self.aggressor = None   # pawn whose promotions are being walked
        #: GenVictim / GenAggressor / CastleStatus transactions made, when traced (tests)
        self.steps = [] if trace else None

    def next(self):
        """The next pseudo-legal move (from, to, promo), or None when the node is exhausted."""
        board = self.board
        while True:
            if self.stage == Stage.VICTIMS:
                if self.aggressor is not None:
                    a, v = self.aggressor, self.victim
                    promo = _PROMOS[self.promo]
                    self.promo += 1
                    if self.promo == len(_PROMOS):
                        self.promo = 0
                        self.aggressor = None
                        self.mask |= 1 << a
                    return (a, v, promo)
                mask = self.mask
                v = next((s for s in self.ranking if not (mask >> s) & 1), None)
                if self.steps is not None:
                    self.steps.append(("victim", self.mask, v))
                if v is None:
                    self.stage = Stage.DONE if self.captures_only else Stage.CASTLE_KINGSIDE
                    continue
                if v != self.victim:
                    self.victim = v
                    self.cands = candidates(board, v, self.captures_only)
                a = select_aggressor(self.cands, self.mask)
                if self.steps is not None:
                    self.steps.append(("aggressor", v, self.mask, a))
                if a is None:
                    self.mask = (self.mask | (1 << v)) & ~self.own
                    continue
                last_rank = rank_of(relative(v, board.side)) == LAST_RANK
                if TYPE_OF[board.sq[a]] == _PAWN and last_rank:
                    self.aggressor = a
                    continue
                self.mask |= 1 << a
                return (a, v, 0)
            if self.stage == Stage.CASTLE_KINGSIDE or self.stage == Stage.CASTLE_QUEENSIDE:
                kingside = self.stage == Stage.CASTLE_KINGSIDE
                self.stage += 1
                ok = castle_status(board)[0 if kingside else 1]
                if self.steps is not None:
                    self.steps.append(("castle", kingside, ok))
                if ok:
                    return castle_move(board.side, kingside)
                continue
            return None


def pseudo_moves(board, captures_only=False):
    """All pseudo-legal moves of the node in generation order."""
    picker = MovePicker(board, captures_only)
    out = []
    while (m := picker.next()) is not None:
        out.append(m)
    return out


def legal_moves(board, captures_only=False):
    """Legal moves in generation order: make, TestCheck on the mover's king, unmake."""
    out = []
    for m in pseudo_moves(board, captures_only):
        mover = board.side
        undo = board.make(m)
        if not in_check(board, mover):
            out.append(m)
        board.unmake(m, undo)
    return out

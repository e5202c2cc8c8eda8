"""GenAggressor: the next aggressor for a victim square (model: sim/model/genaggressor.py).

The victim square radiates the "super piece" (every pattern at once, pawn moves seen backwards);
own pieces that receive the pattern of their own kind are candidates. Pawns capture onto a victim
that holds a piece or is the en-passant square, and push onto any other (single, or double from
their home rank over an empty square). In quiescence (``captures_only``) an empty victim can only
be the en-passant square, and only pawns take there. The comparator tree picks the least valuable
candidate not disabled, ties to the lowest relative square. ``more`` looks one aggressor ahead:
another enabled candidate remains besides the one chosen, so the search knows in the cycle it
makes a move whether the victim is then exhausted. ``king_only`` switches every level but the
king's off: the search core raises it in a node in check for a victim off the node's evasions,
where only a king move can be legal. ``safe_king`` switches the king's level off when the enemy
attacks the victim as the board stands (the same radiated super piece, received by enemy pieces):
the king would step into check, and the search core skips the move unmade.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import Color, PieceType, Position, Square
from chessaccel.contract.geometry import rank_of
from chessaccel.contract.relative import LAST_RANK, PAWN_START_RANK, PAWN_STEP

from .squarearray import (PIECE_TYPES, SQUARES, PriorityPick, RelativeBoard, SuperPiece,
                          en_passant_square, enemy_pawn_capture_targets, onehot, or_reduce,
                          pattern_sources, permute_mask, to_absolute, to_relative, two_or_more)

__all__ = ["GenAggressor"]

#: Squares an enemy pawn on each relative square captures on (it moves down this frame).
ENEMY_PAWN_CAPTURES = tuple(enemy_pawn_capture_targets(s) for s in range(SQUARES))


class GenAggressor(wiring.Component):
    """Next aggressor of the side to move onto ``victim``: combinational, one clock in the walker.

    Inputs: ``position``, ``victim`` (absolute square), ``mask`` (disable word, absolute squares;
    disabled aggressors are skipped), ``captures_only`` (quiescence), ``king_only`` (the king is
    the only candidate; it enters at the tree's last select, beside the levels' encoders),
    ``safe_king`` (no king on a victim the enemy attacks; enters at the same select).
    Outputs: ``valid`` (an aggressor exists), ``aggressor`` (absolute square), ``aggressor_type``,
    ``promotion`` (the aggressor is a pawn reaching the last rank: the move is tried as Q, R, B, N),
    ``more`` (at least two candidates are enabled: another aggressor follows this one).
    Same answer as ``select_aggressor(candidates(board, victim, captures_only, king_only,
    safe_king), mask)``.
    """

    position: In(Position)
    victim: In(Square)
    mask: In(SQUARES)
    captures_only: In(1)
    king_only: In(1)
    safe_king: In(1)

    valid: Out(1)
    aggressor: Out(Square)
    aggressor_type: Out(PieceType)
    promotion: Out(1)
    more: Out(1)

    def elaborate(self, platform):
        m = Module()
        black = self.position.side == Color.BLACK
        board = RelativeBoard(m, self.position.squares, black, "aggressor")
        own, empty = board.own, board.empty

        victim = Signal(Square)
        target = Signal(SQUARES)
        m.d.comb += [victim.eq(to_relative(self.victim, black)), target.eq(onehot(victim))]
        # the rays as a parallel prefix: three levels, not a chain of seven cells (GenAggressor
        # ends the generate stage's longest path; the other arrays gain nothing from it)
        radiated = SuperPiece(m, target, empty, "aggressor_super", prefix_rays=True)

        ep_square = en_passant_square(m, self.position.ep, "aggressor")
        victim_empty = Signal()
        is_capture = Signal()
        m.d.comb += [
            victim_empty.eq((target & empty).any()),
            is_capture.eq(~victim_empty | (target & ep_square).any()),
        ]

        # Pawn pushes seen backwards from the victim.
        pushers = Signal(SQUARES)
        for s in range(SQUARES - PAWN_STEP):
            push = target[s + PAWN_STEP]
            if rank_of(s) == PAWN_START_RANK:
                push = push | (target[s + 2 * PAWN_STEP] & empty[s + PAWN_STEP])
            m.d.comb += pushers[s].eq(push)

        attackers = radiated.attackers(own)
        pieces_move = ~(self.captures_only & victim_empty)
        candidates = {
            PieceType.PAWN: Mux(is_capture, attackers[PieceType.PAWN],
                                Mux(self.captures_only, 0, own[PieceType.PAWN] & pushers)),
        }
        for t in PIECE_TYPES[1:]:
            candidates[t] = Mux(pieces_move, attackers[t], 0)

        enabled = Signal(SQUARES)
        m.d.comb += enabled.eq(~permute_mask(self.mask, black))
        levels = [candidates[t] & enabled for t in PIECE_TYPES]
        # the enemy attacks the victim: its pieces receive the super piece's pattern of their
        # kind (its pawns capture downwards in this frame)
        guards = radiated.attackers(board.enemy)
        guards[PieceType.PAWN] = (board.enemy[PieceType.PAWN]
                                  & pattern_sources(target, ENEMY_PAWN_CAPTURES))
        guarded = Signal(name="victim_guarded")
        m.d.comb += guarded.eq(or_reduce(list(guards.values())).any())
        king_barred = Signal(name="king_barred")
        m.d.comb += king_barred.eq(self.safe_king & guarded)
        tree = PriorityPick(m, levels, "aggressor_tree",
                            [~self.king_only if t != PieceType.KING else ~king_barred
                             for t in PIECE_TYPES])
        last_rank = victim.rank == LAST_RANK
        # a Signal, not the bare OR: two_or_more reads it bit by bit through shared terms,
        # which Amaranth's lowering copies whole at each read
        present = Signal(SQUARES)   # the candidates but the king
        m.d.comb += present.eq(or_reduce(levels[:-1]))
        m.d.comb += [
            self.valid.eq(tree.valid),
            self.aggressor.eq(to_absolute(tree.square, black)),
            self.aggressor_type.as_value().eq(tree.select([t.value for t in PIECE_TYPES], 3)),
            self.promotion.eq(tree.first[0] & last_rank),
            # the king's level holds one square at most: alone, it has nothing to follow
            self.more.eq(~self.king_only & (two_or_more(present) | present.any()
                                            & levels[-1].any() & ~king_barred)),
        ]
        return m

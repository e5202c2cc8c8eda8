"""GenVictim: the next victim square of a node (model: sim/model/genvictim.py).

Every square holding a piece of the side to move transmits that piece's pattern; empty squares
pass sliding rays on. Every square's receiver raises a ``VictimClass``: an enemy piece that an own
piece attacks ranks by its value (``PieceType + 1``); the en-passant square, when an own pawn
attacks it, ranks PAWN; any other empty square an own piece moves to (rays, knight, king step,
pawn single or double push) ranks QUIET. The disable ``mask`` gates the receivers only, never the
rays. The comparator tree picks the highest class, ties to the lowest relative square.

``king_attacked`` is the KING receiver before the mask: an own piece attacks the enemy king. On
the board right after a make (the side to move is the mover's opponent) it says that the move
just made left the mover's king attacked, i.e. the move was illegal: the search core's legality
test, in the same array pass that finds the child's first victim.
"""

from amaranth.hdl import Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import Color, PieceType, Position, Square, VictimClass
from chessaccel.contract.geometry import KING_TARGETS, KNIGHT_TARGETS, QUEEN_DIRS, rank_of
from chessaccel.contract.relative import DOUBLE_PUSH_RANK, PAWN_STEP

from .squarearray import (BISHOP_DIR_INDICES, PIECE_TYPES, ROOK_DIR_INDICES, SQUARES,
                          PriorityPick, RelativeBoard, en_passant_square, or_reduce, pattern_sources, pawn_capturers,
                          permute_mask, ray_fill, to_absolute)

__all__ = ["GenVictim", "VictimReceivers"]


class VictimReceivers:
    """The 64 receivers of the side to move, as one 64-bit vector per VictimClass level.

    ``capture[t]`` for each PieceType: enemy pieces of that type attacked by an own piece;
    ``en_passant``: the en-passant square attacked by an own pawn; ``quiet``: other empty squares
    an own piece moves to. Indices are relative squares of the side to move.
    """

    def __init__(self, m, position, prefix="victim"):
        black = position.side == Color.BLACK
        board = RelativeBoard(m, position.squares, black, prefix)
        self.board = board
        own, empty = board.own, board.empty

        # Transmitters: slider rays from own sliders through empty squares.
        rook_like = own[PieceType.ROOK] | own[PieceType.QUEEN]
        bishop_like = own[PieceType.BISHOP] | own[PieceType.QUEEN]
        rays = []
        for d in ROOK_DIR_INDICES:
            rays.append(ray_fill(rook_like, empty, QUEEN_DIRS[d]))
        for d in BISHOP_DIR_INDICES:
            rays.append(ray_fill(bishop_like, empty, QUEEN_DIRS[d]))
        reach = Signal(SQUARES, name=f"{prefix}_reach")       # pieces but pawns
        pawn_attack = Signal(SQUARES, name=f"{prefix}_pawn_attack")
        pawn_push = Signal(SQUARES, name=f"{prefix}_pawn_push")
        m.d.comb += reach.eq(or_reduce(rays)
                             | pattern_sources(own[PieceType.KNIGHT], KNIGHT_TARGETS)
                             | pattern_sources(own[PieceType.KING], KING_TARGETS))

        pawns = own[PieceType.PAWN]
        for t in range(SQUARES):
            capturers = pawn_capturers(t)
            if capturers:
                m.d.comb += pawn_attack[t].eq(or_reduce([pawns[s] for s in capturers]))
            if t >= PAWN_STEP:
                push = pawns[t - PAWN_STEP]
                if rank_of(t) == DOUBLE_PUSH_RANK:
                    push = push | (pawns[t - 2 * PAWN_STEP] & empty[t - PAWN_STEP])
                m.d.comb += pawn_push[t].eq(push)

        ep_square = en_passant_square(m, position.ep, prefix)

        # Receivers, one vector per class.
        self.capture = {}
        for t in PIECE_TYPES:
            self.capture[t] = Signal(SQUARES, name=f"{prefix}_capture_{t.name.lower()}")
            m.d.comb += self.capture[t].eq(board.enemy[t] & (reach | pawn_attack))
        self.en_passant = Signal(SQUARES, name=f"{prefix}_en_passant")
        self.quiet = Signal(SQUARES, name=f"{prefix}_quiet")
        m.d.comb += [
            self.en_passant.eq(ep_square & pawn_attack),
            self.quiet.eq(empty & (reach | pawn_push) & ~self.en_passant),
        ]

    def levels(self):
        """(VictimClass, 64-bit vector) pairs, highest class first."""
        capture = self.capture
        return [
            (VictimClass.KING,   capture[PieceType.KING]),
            (VictimClass.QUEEN,  capture[PieceType.QUEEN]),
            (VictimClass.ROOK,   capture[PieceType.ROOK]),
            (VictimClass.BISHOP, capture[PieceType.BISHOP]),
            (VictimClass.KNIGHT, capture[PieceType.KNIGHT]),
            (VictimClass.PAWN,   capture[PieceType.PAWN] | self.en_passant),
            (VictimClass.QUIET,  self.quiet),
        ]


class GenVictim(wiring.Component):
    """Next victim of the side to move: combinational, one clock in the MoveWalker.

    Inputs: ``position`` (the board), ``mask`` (disable word, bit = absolute square; disabled
    receivers are skipped), ``captures_only`` (quiescence: only classes >= PAWN; it enters the
    tree only at its last select, so it may arrive late).
    Outputs: ``valid`` (a victim exists), ``victim`` (absolute square), ``victim_class``,
    ``king_attacked`` (the unmasked KING receiver: an own piece attacks the enemy king),
    ``capture_valid`` (a capture victim exists, class >= PAWN, whatever ``captures_only``: with
    ``captures_only`` low, ``victim`` is then also the quiescence answer, so a caller that
    learns late whether the node is quiescent need not feed that to the tree).
    Same answer as ``select_victim(receivers(board), mask, side, min_class)`` of the model.
    """

    position: In(Position)
    mask: In(SQUARES)
    captures_only: In(1)

    valid: Out(1)
    victim: Out(Square)
    victim_class: Out(VictimClass)
    king_attacked: Out(1)
    capture_valid: Out(1)

    def elaborate(self, platform):
        m = Module()
        receivers = VictimReceivers(m, self.position)
        black = self.position.side == Color.BLACK
        enabled = Signal(SQUARES)
        m.d.comb += enabled.eq(~permute_mask(self.mask, black))
        levels, classes, enables = [], [], []
        for cls, vector in receivers.levels():
            levels.append(vector & enabled)
            classes.append(cls.value)
            enables.append(~self.captures_only if cls == VictimClass.QUIET else Const(1, 1))
        tree = PriorityPick(m, levels, "victim_tree", enables)
        m.d.comb += [
            self.valid.eq(tree.valid),
            self.victim.eq(to_absolute(tree.square, black)),
            self.victim_class.as_value().eq(tree.select(classes, 3)),
            self.king_attacked.eq(receivers.capture[PieceType.KING].any()),
            # every level but the last (QUIET) is a capture class
            self.capture_valid.eq(tree.present[:-1].any()),
        ]
        return m

"""GenVictim: the next victim square of a node (model: sim/model/genvictim.py).

Every square holding a piece of the side to move transmits that piece's pattern; empty squares
pass sliding rays on. Every square's receiver raises a ``VictimClass``: an enemy piece that an own
piece attacks ranks by its value (``PieceType + 1``); the en-passant square, when an own pawn
attacks it, ranks PAWN; any other empty square an own piece moves to (rays, knight, king step,
pawn single or double push) ranks QUIET. The disable ``mask`` gates the receivers only, never the
rays. The comparator tree picks the highest class, ties to the lowest relative square.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from chessaccel.defs import Color, PieceType, Position, Square, VictimClass
from chessaccel.geometry import KING_TARGETS, KNIGHT_TARGETS, QUEEN_DIRS, file_of, rank_of, square

from .squarearray import (BISHOP_DIR_INDICES, PIECE_TYPES, RANK_OF_EP, ROOK_DIR_INDICES, SQUARES,
                          RelativeBoard, pattern_sources, pawn_capturers, permute_mask,
                          pick_first_level, ray_fill, to_absolute)

__all__ = ["GenVictim", "victim_receivers"]

#: Relative rank a pawn's double push lands on.
DOUBLE_PUSH_RANK = 3
PAWN_STEP = 8  # one rank up in the relative frame


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
        ray_reach = rays[0]
        for r in rays[1:]:
            ray_reach = ray_reach | r
        m.d.comb += reach.eq(ray_reach
                             | pattern_sources(own[PieceType.KNIGHT], KNIGHT_TARGETS)
                             | pattern_sources(own[PieceType.KING], KING_TARGETS))

        pawns = own[PieceType.PAWN]
        for t in range(SQUARES):
            capturers = pawn_capturers(t)
            if capturers:
                attack = pawns[capturers[0]]
                for s in capturers[1:]:
                    attack = attack | pawns[s]
                m.d.comb += pawn_attack[t].eq(attack)
            if t >= PAWN_STEP:
                push = pawns[t - PAWN_STEP]
                if rank_of(t) == DOUBLE_PUSH_RANK:
                    push = push | (pawns[t - 2 * PAWN_STEP] & empty[t - PAWN_STEP])
                m.d.comb += pawn_push[t].eq(push)

        ep_square = Signal(SQUARES, name=f"{prefix}_ep_square")
        for f in range(8):
            t = square(f, RANK_OF_EP)
            m.d.comb += ep_square[t].eq(position.ep.valid & (position.ep.file == f))

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
    receivers are skipped), ``captures_only`` (quiescence: only classes >= PAWN).
    Outputs: ``valid`` (a victim exists), ``victim`` (absolute square), ``victim_class``.
    Same answer as ``select_victim(receivers(board), mask, side, min_class)`` of the model.
    """

    position: In(Position)
    mask: In(SQUARES)
    captures_only: In(1)

    valid: Out(1)
    victim: Out(Square)
    victim_class: Out(VictimClass)

    def elaborate(self, platform):
        m = Module()
        receivers = VictimReceivers(m, self.position)
        black = self.position.side == Color.BLACK
        enabled = ~permute_mask(self.mask, black)
        levels = []
        classes = []
        for cls, vector in receivers.levels():
            if cls == VictimClass.QUIET:
                vector = vector & (~self.captures_only).replicate(SQUARES)
            levels.append(vector & enabled)
            classes.append(cls)
        valid, level, relative_victim = pick_first_level(m, levels, "victim_tree")
        class_of_level = VictimClass.NONE
        for i in reversed(range(len(classes))):
            class_of_level = Mux(level == i, classes[i], class_of_level)
        m.d.comb += [
            self.valid.eq(valid),
            self.victim.eq(to_absolute(relative_victim, black)),
            self.victim_class.eq(Mux(valid, class_of_level, VictimClass.NONE)),
        ]
        return m

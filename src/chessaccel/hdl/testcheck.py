"""TestCheck: is a square attacked by a colour? (model: sim/model/testcheck.py)

The square radiates the "super piece"; it is attacked when a piece of the attacking colour
receives the pattern of its own kind (pawns by their capture pattern). The array is built in the
attacker's relative frame, so its pawns always capture upwards. After a make the walker asks
about the mover's king with ``by`` = the side now to move: the move is legal when it is not
attacked.

The same pass gives the ``evasions``: each attacker's square and, for a slider, the ray between
it and the square. With the king of the side to move as the square, a move of any other piece
ends the check only onto one of them (or, taking a checking pawn en passant, onto the
en-passant square): the search core skips the other moves of a node in check without making
them (docs/fsm.md). The ray of direction d belongs to the evasions exactly when the first piece
it meets is an attacking slider of d's kind, so the per-ray hits that make ``attacked`` also
select the rays. ``neighbours`` are the squares a king's step from the square, which the super
piece radiates anyway: the reach of the king of the side to move, for the same filter.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import Color, PieceType, Position, Square

from .squarearray import (ROOK_DIR_INDICES, SQUARES, RelativeBoard, SuperPiece, onehot,
                          or_reduce, permute_mask, to_relative)

__all__ = ["TestCheck"]


class TestCheck(wiring.Component):
    """``attacked`` = a piece of colour ``by`` attacks ``square`` on ``position``;
    ``evasions`` (absolute squares) = the attackers and the squares between a slider and
    ``square``; ``neighbours`` = the squares a king's step from ``square``: combinational.

    Same answers as ``attacked`` and ``evasion_squares(board, square, by)`` of the model, and
    ``KING_TARGETS[square]``.
    """

    __test__ = False  # not a pytest test class despite its name

    position: In(Position)
    square: In(Square)
    by: In(Color)
    attacked: Out(1)
    evasions: Out(SQUARES)
    neighbours: Out(SQUARES)

    def elaborate(self, platform):
        m = Module()
        black = self.by == Color.BLACK
        board = RelativeBoard(m, self.position.squares, black, "check")
        target = Signal(SQUARES)
        m.d.comb += target.eq(onehot(to_relative(self.square, black)))
        radiated = SuperPiece(m, target, board.empty, "check_super")
        own = board.own
        sliders = {"rook": own[PieceType.ROOK] | own[PieceType.QUEEN],
                   "bishop": own[PieceType.BISHOP] | own[PieceType.QUEEN]}
        # a ray checks when the first piece it meets is a slider of its kind; the whole ray is
        # then an evasion
        hits = Signal(len(radiated.rays))
        lines = []
        for d, ray in enumerate(radiated.rays):
            kind = "rook" if d in ROOK_DIR_INDICES else "bishop"
            m.d.comb += hits[d].eq((ray & sliders[kind]).any())
            lines.append(ray & hits[d].replicate(SQUARES))
        jumpers = (own[PieceType.KNIGHT] & radiated.knight
                   | own[PieceType.PAWN] & radiated.pawn_capture
                   | own[PieceType.KING] & radiated.king)
        evasions = Signal(SQUARES)
        m.d.comb += [
            evasions.eq(or_reduce(lines) | jumpers),
            self.evasions.eq(permute_mask(evasions, black)),
            self.neighbours.eq(permute_mask(radiated.king, black)),
            self.attacked.eq(hits.any() | jumpers.any()),
        ]
        return m

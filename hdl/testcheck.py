"""TestCheck: is a square attacked by a colour? (model: sim/model/testcheck.py)

The square radiates the "super piece"; it is attacked when a piece of the attacking colour
receives the pattern of its own kind (pawns by their capture pattern). The array is built in the
attacker's relative frame, so its pawns always capture upwards. After a make the walker asks
about the mover's king with ``by`` = the side now to move: the move is legal when it is not
attacked.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.defs import Color, Position, Square

from .squarearray import SQUARES, RelativeBoard, SuperPiece, onehot, or_reduce, to_relative

__all__ = ["TestCheck"]


class TestCheck(wiring.Component):
    """``attacked`` = a piece of colour ``by`` attacks ``square`` on ``position``: combinational.

    Same answer as ``attacked(board, square, by)`` of the model.
    """

    __test__ = False  # not a pytest test class despite its name

    position: In(Position)
    square: In(Square)
    by: In(Color)
    attacked: Out(1)

    def elaborate(self, platform):
        m = Module()
        black = self.by == Color.BLACK
        board = RelativeBoard(m, self.position.squares, black, "check")
        target = Signal(SQUARES)
        m.d.comb += target.eq(onehot(to_relative(self.square, black)))
        radiated = SuperPiece(m, target, board.empty, "check_super")
        attackers = radiated.attackers(board.own)
        m.d.comb += self.attacked.eq(or_reduce(list(attackers.values())).any())
        return m

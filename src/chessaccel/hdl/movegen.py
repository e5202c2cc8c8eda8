"""MoveWalker: one node's legal moves in generation order (model: sim/model/movegen.py).

The block-level wrapper of the move generator, for tests and benchmarks, and the reference for
the search core's use of the blocks. Given a position, it walks the node exactly as the model's
``MovePicker`` does: GenVictim picks a victim; GenAggressor picks its aggressors one by one (least
valuable first); a victim with no aggressor left is disabled and the own squares re-enabled; a
pawn reaching the last rank is tried as Q, R, B, N; after the victims, castling kingside then
queenside when CastleStatus allows. Each pseudo-legal move is made on the Board, TestCheck looks
at the mover's king, and the move is unmade: the legal ones leave on the ``moves`` stream.

Per pseudo-legal move: FIND_AGGRESSOR, MAKE, TEST (3 clocks); per victim one more FIND_VICTIM
and one FIND_AGGRESSOR that finds nothing. After a move the victim is searched for again only
when the mask changed on a receiver square: disabling the aggressor's (own) square cannot change
GenVictim's answer, because own squares never raise a receiver class.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import (Color, GenStage, GenState, Move, PieceType, Position,
                             PROMOTION_ORDER, UndoRecord)
from chessaccel.contract.relative import CASTLE_KING_TO, KING_HOME

from .board import Board, BoardOp
from .castlestatus import CastleStatus
from .genaggressor import GenAggressor
from .genvictim import GenVictim
from .squarearray import SQUARES, onehot, own_squares, to_absolute
from .testcheck import TestCheck

__all__ = ["MoveWalker"]


class MoveWalker(wiring.Component):
    """Streams one node's legal moves, in the model's generation order.

    Pulse ``start`` with ``position`` and ``captures_only`` (quiescence: captures and en
    passant only, no castling): the Board loads the position and the walk begins. Legal moves
    leave on ``moves`` (a stream of Move: ``valid`` never waits for ``ready``; the walker holds
    the move, the board made, until ``ready``). ``done`` rises when the node is exhausted and
    stays high until the next ``start``. ``gen`` shows the generation state a search core keeps
    per ply.
    """

    start: In(1)
    position: In(Position)
    captures_only: In(1)

    moves: Out(stream.Signature(Move))
    done: Out(1)
    gen: Out(GenState)

    def elaborate(self, platform):
        m = Module()
        m.submodules.board = board = Board()
        m.submodules.victims = victims = GenVictim()
        m.submodules.aggressors = aggressors = GenAggressor()
        m.submodules.check = check = TestCheck()
        m.submodules.castle = castle = CastleStatus()

        gen = Signal(GenState)
        move = Signal(Move)
        moving = Signal(PieceType)   # the type of the piece ``move`` moves (MAKE needs it)
        castling_move = Signal()     # ``move`` is a castling
        undo = Signal(UndoRecord)
        m.d.comb += self.gen.eq(gen)

        here = board.position
        black = here.side == Color.BLACK
        own = own_squares(m, here)
        mover_black = ~black  # after a MAKE the side to move is the mover's opponent
        m.d.comb += [
            board.load_position.eq(self.position),
            board.move.eq(move),
            board.moving.eq(moving),
            board.castle.eq(castling_move),
            board.restore.eq(undo),
            victims.position.eq(here),
            victims.mask.eq(gen.mask),
            victims.captures_only.eq(gen.captures_only),
            aggressors.position.eq(here),
            aggressors.victim.eq(gen.victim),
            aggressors.mask.eq(gen.mask),
            aggressors.captures_only.eq(gen.captures_only),
            check.position.eq(here),
            check.square.eq(Mux(mover_black, board.king_squares[1], board.king_squares[0])),
            check.by.eq(here.side),
            castle.position.eq(here),
            self.moves.payload.eq(move),
        ]

        def castle_move(kingside):
            return [
                move.from_sq.eq(to_absolute(KING_HOME, black)),
                move.to_sq.eq(to_absolute(CASTLE_KING_TO[kingside], black)),
                move.promo.eq(PieceType.NONE),
                moving.eq(PieceType.KING),
                castling_move.eq(1),
            ]

        def begin_node():
            m.d.comb += board.op.eq(BoardOp.LOAD)
            m.d.sync += [
                gen.mask.eq(0),
                gen.stage.eq(GenStage.VICTIMS),
                gen.captures_only.eq(self.captures_only),
                gen.promoting.eq(0),
                gen.promo.eq(0),
            ]
            m.next = "FIND_VICTIM"

        promotion_rom = [p.value for p in PROMOTION_ORDER]
        next_promotion = Signal(PieceType)
        for i, piece in enumerate(promotion_rom):
            with m.If(gen.promo == i):
                m.d.comb += next_promotion.as_value().eq(piece)

        with m.FSM(name="walk"):
            with m.State("IDLE"):
                # wait for a position to walk
                with m.If(self.start):
                    begin_node()
            with m.State("FIND_VICTIM"):
                # GenVictim: the best receiver not disabled, or on to castling
                with m.If(victims.valid):
                    m.d.sync += gen.victim.eq(victims.victim)
                    m.next = "FIND_AGGRESSOR"
                with m.Elif(gen.captures_only):
                    m.d.sync += gen.stage.eq(GenStage.DONE)
                    m.next = "DONE"
                with m.Else():
                    m.d.sync += gen.stage.eq(GenStage.CASTLE_KINGSIDE)
                    m.next = "CASTLE_KINGSIDE"
            with m.State("FIND_AGGRESSOR"):
                # GenAggressor: the least valuable own piece reaching the victim, not disabled
                with m.If(aggressors.valid):
                    m.d.sync += [
                        gen.aggressor.eq(aggressors.aggressor),
                        move.from_sq.eq(aggressors.aggressor),
                        move.to_sq.eq(gen.victim),
                        moving.eq(aggressors.aggressor_type),
                        castling_move.eq(0),
                    ]
                    with m.If(aggressors.promotion):
                        m.d.sync += [
                            move.promo.eq(PROMOTION_ORDER[0]),
                            gen.promoting.eq(1),
                            gen.promo.eq(1),
                        ]
                    with m.Else():
                        m.d.sync += [
                            move.promo.eq(PieceType.NONE),
                            gen.mask.eq(gen.mask | onehot(aggressors.aggressor)),
                        ]
                    m.next = "MAKE"
                with m.Else():
                    # victim exhausted: disable it, give the own pieces back
                    m.d.sync += gen.mask.eq((gen.mask | onehot(gen.victim)) & ~own)
                    m.next = "FIND_VICTIM"
            with m.State("MAKE"):
                # Board: play the move, keep what unmake needs
                m.d.comb += board.op.eq(BoardOp.MAKE)
                m.d.sync += undo.eq(board.undo)
                m.next = "TEST"
            with m.State("TEST"):
                # TestCheck on the mover's king: offer the move if legal, then unmake
                m.d.comb += self.moves.valid.eq(~check.attacked)
                with m.If(check.attacked | self.moves.ready):
                    m.d.comb += board.op.eq(BoardOp.UNMAKE)
                    with m.Switch(gen.stage):
                        with m.Case(GenStage.VICTIMS):
                            with m.If(gen.promoting & (gen.promo != 0)):
                                m.d.sync += [
                                    move.promo.eq(next_promotion),
                                    gen.promo.eq(gen.promo + 1),
                                ]
                                m.next = "MAKE"
                            with m.Else():
                                with m.If(gen.promoting):
                                    m.d.sync += [
                                        gen.promoting.eq(0),
                                        gen.mask.eq(gen.mask | onehot(gen.aggressor)),
                                    ]
                                m.next = "FIND_AGGRESSOR"
                        with m.Case(GenStage.CASTLE_QUEENSIDE):
                            m.next = "CASTLE_QUEENSIDE"
                        with m.Default():
                            m.next = "DONE"
            with m.State("CASTLE_KINGSIDE"):
                # CastleStatus: try O-O if allowed
                m.d.sync += gen.stage.eq(GenStage.CASTLE_QUEENSIDE)
                with m.If(castle.kingside_ok):
                    m.d.sync += castle_move(True)
                    m.next = "MAKE"
                with m.Else():
                    m.next = "CASTLE_QUEENSIDE"
            with m.State("CASTLE_QUEENSIDE"):
                # CastleStatus: try O-O-O if allowed
                m.d.sync += gen.stage.eq(GenStage.DONE)
                with m.If(castle.queenside_ok):
                    m.d.sync += castle_move(False)
                    m.next = "MAKE"
                with m.Else():
                    m.next = "DONE"
            with m.State("DONE"):
                # node exhausted; a new start begins the next one
                m.d.comb += self.done.eq(1)
                with m.If(self.start):
                    begin_node()
        return m

"""Board: the accelerator's board register file (model: sim/model/board.py).

64 four-bit squares, the side to move, castling rights and the en-passant field, plus the two
king squares (kept as registers so TestCheck needs no search for the king). Each operation takes
one clock: LOAD a whole Position, MAKE a move (castling, en passant and promotion included) or
UNMAKE it given the UndoRecord its MAKE produced. No legality test is made here.

MAKE is told what its caller already knows: the type of the moving piece (``moving``: the
aggressor's type, the move generator found it) and whether the move is a castling (``castle``).
So the make never reads the from-square through a 64-way multiplexer, and its per-square logic
waits only on the decoded from-square: in the search core the from-square comes straight out of
the aggressor tree, at the end of the longest path of the cycle.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from chessaccel.defs import Color, Move, Piece, PieceType, Position, Square, UndoRecord
from chessaccel.geometry import CASTLE_CLEAR, EMPTY

__all__ = ["Board", "BoardOp", "KingSquares"]

SQUARES = 64
#: Rank (0-based, absolute) of the en-passant square when white / black is to move.
EP_RANK = {Color.WHITE: 5, Color.BLACK: 2}
CASTLE_STEP = 2         # files a castling king moves
PAWN_STEP = 8           # squares a pawn moves per rank
#: Rank (absolute) a pawn of each colour starts on, and the rank its double push reaches.
PAWN_START_RANK = {Color.WHITE: 1, Color.BLACK: 6}
DOUBLE_PUSH_RANK = {Color.WHITE: 3, Color.BLACK: 4}
KINGSIDE_KING_FILE = 6  # file a king castling kingside lands on
KINGSIDE_ROOK = (1, -1)  # rook's (from, to) offsets from the king's to-square, kingside
QUEENSIDE_ROOK = (-2, 1)

KingSquares = data.ArrayLayout(Square, 2)


class BoardOp(enum.Enum, shape=2):
    HOLD   = 0  # keep the board
    LOAD   = 1  # take ``load_position`` whole
    MAKE   = 2  # play ``move``
    UNMAKE = 3  # take back ``move``, given the ``restore`` record its MAKE gave


class Board(wiring.Component):
    """The board register file with one-clock make and unmake.

    ``position`` and ``king_squares`` (indexed by Color) show the current board. During a MAKE,
    ``undo`` shows the record that MAKE needs kept (combinational from the board and ``move``):
    store it and hand it back on ``restore`` with the UNMAKE of the same move. A MAKE also needs
    ``moving``, the type of the piece on the from-square, and ``castle``, high for a castling
    (the king's two-square move); both are ignored by the other operations.
    """

    op: In(BoardOp)
    load_position: In(Position)
    move: In(Move)
    moving: In(PieceType)
    castle: In(1)
    restore: In(UndoRecord)

    position: Out(Position)
    king_squares: Out(KingSquares)
    undo: Out(UndoRecord)

    def elaborate(self, platform):
        m = Module()
        state = Signal(Position)
        kings = Signal(KingSquares)
        m.d.comb += [self.position.eq(state), self.king_squares.eq(kings)]

        squares = state.squares
        black = state.side == Color.BLACK
        move = self.move
        frm, to = move.from_sq, move.to_sq
        promoting = move.promo != PieceType.NONE
        empty = Const(EMPTY, 4)
        # The pawn taken en passant stands behind the to-square, seen from the mover.
        taken = Signal(Square)
        m.d.comb += taken.eq(Mux(black, to + PAWN_STEP, to - PAWN_STEP))
        # Castling's rook squares follow from the king's to-square (g-file: kingside).
        kingside = Signal()
        rook_from = Signal(Square)
        rook_to = Signal(Square)
        m.d.comb += [
            kingside.eq(to[:3] == KINGSIDE_KING_FILE),
            rook_from.eq(Mux(kingside, to + KINGSIDE_ROOK[0], to + QUEENSIDE_ROOK[0])),
            rook_to.eq(Mux(kingside, to + KINGSIDE_ROOK[1], to + QUEENSIDE_ROOK[1])),
        ]

        def ep_square(ep, side_black):
            return Cat(ep.file, Mux(side_black, EP_RANK[Color.BLACK], EP_RANK[Color.WHITE]))

        # --- make --------------------------------------------------------------------------
        moving = Signal(Piece)
        promoted = Signal(Piece)
        captured = Signal(Piece)
        en_passant = Signal()
        pawn_moves = Signal()
        m.d.comb += [
            moving.type.eq(self.moving),
            moving.color.eq(state.side),
            pawn_moves.eq(self.moving == PieceType.PAWN),
            promoted.type.eq(move.promo),
            promoted.color.eq(state.side),
            en_passant.eq(pawn_moves & state.ep.valid & (to == ep_square(state.ep, black))),
            captured.eq(Mux(en_passant, squares[taken], squares[to])),
            self.undo.captured.eq(captured),
            self.undo.castling.eq(state.castling),
            self.undo.ep.eq(state.ep),
        ]
        placed = Mux(promoting, promoted, moving)
        rook = squares[rook_from]
        clear_rom = Array(Const(bits, 4) for bits in CASTLE_CLEAR)
        made = []
        for s in range(SQUARES):
            # the model's order of writes: later ones win
            v = squares[s].as_value()
            v = Mux(en_passant & (taken == s), empty, v)
            v = Mux(to == s, placed, v)
            v = Mux(self.castle & (rook_to == s), rook, v)
            v = Mux(self.castle & (rook_from == s), empty, v)
            v = Mux(frm == s, empty, v)   # last: the from-square decodes late
            made.append(v)
        # a pawn leaving its start rank for the rank two ahead
        def pushes_twice(color):
            return (frm[3:] == PAWN_START_RANK[color]) & (to[3:] == DOUBLE_PUSH_RANK[color])
        double_push = pawn_moves & Mux(black, pushes_twice(Color.BLACK), pushes_twice(Color.WHITE))

        # --- unmake ------------------------------------------------------------------------
        mover_black = ~black
        restored = self.restore
        taken_back = Signal(Square)  # the square the pawn taken en passant goes back to
        m.d.comb += taken_back.eq(Mux(mover_black, to + PAWN_STEP, to - PAWN_STEP))
        pawn_back = Signal(Piece)
        returning = Signal(Piece)
        back_en_passant = Signal()
        back_castling = Signal()
        m.d.comb += [
            pawn_back.type.eq(PieceType.PAWN),
            pawn_back.color.eq(mover_black),
            returning.eq(Mux(promoting, pawn_back, squares[to])),
            back_en_passant.eq((returning.type == PieceType.PAWN) & restored.ep.valid
                               & (to == ep_square(restored.ep, mover_black))),
            back_castling.eq((returning.type == PieceType.KING)
                             & ((to == frm + CASTLE_STEP) | (frm == to + CASTLE_STEP))),
        ]
        rook_back = squares[rook_to]
        unmade = []
        for s in range(SQUARES):
            v = squares[s].as_value()
            v = Mux(frm == s, returning, v)
            v = Mux(to == s, Mux(back_en_passant, empty, restored.captured), v)
            v = Mux(back_en_passant & (taken_back == s), restored.captured, v)
            v = Mux(back_castling & (rook_from == s), rook_back, v)
            v = Mux(back_castling & (rook_to == s), empty, v)
            unmade.append(v)

        with m.Switch(self.op):
            with m.Case(BoardOp.LOAD):
                m.d.sync += state.eq(self.load_position)
                for s in range(SQUARES):
                    piece = self.load_position.squares[s]
                    with m.If(piece.type == PieceType.KING):
                        with m.If(piece.color == Color.BLACK):
                            m.d.sync += kings[1].eq(s)
                        with m.Else():
                            m.d.sync += kings[0].eq(s)
            with m.Case(BoardOp.MAKE):
                m.d.sync += [
                    state.squares.eq(Cat(made)),
                    state.side.eq(Mux(black, Color.WHITE, Color.BLACK)),
                    state.castling.eq(state.castling.as_value() & ~(clear_rom[frm] | clear_rom[to])),
                    state.ep.valid.eq(double_push),
                    state.ep.file.eq(Mux(double_push, to[:3], 0)),
                ]
                with m.If(self.moving == PieceType.KING):
                    with m.If(black):
                        m.d.sync += kings[1].eq(to)
                    with m.Else():
                        m.d.sync += kings[0].eq(to)
            with m.Case(BoardOp.UNMAKE):
                m.d.sync += [
                    state.squares.eq(Cat(unmade)),
                    state.side.eq(Mux(black, Color.WHITE, Color.BLACK)),
                    state.castling.eq(restored.castling),
                    state.ep.eq(restored.ep),
                ]
                with m.If(returning.type == PieceType.KING):
                    with m.If(mover_black):
                        m.d.sync += kings[1].eq(frm)
                    with m.Else():
                        m.d.sync += kings[0].eq(frm)
        return m

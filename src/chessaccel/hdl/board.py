"""Board: the accelerator's board register file (model: sim/model/board.py).

64 four-bit squares, the side to move, castling rights and the en-passant field, plus the two
king squares (kept as registers so TestCheck needs no search for the king). Each operation takes
one clock: LOAD a whole Position, MAKE a move (castling, en passant and promotion included) or
UNMAKE it given the UndoRecord its MAKE produced. No legality test is made here.

The registers hold the position *seen from the side to move* (the normalised position): square
``r`` holds the piece on ``r ^ MIRROR`` when black is to move, own pieces are coded WHITE and the
enemy's BLACK, own castling rights sit in the white fields. The normalised position is a
position with white to move that every block reads exactly as it reads an absolute one, with a
constant side: the side-to-move multiplexers of the move generators (RelativeBoard), of Evaluate
and of the make itself fold away. A MAKE is the model's make with white moving, followed by the
side flip, which is wiring: squares mirrored (``r ^ MIRROR``), colours swapped, castling fields
swapped. An UNMAKE flips first, then takes the white move back. The absolute side is kept in one
register beside, for those who must show absolute squares.

``relative=True`` (the search core) shows the normalised position and takes moves, undo records
and king squares in the frame of the mover; ``relative=False`` (the default: the MoveWalker, the
tests) converts at the ports, so the Board looks absolute from outside, as the model's does.

MAKE is told what its caller already knows: the type of the moving piece (``moving``: the
aggressor's type, the move generator found it) and whether the move is a castling (``castle``).
So the make never reads the from-square through a 64-way multiplexer, and its per-square logic
waits only on the decoded from-square: in the search core the from-square comes straight out of
the aggressor tree, at the end of the longest path of the cycle.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import Color, Move, Piece, PieceType, Position, Square, UndoRecord
from chessaccel.contract.geometry import EMPTY
from chessaccel.contract.relative import (CASTLE_CLEAR, CASTLE_KING_FILE, CASTLE_ROOK_SQUARES,
                                          CASTLE_STEP, DOUBLE_PUSH_RANK, EP_RANK, MIRROR,
                                          PAWN_START_RANK)

from .interleave import Interleave
from .squarearray import mirror_square, square_on

__all__ = ["Board", "BoardOp", "KingSquares", "flip_squares", "flip_castling", "king_squares_of"]

SQUARES = 64

KingSquares = data.ArrayLayout(Square, 2)


class BoardOp(enum.Enum, shape=2):
    HOLD   = 0  # keep the board
    LOAD   = 1  # take ``load_position`` whole
    MAKE   = 2  # play ``move``
    UNMAKE = 3  # take back ``move``, given the ``restore`` record its MAKE gave


def king_squares_of(m, position, name):
    """The square of each colour's king on ``position`` (absolute; a list indexed by Color): a
    scan of the 64 squares in module ``m``, the last king found winning where there are several
    (a position the search core then refuses)."""
    kings = [Signal(Square, name=f"{name}_{c.name.lower()}") for c in Color]
    for s in range(SQUARES):
        piece = position.squares[s]
        with m.If(piece.type == PieceType.KING):
            with m.If(piece.color == Color.BLACK):
                m.d.comb += kings[1].eq(s)
            with m.Else():
                m.d.comb += kings[0].eq(s)
    return kings


def _recolor(piece, flip):
    """A piece's 4-bit code with its colour swapped when ``flip`` (empty squares stay empty)."""
    piece = piece.as_value() if hasattr(piece, "as_value") else piece
    kind = piece[:3]
    return Cat(kind, piece[3] ^ (flip & kind.any()))


def flip_squares(squares):
    """The 64 squares seen from the other side: mirrored ranks, colours swapped (wiring, and
    one gate per colour bit). ``squares`` is a list of 4-bit Values; so is the result."""
    return [_recolor(squares[r ^ MIRROR], Const(1, 1)) for r in range(SQUARES)]


def flip_castling(castling):
    """Castling rights seen from the other side: white and black fields swapped."""
    bits = castling.as_value() if hasattr(castling, "as_value") else castling
    return Cat(bits[2:4], bits[0:2])


class Board(wiring.Component):
    """The board register file with one-clock make and unmake.

    ``position`` and ``king_squares`` (indexed by Color) show the current board; ``side`` the
    absolute side to move. During a MAKE, ``undo`` shows the record that MAKE needs kept
    (combinational from the board and ``move``): store it and hand it back on ``restore`` with
    the UNMAKE of the same move. A MAKE also needs ``moving``, the type of the piece on the
    from-square, and ``castle``, high for a castling (the king's two-square move); both are
    ignored by the other operations.

    ``relative``: ``position`` is the normalised position (white to move, own pieces white),
    ``king_squares`` are (own, enemy) in that frame, and ``move``, ``undo`` and ``restore`` are in
    the frame of the mover (the side to move at a MAKE, its opponent at an UNMAKE). Otherwise all
    are absolute, as in the model. ``load_position`` is absolute either way.

    ``relative`` also gives UNMAKE its own ports, ``unmake_move`` and ``unmake_moving`` (the type
    of the piece that moved: a promotion's pawn is known from the move): the search core knows
    the move a MAKE would play and the move an UNMAKE would take back before it knows which of
    the two it does, so each operation's per-square logic waits on its own move and only the
    late ``op`` chooses between them. Otherwise UNMAKE takes back ``move`` and reads the piece
    from its to-square.

    ``kings_given``: LOAD takes the king squares of ``load_position`` on ``load_kings``
    (absolute, indexed by Color: ``king_squares_of``) instead of scanning the 64 squares for
    them; the two-thread search core scans its job port a cycle before the load.

    ``threads=2`` (the search core interleaving two jobs, hdl/interleave.py; relative only): each
    register is a pair, the ports and the make read the second copy, and ``early_position`` and
    ``early_king_squares`` show the first (the move generator's view); with one thread they are
    ``position`` and ``king_squares``.
    """

    def __init__(self, relative=False, threads=1, kings_given=False):
        if threads != 1 and not relative:
            raise ValueError("an interleaved Board (threads > 1) is the search core's: "
                             "relative=True")
        self.relative = relative
        self.threads = threads
        self.kings_given = kings_given
        ports = {
            "op": In(BoardOp), "load_position": In(Position), "move": In(Move),
            "moving": In(PieceType), "castle": In(1), "restore": In(UndoRecord),
            "position": Out(Position), "side": Out(Color), "king_squares": Out(KingSquares),
            "undo": Out(UndoRecord),
            "early_position": Out(Position), "early_king_squares": Out(KingSquares),
        }
        if relative:
            ports.update(unmake_move=In(Move), unmake_moving=In(PieceType))
        if kings_given:
            ports["load_kings"] = In(KingSquares)
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        # the normalised position (its side field unused: white is to move) and the real side;
        # with interleaved threads (hdl/interleave.py) each register is a pair: the ports and
        # the make read the second copy (``now``), ``early_*`` show the first
        lanes = Interleave(m, self.threads)
        staged_state = lanes.register(Position, "state")
        staged_black = lanes.register(1, "black")
        staged_kings = lanes.register(KingSquares, "kings")
        state, black, kings = staged_state.now, staged_black.now, staged_kings.now
        next_state, next_black, next_kings = (staged_state.next, staged_black.next,
                                              staged_kings.next)
        squares = [state.squares[s].as_value() for s in range(SQUARES)]
        flipped = flip_squares(squares)
        empty = Const(EMPTY, 4)
        white = Const(Color.WHITE.value, 1)

        # --- the ports, in the frame asked for ---------------------------------------------
        # the mover: the side to move at a MAKE, the other at an UNMAKE
        mover_black = Mux(self.op == BoardOp.UNMAKE, ~black, black)
        if self.relative:
            move = self.move
            back = self.unmake_move
            restore = self.restore
            m.d.comb += [
                self.position.squares.eq(state.squares),
                self.position.side.eq(Color.WHITE),
                self.position.castling.eq(state.castling),
                self.position.ep.eq(state.ep),
                self.king_squares.eq(kings),
                self.early_position.squares.eq(staged_state.early.squares),
                self.early_position.side.eq(Color.WHITE),
                self.early_position.castling.eq(staged_state.early.castling),
                self.early_position.ep.eq(staged_state.early.ep),
                self.early_king_squares.eq(staged_kings.early),
            ]
        else:
            move = back = Signal(Move)
            restore = Signal(UndoRecord)
            m.d.comb += [
                move.from_sq.eq(mirror_square(self.move.from_sq, mover_black)),
                move.to_sq.eq(mirror_square(self.move.to_sq, mover_black)),
                move.promo.eq(self.move.promo),
                restore.captured.eq(_recolor(self.restore.captured, mover_black)),
                restore.castling.eq(Mux(mover_black, flip_castling(self.restore.castling),
                                        self.restore.castling)),
                restore.ep.eq(self.restore.ep),
                self.position.squares.eq(Mux(black, Cat(flipped), state.squares)),
                self.position.side.eq(black),
                self.position.castling.eq(Mux(black, flip_castling(state.castling),
                                              state.castling)),
                self.position.ep.eq(state.ep),
                self.king_squares[0].eq(Mux(black, mirror_square(kings[1], Const(1, 1)),
                                            kings[0])),
                self.king_squares[1].eq(Mux(black, mirror_square(kings[0], Const(1, 1)),
                                            kings[1])),
                self.early_position.eq(self.position),   # one thread: the same registers
                self.early_king_squares.eq(self.king_squares),
            ]
        m.d.comb += self.side.eq(black)

        frm, to = move.from_sq.as_value(), move.to_sq.as_value()
        promoting = move.promo != PieceType.NONE
        # White moves, so every special square is on a known rank: the pawn taken en passant
        # stands on rank 4 behind the en-passant square (rank 5), and a castling king goes from
        # e1 to g1 or c1 with its rook from h1 to f1 or a1 to d1. A square built from a file and
        # a constant rank decodes in one compare, and a piece on it is read from one of a few
        # squares, not through a 64-way multiplexer behind an adder.
        def special_squares(to, name):
            """What a white move to ``to`` (a Square) implies: the square behind it (where a pawn
            taken en passant stands), and for a castling king, the side and the rook's
            squares."""
            kingside = Signal(name=f"{name}_kingside")
            m.d.comb += kingside.eq(to.file == CASTLE_KING_FILE[True])
            (k_from, k_to), (q_from, q_to) = CASTLE_ROOK_SQUARES[True], CASTLE_ROOK_SQUARES[False]
            return (square_on(to.file, EP_RANK - 1), kingside,
                    Mux(kingside, k_from, q_from), Mux(kingside, k_to, q_to))

        def rook_on(squares, kingside, home):
            """The piece on the castling rook's ``home`` square (0: from, 1: to)."""
            (k, q) = (CASTLE_ROOK_SQUARES[True][home], CASTLE_ROOK_SQUARES[False][home])
            return Mux(kingside, squares[k], squares[q])

        taken, kingside, rook_from, rook_to = special_squares(move.to_sq, "make")
        rank_behind = Array(squares[s] for s in range(8 * (EP_RANK - 1), 8 * EP_RANK))

        def ep_square(ep):
            return square_on(ep.file, EP_RANK)

        # --- make: white (the side to move) plays, then the side flip ---------------------
        moving = Signal(Piece)
        promoted = Signal(Piece)
        captured = Signal(Piece)
        en_passant = Signal()
        pawn_moves = Signal()
        undo = Signal(UndoRecord)
        m.d.comb += [
            moving.type.eq(self.moving),
            moving.color.eq(white),
            pawn_moves.eq(self.moving == PieceType.PAWN),
            promoted.type.eq(move.promo),
            promoted.color.eq(white),
            en_passant.eq(pawn_moves & state.ep.valid & (to == ep_square(state.ep))),
            captured.eq(Mux(en_passant, rank_behind[move.to_sq.file], state.squares[to])),
            undo.captured.eq(captured),
            undo.castling.eq(state.castling),
            undo.ep.eq(state.ep),
        ]
        if self.relative:
            m.d.comb += self.undo.eq(undo)
        else:
            m.d.comb += [
                self.undo.captured.eq(_recolor(undo.captured, black)),
                self.undo.castling.eq(Mux(black, flip_castling(undo.castling), undo.castling)),
                self.undo.ep.eq(undo.ep),
            ]
        placed = Mux(promoting, promoted, moving)
        rook = rook_on(squares, kingside, 0)
        clear_rom = Array(Const(bits, 4) for bits in CASTLE_CLEAR)
        made = []
        for s in range(SQUARES):
            # the model's order of writes: later ones win
            v = squares[s]
            v = Mux(en_passant & (taken == s), empty, v)
            v = Mux(to == s, placed, v)
            v = Mux(self.castle & (rook_to == s), rook, v)
            v = Mux(self.castle & (rook_from == s), empty, v)
            v = Mux(frm == s, empty, v)   # last: the from-square decodes late
            made.append(v)
        # a pawn leaving its start rank for the rank two ahead
        double_push = (pawn_moves & (move.from_sq.rank == PAWN_START_RANK)
                       & (move.to_sq.rank == DOUBLE_PUSH_RANK))
        made_castling = state.castling.as_value() & ~(clear_rom[frm] | clear_rom[to])
        made_king = Mux(self.moving == PieceType.KING, to, kings[0])

        # --- unmake: flip back (black to move, white the mover), then take the move back ----
        # (its own move port in the relative board: ``back``)
        parent = Signal(data.ArrayLayout(Piece, SQUARES))
        m.d.comb += parent.eq(Cat(flipped))
        back_from, back_to = back.from_sq.as_value(), back.to_sq.as_value()
        # the piece that moved, back from its to-square: the relative board is told its type
        # (``unmake_moving``), so the take-back reads no square through a 64-way multiplexer
        if self.relative:
            moved_back = Signal(Piece)
            m.d.comb += [moved_back.type.eq(self.unmake_moving), moved_back.color.eq(white)]
        else:
            moved_back = parent[back_to]
        # taken_back: the square the pawn taken en passant goes back to
        taken_back, back_kingside, back_rook_from, back_rook_to = special_squares(back.to_sq,
                                                                                  "unmake")
        pawn_back = Signal(Piece)
        returning = Signal(Piece)
        back_en_passant = Signal()
        back_castling = Signal()
        m.d.comb += [
            pawn_back.type.eq(PieceType.PAWN),
            pawn_back.color.eq(white),
            returning.eq(Mux(back.promo != PieceType.NONE, pawn_back, moved_back)),
            back_en_passant.eq((returning.type == PieceType.PAWN) & restore.ep.valid
                               & (back_to == ep_square(restore.ep))),
            back_castling.eq((returning.type == PieceType.KING)
                             & ((back_to == back_from + CASTLE_STEP)
                                | (back_from == back_to + CASTLE_STEP))),
        ]
        rook_back = rook_on(parent, back_kingside, 1)
        unmade = []
        for s in range(SQUARES):
            v = parent[s].as_value()
            v = Mux(back_from == s, returning, v)
            v = Mux(back_to == s, Mux(back_en_passant, empty, restore.captured), v)
            v = Mux(back_en_passant & (taken_back == s), restore.captured, v)
            v = Mux(back_castling & (back_rook_from == s), rook_back, v)
            v = Mux(back_castling & (back_rook_to == s), empty, v)
            unmade.append(v)
        # the kings before the flip back: the mover's (own) is the enemy's of the child
        parent_king = Mux(returning.type == PieceType.KING, back_from,
                          mirror_square(kings[1], Const(1, 1)))

        # --- LOAD: the absolute position normalised ----------------------------------------
        load = self.load_position
        load_black = load.side == Color.BLACK
        load_squares = [load.squares[s].as_value() for s in range(SQUARES)]
        if self.kings_given:
            load_kings = [self.load_kings[c.value] for c in Color]
        else:
            load_kings = king_squares_of(m, load, "load_king")

        with m.Switch(self.op):
            with m.Case(BoardOp.LOAD):
                m.d.comb += [
                    next_state.squares.eq(Mux(load_black, Cat(flip_squares(load_squares)),
                                              Cat(load_squares))),
                    next_state.castling.eq(Mux(load_black, flip_castling(load.castling),
                                               load.castling)),
                    next_state.ep.eq(load.ep),
                    next_black.eq(load_black),
                    next_kings[0].eq(Mux(load_black, mirror_square(load_kings[1], Const(1, 1)),
                                         load_kings[0])),
                    next_kings[1].eq(Mux(load_black, mirror_square(load_kings[0], Const(1, 1)),
                                         load_kings[1])),
                ]
            with m.Case(BoardOp.MAKE):
                m.d.comb += [
                    next_state.squares.eq(Cat(flip_squares(made))),
                    next_state.castling.eq(flip_castling(made_castling)),
                    next_state.ep.valid.eq(double_push),
                    next_state.ep.file.eq(Mux(double_push, move.to_sq.file, 0)),
                    next_black.eq(~black),
                    next_kings[0].eq(mirror_square(kings[1], Const(1, 1))),
                    next_kings[1].eq(mirror_square(made_king, Const(1, 1))),
                ]
            with m.Case(BoardOp.UNMAKE):
                m.d.comb += [
                    next_state.squares.eq(Cat(unmade)),
                    next_state.castling.eq(restore.castling),
                    next_state.ep.eq(restore.ep),
                    next_black.eq(~black),
                    next_kings[0].eq(parent_king),
                    next_kings[1].eq(mirror_square(kings[0], Const(1, 1))),
                ]
        return m

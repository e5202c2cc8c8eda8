"""Board: the model of the accelerator's board register file (hdl/board.py).

64 four-bit squares, the side to move, castling rights and the en-passant square, with make and
unmake of any move. ``make`` returns the undo record the SearchStack keeps for the ply.
"""

from dataclasses import dataclass

from chessaccel.contract.defs import CastlingRights, Color, EnPassant, Piece, PieceType, Position
from chessaccel.contract.geometry import (CODE, TYPE_OF, COLOR_OF, EMPTY, file_of, rank_of, square,
                                          ep_pack)
from chessaccel.contract.relative import (CASTLE_CLEAR, CASTLE_ROOK_MOVE, CASTLE_STEP, EP_RANK,
                                          PAWN_STEP, relative)

__all__ = ["Board", "Undo"]

PAWN, KING, ROOK = PieceType.PAWN.value, PieceType.KING.value, PieceType.ROOK.value


@dataclass(frozen=True)
class Undo:
    """What unmake needs that the move does not say: kept per ply in the SearchStack."""
    captured: int       # code of the piece taken (the en-passant pawn included), EMPTY if none
    castling: int       # castling rights before the move
    ep: object          # en-passant square before the move (or None)


class Board:
    __slots__ = ("sq", "side", "castling", "ep", "kings")

    def __init__(self, squares, side, castling, ep):
        self.sq = list(squares)
        self.side = side
        self.castling = castling
        self.ep = ep
        self.kings = [None, None]
        for s, code in enumerate(self.sq):
            if code != EMPTY and TYPE_OF[code] == KING:
                self.kings[COLOR_OF[code]] = s

    # --- conversion -------------------------------------------------------------------------

    @classmethod
    def from_bits(cls, bits):
        """The board of a packed ``Position`` (as the accelerator receives it in a job)."""
        pos = Position.from_bits(bits)
        squares = [pos.squares[i].as_value().value for i in range(64)]
        side = pos.side.value
        castling = pos.castling.as_value().value
        ep = None
        if pos.ep.valid:
            ep = relative(square(int(pos.ep.file), EP_RANK), side)
        return cls(squares, side, castling, ep)

    def to_bits(self):
        """The packed ``Position`` of this board (the job's position field)."""
        return Position.const({
            "squares": [Piece.from_bits(code) for code in self.sq],
            "side": Color(self.side),
            "castling": CastlingRights.from_bits(self.castling),
            "ep": EnPassant.from_bits(ep_pack(self.ep)),
        }).as_value().value

    def copy(self):
        b = Board.__new__(Board)
        b.sq = list(self.sq)
        b.side, b.castling, b.ep, b.kings = self.side, self.castling, self.ep, list(self.kings)
        return b

    def key(self):
        return (tuple(self.sq), self.side, self.castling, self.ep)

    def king_count(self, color):
        """How many kings of ``color`` stand on the board (a job needs exactly one each)."""
        return self.sq.count(CODE[color][KING])

    def own_mask(self):
        """64-bit word of the squares holding a piece of the side to move."""
        m = 0
        side = self.side
        for s, code in enumerate(self.sq):
            if code != EMPTY and COLOR_OF[code] == side:
                m |= 1 << s
        return m

    # --- make / unmake ----------------------------------------------------------------------

    def make(self, move):
        """Play ``move`` (from, to, promo) and return the Undo record. No legality test here."""
        f, t, promo = move
        sq = self.sq
        piece = sq[f]
        ptype = TYPE_OF[piece]
        captured = sq[t]
        undo_castling, undo_ep = self.castling, self.ep
        if ptype == PAWN and t == self.ep:
            # en passant: the pawn taken stands beside the from-square, on the to-square's file
            taken = square(file_of(t), rank_of(f))
            captured = sq[taken]
            sq[taken] = EMPTY
        sq[t] = CODE[self.side][promo] if promo else piece
        sq[f] = EMPTY
        if ptype == KING:
            self.kings[self.side] = t
            if abs(t - f) == CASTLE_STEP:
                rook_from, rook_to = CASTLE_ROOK_MOVE[t]
                sq[rook_to] = sq[rook_from]
                sq[rook_from] = EMPTY
        self.castling &= ~(CASTLE_CLEAR[f] | CASTLE_CLEAR[t])
        self.ep = (f + t) // 2 if ptype == PAWN and abs(t - f) == 2 * PAWN_STEP else None
        self.side ^= 1
        return Undo(captured, undo_castling, undo_ep)

    def unmake(self, move, undo):
        f, t, promo = move
        self.side ^= 1
        sq = self.sq
        piece = CODE[self.side][PAWN] if promo else sq[t]
        ptype = TYPE_OF[piece]
        sq[f] = piece
        if ptype == PAWN and t == undo.ep:
            sq[t] = EMPTY
            sq[square(file_of(t), rank_of(f))] = undo.captured
        else:
            sq[t] = undo.captured
        if ptype == KING:
            self.kings[self.side] = f
            if abs(t - f) == CASTLE_STEP:
                rook_from, rook_to = CASTLE_ROOK_MOVE[t]
                sq[rook_from] = sq[rook_to]
                sq[rook_to] = EMPTY
        self.castling = undo.castling
        self.ep = undo.ep

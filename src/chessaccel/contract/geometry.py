"""Board geometry and piece-code tables computed once from the shapes in ``defs``.

These are the elaboration-time tables of the hardware (which square a ray reaches next, which
squares a knight jumps to) and the fast lookups of the Python model. Piece codes are read back
through ``Piece.from_bits`` so the model never restates the bit layout. Absolute geometry only:
the side-relative frame (the mirror, the pawn step, the special ranks and castling squares) is
contract/relative.py.
"""

from .defs import Color, Piece, PieceType, CastlingRights, Move, EnPassant

__all__ = [
    "square", "file_of", "rank_of", "square_name", "parse_square",
    "KNIGHT_STEPS", "KING_STEPS", "ROOK_DIRS", "BISHOP_DIRS", "QUEEN_DIRS",
    "step", "ray", "KNIGHT_TARGETS", "KING_TARGETS", "RAYS",
    "CODE", "TYPE_OF", "COLOR_OF", "EMPTY", "CASTLE_BIT",
    "pack_move", "unpack_move", "move_uci", "ep_pack",
]


def square(file, rank):
    return rank * 8 + file


def file_of(sq):
    return sq % 8


def rank_of(sq):
    return sq // 8


def square_name(sq):
    return "abcdefgh"[file_of(sq)] + "12345678"[rank_of(sq)]


def parse_square(name):
    return square("abcdefgh".index(name[0]), "12345678".index(name[1]))


# (file, rank) steps
KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
KING_STEPS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
ROOK_DIRS = ((0, 1), (1, 0), (0, -1), (-1, 0))
BISHOP_DIRS = ((1, 1), (1, -1), (-1, -1), (-1, 1))
QUEEN_DIRS = ROOK_DIRS + BISHOP_DIRS


def step(sq, df, dr):
    """The square reached from ``sq`` by one (file, rank) step, or None off the board."""
    f, r = file_of(sq) + df, rank_of(sq) + dr
    return square(f, r) if 0 <= f < 8 and 0 <= r < 8 else None


def ray(sq, df, dr):
    """Squares from ``sq`` (exclusive) to the board's edge in one direction, nearest first."""
    out = []
    s = step(sq, df, dr)
    while s is not None:
        out.append(s)
        s = step(s, df, dr)
    return tuple(out)


KNIGHT_TARGETS = tuple(tuple(t for t in (step(s, *d) for d in KNIGHT_STEPS) if t is not None)
                       for s in range(64))
KING_TARGETS = tuple(tuple(t for t in (step(s, *d) for d in KING_STEPS) if t is not None)
                     for s in range(64))
#: RAYS[sq][direction] for the eight QUEEN_DIRS, rook directions first.
RAYS = tuple(tuple(ray(s, *d) for d in QUEEN_DIRS) for s in range(64))


# --- piece codes ----------------------------------------------------------------------------

def _code(ptype, color):
    return Piece.const({"type": ptype, "color": color}).as_value().value


#: CODE[color][type] is the 4-bit square code (color and type as ints).
CODE = tuple(tuple(_code(PieceType(t), Color(c)) for t in range(7)) for c in range(2))
EMPTY = _code(PieceType.NONE, Color.WHITE)
#: TYPE_OF[code] and COLOR_OF[code], for the 14 codes that stand for a piece or an empty square.
TYPE_OF = {CODE[c][t]: t for c in range(2) for t in range(7)}
COLOR_OF = {CODE[c][t]: c for c in range(2) for t in range(7)}
TYPE_OF = tuple(TYPE_OF.get(code, 0) for code in range(16))
COLOR_OF = tuple(COLOR_OF.get(code, 0) for code in range(16))

#: Bit of each castling right in the packed CastlingRights value, by (color, kingside).
CASTLE_BIT = {
    (Color.WHITE.value, True):  CastlingRights.const({"white_kingside": 1}).as_value().value,
    (Color.WHITE.value, False): CastlingRights.const({"white_queenside": 1}).as_value().value,
    (Color.BLACK.value, True):  CastlingRights.const({"black_kingside": 1}).as_value().value,
    (Color.BLACK.value, False): CastlingRights.const({"black_queenside": 1}).as_value().value,
}

# --- moves ----------------------------------------------------------------------------------

def pack_move(from_sq, to_sq, promo=0):
    return Move.const({"from_sq": from_sq, "to_sq": to_sq,
                       "promo": PieceType(promo)}).as_value().value


def unpack_move(bits):
    m = Move.from_bits(bits)
    return m.from_sq.as_value().value, m.to_sq.as_value().value, m.promo.value


_PROMO_LETTER = {PieceType.KNIGHT.value: "n", PieceType.BISHOP.value: "b",
                 PieceType.ROOK.value: "r", PieceType.QUEEN.value: "q"}


def move_uci(move):
    """UCI text of a model move tuple (from, to, promo)."""
    f, t, p = move
    return square_name(f) + square_name(t) + _PROMO_LETTER.get(p, "")


def ep_pack(ep_square):
    """EnPassant field of a square (or None)."""
    if ep_square is None:
        return EnPassant.const({"file": 0, "valid": 0}).as_value().value
    return EnPassant.const({"file": file_of(ep_square), "valid": 1}).as_value().value

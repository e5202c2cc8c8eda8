"""Shared definitions of chessaccel: one copy, used by hdl/, sim/, host/ and tests/.

Every packed value that crosses a boundary (hardware <-> model <-> host <-> link) is an
Amaranth shape defined here. The RTL uses the shapes directly; Python code packs with
``Layout.const({...}).as_value().value`` and unpacks with ``Layout.from_bits(int)``, so no bit
position is written twice anywhere in the project. docs/semantics.md is the prose contract.

Squares are numbered a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ..., h8 = 63 (``rank * 8 + file``):
a ``Square`` holds its file in the low three bits and its rank in the high three.
"""

from amaranth.hdl import signed, unsigned
from amaranth.lib import data, enum

__all__ = [
    "Color", "PieceType", "Piece", "Square", "Move", "CastlingRights", "EnPassant", "Position",
    "VictimClass", "Mode", "Status", "Score", "SearchJob", "SearchResult",
    "MATE", "INF", "EVAL_MAX", "MAX_PLY", "MAX_DEPTH", "NODE_BITS", "CYCLE_BITS",
    "PROMOTION_ORDER", "NO_MOVE",
]


# --- limits of the accelerator --------------------------------------------------------------

#: Deepest ply the SearchStack holds; a node at this ply is evaluated, never expanded.
MAX_PLY = 32
#: Deepest full-width depth a job may ask for (search and perft alike).
MAX_DEPTH = 8
#: Width of the node counter returned in a result. 64 bits never wrap on a job the core accepts:
#: a perft count is at most 218 ** MAX_DEPTH < 2 ** 63 (218 legal moves is the most any
#: position has), and 2 ** 64 search nodes would take the core tens of thousands of years.
NODE_BITS = 64
#: Width of the cycle counter returned in a result.
CYCLE_BITS = 48

#: Score of "mated now" (negated, less the ply, for the side that is mated).
MATE = 32000
#: Widest window bound; the full window is (-INF, INF).
INF = 32767
#: Static evaluations are clamped to +-EVAL_MAX so they never look like mate scores.
EVAL_MAX = 20000

Score = signed(16)


class Square(data.Struct):
    """A square: ``file`` (a = 0 .. h = 7) in the low three bits, ``rank`` (1 = 0 .. 8 = 7) in
    the high three, so its 6-bit value is the square's number ``rank * 8 + file``.

    The hardware compares and decodes the number whole (``as_value()``) and reads ``file`` and
    ``rank`` where it means one of them. A constant may be given as the square's number (the
    model's ``int``, e.g. ``Move.const({"from_sq": 12, ...})``) or as its fields.
    """
    file: unsigned(3)
    rank: unsigned(3)

    @classmethod
    def const(cls, init):
        if isinstance(init, int):
            if init not in range(64):
                raise ValueError(f"square number {init} is not in 0..63")
            init = {"file": init % 8, "rank": init // 8}
        return type(cls).const(cls, init)   # the Struct's own const (a method of its metaclass)


# --- pieces ---------------------------------------------------------------------------------

class Color(enum.Enum, shape=1):
    WHITE = 0
    BLACK = 1


class PieceType(enum.Enum, shape=3):
    """Piece kinds in ascending value: the aggressor order (pawn first, king last)."""
    NONE   = 0
    PAWN   = 1
    KNIGHT = 2
    BISHOP = 3
    ROOK   = 4
    QUEEN  = 5
    KING   = 6


class Piece(data.Struct):
    """The 4-bit code held by one square of the Board register file (0 = empty)."""
    type:  PieceType
    color: Color


#: Promotions of one pawn move are tried in this order.
PROMOTION_ORDER = (PieceType.QUEEN, PieceType.ROOK, PieceType.BISHOP, PieceType.KNIGHT)


class Move(data.Struct):
    """A packed move: from-square, to-square and, for promotions, the piece promoted to.

    Castling is the king's two-square move (e1g1); en passant is the pawn's diagonal move to the
    en-passant square. Both are recognised from the board, so they need no flag bits.
    """
    from_sq: Square
    to_sq:   Square
    promo:   PieceType


#: The all-zero move (a1a1) stands for "no move" (no legal move at the root, or none yet).
NO_MOVE = 0


class CastlingRights(data.Struct):
    white_kingside:  1
    white_queenside: 1
    black_kingside:  1
    black_queenside: 1


class EnPassant(data.Struct):
    """File of the square a double pawn push just passed over; its rank follows from the side."""
    file:  3
    valid: 1


class Position(data.Struct):
    """Everything the accelerator knows of a position (no repetition, no fifty-move counter)."""
    squares:  data.ArrayLayout(Piece, 64)
    side:     Color
    castling: CastlingRights
    ep:       EnPassant


# --- move generation ------------------------------------------------------------------------

class VictimClass(enum.Enum, shape=3):
    """Priority a square's receiver raises in GenVictim; the highest class is searched first.

    A capture target ranks by the value of the piece on it (``PieceType + 1``); the en-passant
    square, when an own pawn attacks it, ranks as a pawn; any other empty square that an own
    piece can move to ranks QUIET. ``KING`` would mean the previous move was illegal and never
    arises at a node of a legal search.
    """
    NONE   = 0
    QUIET  = 1
    PAWN   = 2
    KNIGHT = 3
    BISHOP = 4
    ROOK   = 5
    QUEEN  = 6
    KING   = 7


# --- jobs and results -----------------------------------------------------------------------

class Mode(enum.Enum, shape=1):
    SEARCH = 0
    PERFT  = 1


class Status(enum.Enum, shape=3):
    IDLE    = 0  # no job yet
    BUSY    = 1  # a job is running
    DONE    = 2  # the result is valid
    ABORTED = 3  # the job was stopped by ABORT; the result fields mean nothing
    BAD_JOB = 4  # depth out of range or a position the core cannot hold


class SearchJob(data.Struct):
    position: Position
    depth:    4
    alpha:    Score
    beta:     Score
    mode:     Mode


class SearchResult(data.Struct):
    score:     Score
    best_move: Move
    nodes:     NODE_BITS
    cycles:    CYCLE_BITS
    status:    Status


# --- move generation: per-ply records (hardware move generator, issue 3) ---------------------
# Appended by the move-generation engineer; hdl/board.py and hdl/movegen.py produce these and the
# SearchStack stores them per ply.

class UndoRecord(data.Struct):
    """What unmake needs that the move does not say (the model's ``board.Undo``).

    ``captured`` is the piece taken (the en-passant pawn included; empty for a quiet move);
    ``castling`` and ``ep`` are the rights and en-passant field before the move.
    """
    captured: Piece
    castling: CastlingRights
    ep:       EnPassant


class GenStage(enum.Enum, shape=2):
    """Stage of one node's move generation (the model's ``movegen.Stage``)."""
    VICTIMS          = 0  # walking victims and their aggressors
    CASTLE_KINGSIDE  = 1  # victims exhausted: kingside castling next
    CASTLE_QUEENSIDE = 2  # then queenside castling
    DONE             = 3  # the node has no move left


#: Number of promotions a pawn move to the last rank is tried as.
PROMOTIONS = len(PROMOTION_ORDER)


class GenState(data.Struct):
    """The per-node generation state the SearchStack keeps per ply (the model's MovePicker).

    ``mask`` is the disable word (bit = absolute square); ``victim`` and ``aggressor`` are the
    last move generated; ``promo`` indexes PROMOTION_ORDER for the next promotion of that pawn
    move while ``promoting`` is set.
    """
    mask:          64
    stage:         GenStage
    captures_only: 1
    victim:        Square
    aggressor:     Square
    promoting:     1
    promo:         range(PROMOTIONS)

__all__ += ["UndoRecord", "GenStage", "PROMOTIONS", "GenState"]

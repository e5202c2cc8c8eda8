"""Side-relative geometry: the board as one side sees it, each of its constants written once.

The move generators (hdl/squarearray.py), the Board's normalised position (hdl/board.py), both
Evaluates and the OpenCL kernels' positions (host/opencl/layout.py) work in the frame of one
colour: white's frame is the absolute board, black's is the board with its ranks flipped
(``relative``). In that frame a pawn always moves up the board and every special square of a
move lies on a known rank, so the hardware decodes it from a file and a constant rank. The
model (model/) works on absolute squares and turns these into its side's squares with
``relative``, ``relative_rank`` and ``PAWN_PUSH``.

Ranks and files are 0-based (rank 1 = 0, file a = 0), as in ``Square`` (contract/defs.py).
"""

from .defs import Color
from .geometry import CASTLE_BIT, file_of, rank_of, square

__all__ = [
    "MIRROR", "relative", "relative_rank", "PAWN_STEP", "PAWN_PUSH", "PAWN_CAPTURE_STEPS",
    "CASTLING_RANK", "PAWN_START_RANK", "DOUBLE_PUSH_RANK", "EP_RANK", "LAST_RANK",
    "KING_FILE", "CASTLE_KING_FILE", "CASTLE_ROOK_FILES", "CASTLE_STEP", "CASTLE_PATHS",
    "KING_HOME", "CASTLE_KING_TO", "CASTLE_ROOK_SQUARES", "CASTLE_ROOK_MOVE", "CASTLE_CLEAR",
]

_WHITE, _BLACK = Color.WHITE.value, Color.BLACK.value

#: XOR that flips a square's rank (its three high bits, ``Square.rank``): a square's number in
#: black's frame from its absolute one, and back.
MIRROR = square(0, 7)


def relative(sq, color):
    """The square as the side ``color`` sees it: ranks flipped for black (ties use this)."""
    return sq if color == _WHITE else sq ^ MIRROR


def relative_rank(rank, color):
    """The absolute rank of ``color``'s relative ``rank`` (the same flip, for a rank alone)."""
    return rank_of(relative(square(0, rank), color))


#: Square step of one rank up the relative frame: a pawn's push.
PAWN_STEP = square(0, 1)
#: Square step of a pawn push of each colour on the absolute board.
PAWN_PUSH = {_WHITE: PAWN_STEP, _BLACK: -PAWN_STEP}
#: (file, rank) steps of the two pawn captures, from the capturing pawn (relative frame).
PAWN_CAPTURE_STEPS = ((-1, 1), (1, 1))

# --- the ranks of the relative frame ---------------------------------------------------------

#: The king and rooks before castling.
CASTLING_RANK = 0
#: A pawn's home rank, from which it may double-push.
PAWN_START_RANK = 1
#: The rank a double push lands on (the square it passed over is the en-passant square).
DOUBLE_PUSH_RANK = 3
#: The en-passant square, seen from the side to move (the side that may take en passant): the
#: pawn taken stands one rank below it (DOUBLE_PUSH_RANK of its own side's frame).
EP_RANK = 5
#: The rank a pawn promotes on.
LAST_RANK = 7

# --- castling, on CASTLING_RANK --------------------------------------------------------------

#: The king's file before castling.
KING_FILE = 4
#: Files a king moves when it castles.
CASTLE_STEP = 2
#: kingside? -> the file the castling king lands on.
CASTLE_KING_FILE = {True: KING_FILE + CASTLE_STEP, False: KING_FILE - CASTLE_STEP}
#: kingside? -> the castling rook's (from, to) files: h -> f, a -> d.
CASTLE_ROOK_FILES = {True: (7, CASTLE_KING_FILE[True] - 1),
                     False: (0, CASTLE_KING_FILE[False] + 1)}


def _castle_path(kingside):
    rook_home, king_to = CASTLE_ROOK_FILES[kingside][0], CASTLE_KING_FILE[kingside]
    between = tuple(range(min(KING_FILE, rook_home) + 1, max(KING_FILE, rook_home)))
    way = 1 if kingside else -1
    return between, tuple(range(KING_FILE, king_to + way, way))


#: kingside? -> (files that must be empty, files the king stands on or crosses, from its
#: home file on): f g and e f g kingside, b c d and e d c queenside.
CASTLE_PATHS = {kingside: _castle_path(kingside) for kingside in (True, False)}

#: The castling king's relative from-square (e1) and, kingside? -> its to-square (g1, c1).
KING_HOME = square(KING_FILE, CASTLING_RANK)
CASTLE_KING_TO = {kingside: square(f, CASTLING_RANK) for kingside, f in CASTLE_KING_FILE.items()}
#: kingside? -> the castling rook's relative (from, to) squares: h1 -> f1, a1 -> d1.
CASTLE_ROOK_SQUARES = {kingside: tuple(square(f, CASTLING_RANK) for f in files)
                       for kingside, files in CASTLE_ROOK_FILES.items()}
#: The rook's absolute (from, to) squares of a castling, by the king's absolute to-square.
CASTLE_ROOK_MOVE = {
    relative(CASTLE_KING_TO[kingside], color):
        tuple(relative(s, color) for s in CASTLE_ROOK_SQUARES[kingside])
    for color in (_WHITE, _BLACK) for kingside in (True, False)}


def _rights_lost(sq):
    rank, f = rank_of(sq), file_of(sq)
    lost = 0
    for color in (_WHITE, _BLACK):
        if rank == relative_rank(CASTLING_RANK, color):
            for kingside in (True, False):
                if f in (KING_FILE, CASTLE_ROOK_FILES[kingside][0]):
                    lost |= CASTLE_BIT[color, kingside]
    return lost


#: Rights lost when a move starts on or lands on a square (king and rook home squares).
CASTLE_CLEAR = tuple(_rights_lost(sq) for sq in range(64))

"""The host's positions in compiled code: what the host search does at each of its nodes.

Why: with an accelerator that answers at once, the host's own work per node is what limits the
jobs it can hand out (docs/engine.md, "Host dispatch"). In python-chess, legal move generation,
the MVV/LVA ordering, ``push``/``pop`` and the model boards that jobs carry cost about 50 us a
job; hostboard.cpp does the same work in a few microseconds a node. python-chess stays the
oracle: tests/test_hostboard.py holds every function here to it (legal moves in the host's
order, children, key equality, check, checkmate, the fifty-move rule, dead material) over the
perft and EPD suites.

``HostBoard`` is a stack of positions, one per ply below the root: ``push(move)`` writes the
next ply from the current one (no undo records), ``pop()`` forgets it. Moves go in and out as
python-chess ``Move`` objects; inside, a move is ``from | to << 6 | promotion << 12``.

The library is compiled with g++ on first use into ``$CHESSACCEL_NATIVE_BUILD`` (default
``build/native`` in the repository), under a name that hashes the source, the compiler's
version and the flags, as the Verilator builds are: an edited source builds anew, and processes
running at once build it once (a lock).
"""

import ctypes
import hashlib
import importlib.machinery
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import chess

from chessaccel.host.backends import BackendError
from chessaccel.sim.buildtools import build_root
from chessaccel.contract.geometry import CASTLE_BIT
from chessaccel.model.board import Board

__all__ = ["HostBoard", "HostBoardError", "library", "move_code", "move_of", "position_key",
           "MAX_PLIES"]

_HERE = Path(__file__).resolve().parent
#: The library's sources (setup.py lists the same): the board, its functions for Python, and the
#: compiled host search (hostsearch.py, its static evaluation's terms in hosteval.hpp) built into
#: the same library.
_SOURCES = (_HERE / "hostboard.hpp", _HERE / "hostboard.cpp", _HERE / "hostsearch.cpp",
            _HERE / "hostlaunch.hpp", _HERE / "hostlaunch.cpp", _HERE / "hosteval.hpp")
BUILD_ROOT = build_root("native", "CHESSACCEL_NATIVE_BUILD")
_CXX = "g++"
_FLAGS = ["-O2", "-std=c++17", "-shared", "-fPIC", "-pthread", "-Wall", "-Werror"]
#: Plies a stack holds (the host never searches deeper than MAX_ITERATION plies).
MAX_PLIES = 160
_POS_BYTES = 88
_NO_EP = 64
_SIDE, _CASTLING, _EP, _KING_W, _KING_B = 64, 65, 66, 67, 68
_POS_WORDS, _HALFMOVE_WORD = _POS_BYTES // 4, 72 // 4
_POS_QWORDS, _KEY_QWORD = _POS_BYTES // 8, 80 // 8
_NONE = 0
#: The model's castling right of each rook square python-chess's castling rights name.
_ROOK_RIGHTS = ((chess.BB_H1, CASTLE_BIT[0, True]), (chess.BB_A1, CASTLE_BIT[0, False]),
                (chess.BB_H8, CASTLE_BIT[1, True]), (chess.BB_A8, CASTLE_BIT[1, False]))
_MASKS = ctypes.c_uint64 * 8


class HostBoardError(BackendError):
    """The compiled part of the host cannot be built or loaded."""


def _compiler_version():
    try:
        done = subprocess.run([_CXX, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise HostBoardError(f"{_CXX} is not installed (the host's compiled move generator needs "
                             "a C++ compiler; `make setup` installs it)") from None
    return done.stdout.splitlines()[0] if done.stdout else "?"


def _source_digest():
    return hashlib.sha256(b"".join(path.read_bytes() for path in _SOURCES)).hexdigest()


def _installed():
    """The library the install built beside this module (setup.py), or None where there is none
    or it was built from another hostboard.cpp (a checkout edited since its install)."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = Path(__file__).resolve().parent / f"_hostboard{suffix}"
        if not path.is_file():
            continue
        try:
            lib = ctypes.PyDLL(str(path))
            lib.hb_source_digest.restype = ctypes.c_char_p
            if lib.hb_source_digest().decode() == _source_digest():
                return lib
        except (OSError, AttributeError):
            pass
    return None


def _build():
    """Path of a library compiled here (the build cache), when the install's is missing or stale;
    built again when the source or the compiler changed."""
    from chessaccel.sim.buildtools import locked
    if shutil.which(_CXX) is None:
        _compiler_version()     # raises the one-line error
    digest = hashlib.sha256()
    digest.update(f"{_compiler_version()}|{_FLAGS}|".encode())
    digest.update(_source_digest().encode())
    path = BUILD_ROOT / f"hostboard-{digest.hexdigest()[:16]}.so"
    if path.exists():
        return path
    with locked(BUILD_ROOT / f".{path.name}.lock"):
        if path.exists():
            return path
        handle, staging = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".so", dir=BUILD_ROOT)
        os.close(handle)
        done = subprocess.run([_CXX, *_FLAGS, f'-DHOSTBOARD_DIGEST="{_source_digest()}"', "-o",
                               staging, *(str(p) for p in _SOURCES if p.suffix == ".cpp"), "-ldl"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            os.unlink(staging)
            lines = done.stderr.strip().splitlines() or ["no output"]
            first = next((line for line in lines if "error" in line), lines[0])
            raise HostBoardError(f"{_CXX} could not build the host's library: {first}")
        os.replace(staging, path)
    return path


_library = None


def library():
    """The loaded library: the one the install built, else one compiled here on first use."""
    global _library
    if _library is None:
        try:
            # PyDLL: calls keep the GIL (each is a few microseconds; releasing and taking it
            # back would cost more than the work)
            lib = _installed() or ctypes.PyDLL(str(_build()))
        except OSError as error:
            raise HostBoardError(f"cannot load the host's compiled move generator: {error}") from None
        lib.hb_push.restype = ctypes.c_uint64
        lib.hb_set_chess.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                     ctypes.c_int, ctypes.c_int, ctypes.c_uint32]
        lib.hb_push_null.restype = ctypes.c_uint64
        if lib.hb_pos_size() != _POS_BYTES:
            raise HostBoardError(f"hostboard.cpp's position is {lib.hb_pos_size()} bytes, "
                                 f"hostboard.py reads {_POS_BYTES}")
        _library = lib
    return _library


def move_code(move):
    """The library's code of a python-chess move (0 for None)."""
    if move is None:
        return _NONE
    try:
        return move.code        # the moves this module hands out carry it
    except AttributeError:
        return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def _move(code):
    move = chess.Move(code & 63, code >> 6 & 63, code >> 12 or None)
    move.code = code    # not a dataclass field: equality and hashing do not see it
    return move


#: python-chess moves by code: the same object every time, made once.
_MOVES = [None] * (6 << 12)
for _f in range(64):
    for _t in range(64):
        if _f != _t:
            for _p in (0, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
                _MOVES[_f | _t << 6 | _p << 12] = _move(_f | _t << 6 | _p << 12)
del _f, _t, _p


def move_of(code):
    """The python-chess move of a library move code (None for 0)."""
    return _MOVES[code] if code else None


def position_key(cb):
    """The host's key of a python-chess board's position (the transposition table's key)."""
    return HostBoard(cb).key()


class HostBoard:
    """A stack of positions for one search, rooted at a python-chess board (its move stack is
    not looked at: the search keeps the game's history keys itself)."""

    __slots__ = ("_lib", "_stack", "_view", "_words", "_keys", "_moves", "_codes", "_children", "_moves_view", "_count",
                 "_children_view", "ply")

    def __init__(self, cb):
        self._lib = library()
        self._stack = (ctypes.c_uint8 * (_POS_BYTES * (MAX_PLIES + 2)))()
        self._view = memoryview(self._stack).cast("B")
        self._words = self._view.cast("I")     # the halfmove clocks, read in one index
        self._keys = self._view.cast("Q")
        self._moves = (ctypes.c_uint32 * 256)()
        self._moves_view = memoryview(self._moves).cast("B").cast("I")
        self._codes = self._children = self._children_view = None    # child_boards' (made then)
        self.ply = 0
        self._count = 0
        self.set_chess(cb)

    def set_root(self, board, halfmove=0):
        """Root the stack at a model ``Board``."""
        self.ply = 0
        self._write(0, board, halfmove)

    def set_chess(self, cb):
        """Root the stack at a python-chess board's position: ``set_root(board_from_chess(cb),
        cb.halfmove_clock)`` written from its bitboards by the library."""
        self.ply = 0
        rights = cb.clean_castling_rights()
        castling = 0
        for rook, bit in _ROOK_RIGHTS:
            if rights & rook:
                castling |= bit
        ep = cb.ep_square
        if ep is None or cb._valid_ep_square() != ep:     # as board_from_chess drops it
            ep = _NO_EP
        occupied = cb.occupied_co
        masks = _MASKS(occupied[chess.WHITE], occupied[chess.BLACK], cb.pawns, cb.knights,
                       cb.bishops, cb.rooks, cb.queens, cb.kings)
        self._lib.hb_set_chess(self._stack, 0, masks, 0 if cb.turn == chess.WHITE else 1,
                               castling, ep, min(cb.halfmove_clock, 1 << 30))

    def _write(self, index, board, halfmove):
        view, base = self._view, index * _POS_BYTES
        view[base:base + 64] = bytes(board.sq)
        view[base + _SIDE] = board.side
        view[base + _CASTLING] = board.castling
        view[base + _EP] = _NO_EP if board.ep is None else board.ep
        self._words[index * _POS_WORDS + _HALFMOVE_WORD] = min(halfmove, 1 << 30)
        self._lib.hb_init(self._stack, index)

    # --- the current ply ---------------------------------------------------------------------

    def push(self, move):
        """Play ``move`` (legal); returns the new position's key."""
        key = self._lib.hb_push(self._stack, self.ply, move_code(move))
        self.ply += 1
        return key

    def push_null(self):
        """The side to move passes (null-move pruning; never in check): the new key."""
        key = self._lib.hb_push_null(self._stack, self.ply)
        self.ply += 1
        return key

    def pop(self):
        self.ply -= 1

    def key(self):
        """64-bit key: equal for positions python-chess's ``_transposition_key`` calls equal
        (pieces, side, castling rights, the en-passant square when a capture there is legal)."""
        return self._keys[self.ply * _POS_QWORDS + _KEY_QWORD]

    @property
    def halfmove_clock(self):
        return self._words[self.ply * _POS_WORDS + _HALFMOVE_WORD]

    def ordered(self, tt_move=None, tt_front=True, killers=(), bad_last=False):
        """Legal moves in the host's order (HostSearch._ordered): ``tt_move`` first when it is
        legal and ``tt_front``, then captures in the accelerator's generation order, the
        killers that are legal here and are not ``tt_move``, quiet moves and castling; with
        ``bad_last``, the losing captures (``is_losing_capture``) but the first move after
        all of them, in their order."""
        self.order(tt_move, tt_front, killers, bad_last)
        return self.listed()

    def order(self, tt_move=None, tt_front=True, killers=(), bad_last=False):
        """``ordered``'s moves into the board's buffer (until the next ``order``): their number.
        ``first()`` and ``listed()`` read them."""
        k1 = move_code(killers[0]) if killers else _NONE
        k2 = move_code(killers[1]) if len(killers) > 1 else _NONE
        self._count = self._lib.hb_ordered(self._stack, self.ply, move_code(tt_move), tt_front,
                                           k1, k2, self._moves, bad_last)
        return self._count

    def first(self):
        """The first move ``order`` put in the buffer."""
        return _MOVES[self._moves[0]]

    def listed(self):
        """The moves ``order`` put in the buffer, as a list."""
        return list(map(_MOVES.__getitem__, self._moves_view[:self._count].tolist()))

    def is_legal(self, move):
        """``move`` is one of the current ply's legal moves (``move in ordered()``)."""
        return not move.drop and bool(self._lib.hb_is_legal(self._stack, self.ply,
                                                            move_code(move)))

    def is_check(self):
        return bool(self._lib.hb_in_check(self._stack, self.ply))

    def is_checkmate(self):
        return bool(self._lib.hb_is_checkmate(self._stack, self.ply))

    def is_fifty_moves(self):
        """The fifty-move rule has ended the game (the clock at 100, not checkmate)."""
        return bool(self._lib.hb_fifty_moves(self._stack, self.ply))

    def is_insufficient_material(self):
        return bool(self._lib.hb_insufficient_material(self._stack, self.ply))

    def is_drawn(self):
        """Fifty moves or dead material (repetition is the search's: it knows the history)."""
        return bool(self._lib.hb_drawn(self._stack, self.ply))

    def is_capture(self, move):
        return bool(self._lib.hb_is_capture(self._stack, self.ply, move_code(move)))

    def is_losing_capture(self, move):
        """A piece takes a cheaper one (no promotion) on a square the opponent defends."""
        return bool(self._lib.hb_losing_capture(self._stack, self.ply, move_code(move)))

    def gives_check(self, move):
        return bool(self._lib.hb_gives_check(self._stack, self.ply, move_code(move)))

    def has_pieces(self):
        """The side to move has a piece besides its king and pawns."""
        return bool(self._lib.hb_has_pieces(self._stack, self.ply))

    def is_zeroing(self, move):
        return bool(self._lib.hb_is_zeroing(self._stack, self.ply, move_code(move)))

    def child_board(self, move):
        """The model ``Board`` after ``move`` (what a job carries); the stack stays as it is."""
        self._lib.hb_push(self._stack, self.ply, move_code(move))
        return _board(self._view, (self.ply + 1) * _POS_BYTES)

    def child_boards(self, moves):
        """The model ``Board`` after each of ``moves``, in one call to the library."""
        if self._codes is None:
            self._codes = (ctypes.c_uint32 * 256)()
            self._children = (ctypes.c_uint8 * (_POS_BYTES * 256))()
            self._children_view = memoryview(self._children).cast("B")
        codes = self._codes
        for k, move in enumerate(moves):
            codes[k] = move_code(move)
        self._lib.hb_children(self._stack, self.ply, codes, len(moves), self._children)
        view = self._children_view
        return [_board(view, k * _POS_BYTES) for k in range(len(moves))]

    def board(self):
        """The model ``Board`` of the current ply."""
        return _board(self._view, self.ply * _POS_BYTES)


_new_board = Board.__new__


def _board(view, base):
    """The model Board of the position at byte ``base`` of ``view``."""
    b = _new_board(Board)
    b.sq = view[base:base + 64].tolist()
    b.side, b.castling, ep, white_king, black_king = view[base + _SIDE:base + _KING_B + 1]
    b.ep = None if ep == _NO_EP else ep
    b.kings = [white_king, black_king]
    return b

"""The RTL move generator (hdl/movegen.py's MoveWalker) run under cocotb + Icarus from Python.

``rtl_moves(board)`` returns one node's legal moves in the hardware's generation order, as the
model's ``legal_moves(board)`` does (``chessaccel moves FEN --backend rtl``); ``walk_nodes``
walks many nodes in one simulator run and also returns the clock cycles each took.
"""

from dataclasses import dataclass
from functools import lru_cache

from amaranth.lib import data

from chessaccel.contract.defs import Piece, Position
from chessaccel.contract.geometry import ep_pack, unpack_move
from chessaccel.hdl.movegen import MoveWalker

from .cocotb_runner import run_testbench

__all__ = ["NodeWalk", "walk_nodes", "rtl_moves", "pack_position", "TESTBENCH", "TOPLEVEL"]

TESTBENCH = "chessaccel.sim.cocotb.tb_movegen"
TOPLEVEL = "movewalker"


_POSITION = data.Layout.cast(Position)
_PIECE_BITS = data.Layout.cast(Piece).size
_SQUARES_AT = _POSITION["squares"].offset
_SIDE_AT = _POSITION["side"].offset
_CASTLING_AT = _POSITION["castling"].offset
_EP_AT = _POSITION["ep"].offset


@lru_cache(maxsize=None)
def _ep_bits(ep_square):
    return ep_pack(ep_square)


def pack_position(board):
    """``board.to_bits()``, fast: the field offsets are read from the ``Position`` layout once
    (the model's ``to_bits`` builds an Amaranth constant, about 10 ms a position)."""
    bits = 0
    for s, code in enumerate(board.sq):
        bits |= code << (_SQUARES_AT + s * _PIECE_BITS)
    return (bits | board.side << _SIDE_AT | board.castling << _CASTLING_AT
            | _ep_bits(board.ep) << _EP_AT)


@dataclass(frozen=True)
class NodeWalk:
    """One node walked by the RTL: its legal moves (from, to, promo) and the clocks taken."""
    moves: list
    cycles: int


def walk_nodes(boards, captures_only=False):
    """Walk every model Board of ``boards`` (full width, or quiescence) in one simulator run."""
    nodes = [[pack_position(board), int(captures_only)] for board in boards]
    walked = run_testbench(MoveWalker, TOPLEVEL, TESTBENCH, {"nodes": nodes})
    return [NodeWalk([unpack_move(m) for m in node["moves"]], node["cycles"]) for node in walked]


def rtl_moves(board, captures_only=False):
    """Legal moves of one position, as (from, to, promo) tuples in the RTL's order."""
    return walk_nodes([board], captures_only)[0].moves

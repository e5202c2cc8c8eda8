"""The RTL move generator (hdl/movegen.py's MoveWalker) run under cocotb + Icarus from Python.

``rtl_moves(board)`` returns one node's legal moves in the hardware's generation order, as the
model's ``legal_moves(board)`` does (``chessaccel moves FEN --backend rtl``); ``walk_nodes``
walks many nodes in one simulator run and also returns the clock cycles each took.
"""

from dataclasses import dataclass

from chessaccel.geometry import unpack_move
from chessaccel.hdl.movegen import MoveWalker

from .cocotb_runner import run_testbench

__all__ = ["NodeWalk", "walk_nodes", "rtl_moves", "TESTBENCH", "TOPLEVEL"]

TESTBENCH = "chessaccel.sim.cocotb.tb_movegen"
TOPLEVEL = "movewalker"


@dataclass(frozen=True)
class NodeWalk:
    """One node walked by the RTL: its legal moves (from, to, promo) and the clocks taken."""
    moves: list
    cycles: int


def walk_nodes(boards, captures_only=False):
    """Walk every model Board of ``boards`` (full width, or quiescence) in one simulator run."""
    nodes = [[board.to_bits(), int(captures_only)] for board in boards]
    walked = run_testbench(MoveWalker, TOPLEVEL, TESTBENCH, {"nodes": nodes})
    return [NodeWalk([unpack_move(m) for m in node["moves"]], node["cycles"]) for node in walked]


def rtl_moves(board, captures_only=False):
    """Legal moves of one position, as (from, to, promo) tuples in the RTL's order."""
    return walk_nodes([board], captures_only)[0].moves

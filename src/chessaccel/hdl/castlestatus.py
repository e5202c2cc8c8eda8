"""CastleStatus: may the side to move castle now? (model: sim/model/castlestatus.py)

Kingside (queenside) castling is allowed when the right is held, the squares between king and
rook are empty, and the king's start, transit and destination squares are not attacked by the
other side. The squares are fixed in the mover's relative frame (rank 1), so each attack test is
a small fixed network: no super piece needs radiating from a variable square.
"""

from amaranth.hdl import Const, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import Color, PieceType, Position
from chessaccel.contract.geometry import KING_TARGETS, KNIGHT_TARGETS, RAYS, square
from chessaccel.contract.relative import CASTLE_PATHS, CASTLING_RANK

from .squarearray import BISHOP_DIR_INDICES, ROOK_DIR_INDICES, RelativeBoard, pawn_capture_targets

__all__ = ["CastleStatus"]


def _attacked_by_enemy(board, t):
    """A piece of the other side attacks relative square ``t`` (a fixed square)."""
    enemy = board.enemy
    hits = []
    # the enemy pawns attacking t stand where a pawn of the frame's colour on t would capture
    # (theirs capture downwards)
    hits += [enemy[PieceType.PAWN][s] for s in pawn_capture_targets(t)]
    hits += [enemy[PieceType.KNIGHT][s] for s in KNIGHT_TARGETS[t]]
    hits += [enemy[PieceType.KING][s] for s in KING_TARGETS[t]]
    for dirs, slider in ((ROOK_DIR_INDICES, PieceType.ROOK), (BISHOP_DIR_INDICES, PieceType.BISHOP)):
        for d in dirs:
            clear = Const(1, 1)
            for s in RAYS[t][d]:
                hits.append(clear & (enemy[slider][s] | enemy[PieceType.QUEEN][s]))
                clear = clear & board.empty[s]
    out = hits[0]
    for h in hits[1:]:
        out = out | h
    return out


class CastleStatus(wiring.Component):
    """``kingside_ok`` / ``queenside_ok`` for the side to move of ``position``: combinational."""

    position: In(Position)
    kingside_ok: Out(1)
    queenside_ok: Out(1)

    def elaborate(self, platform):
        m = Module()
        black = self.position.side == Color.BLACK
        board = RelativeBoard(m, self.position.squares, black, "castle")
        rights = self.position.castling
        held = {
            True: Mux(black, rights.black_kingside, rights.white_kingside),
            False: Mux(black, rights.black_queenside, rights.white_queenside),
        }
        ok = {}
        for kingside, (empty_files, king_files) in CASTLE_PATHS.items():
            allowed = held[kingside]
            for f in empty_files:
                allowed = allowed & board.empty[square(f, CASTLING_RANK)]
            for f in king_files:
                allowed = allowed & ~_attacked_by_enemy(board, square(f, CASTLING_RANK))
            ok[kingside] = allowed
        m.d.comb += [self.kingside_ok.eq(ok[True]), self.queenside_ok.eq(ok[False])]
        return m

"""An independent reference for the static evaluation, written from docs/semantics.md, section 6.

It shares no code with the project's tables or model: the material values and the piece-square
formulas are copied by hand from the document's tables (not from ``chessaccel.contract.evaltables``), the
squares and pieces come from python-chess, and the centre distance is computed its own way (the
distance of the file from the d/e files and of the rank from the 4th/5th ranks). Each score
comes with its derivation, piece by piece, so a reader can check it with pencil and paper.

``python tests/evalref.py --write`` rewrites tests/data/eval-reference.json from REFERENCE_POSITIONS
(run it only when the document's formulas change, never to make a failing test pass: the test
compares the file, this reference and the model, and a change of the file must come with a change
of section 6).
"""

import json
import sys
from pathlib import Path

import chess

__all__ = ["MATERIAL", "pst", "centre_distance", "piece_terms", "reference_eval",
           "REFERENCE_POSITIONS", "REFERENCE_FILE", "reference_record", "read_reference",
           "single_piece_boards", "with_full_phase"]

REFERENCE_FILE = Path(__file__).resolve().parent / "data" / "eval-reference.json"

# --- section 6, copied from the document ------------------------------------------------------

#: (MATERIAL_MG, MATERIAL_EG), the document's table.
MATERIAL = {chess.PAWN: (100, 120), chess.KNIGHT: (320, 300), chess.BISHOP: (330, 310),
            chess.ROOK: (500, 540), chess.QUEEN: (950, 1000), chess.KING: (0, 0)}
#: Phase contribution: "N 1, B 1, R 2, Q 4; max 24".
PHASE_OF = {chess.KNIGHT: 1, chess.BISHOP: 1, chess.ROOK: 2, chess.QUEEN: 4}
PHASE_CAP = 24
EVAL_CLAMP = 20000
KING_FILE_BONUS = (20, 30, 10, 0, 0, 10, 30, 20)


def centre_distance(square):
    """c = 3 - max(file distance, rank distance) from the four centre squares d4, e4, d5, e5."""
    f, r = chess.square_file(square), chess.square_rank(square)
    file_distance = min(abs(f - 3), abs(f - 4))
    rank_distance = min(abs(r - 3), abs(r - 4))
    return 3 - max(file_distance, rank_distance)


def pst(piece_type, square):
    """(PST_MG, PST_EG) of a white piece on ``square``, from the document's formula table."""
    f, r, c = chess.square_file(square), chess.square_rank(square), centre_distance(square)
    if piece_type == chess.PAWN:
        if not 1 <= r <= 6:             # "ranks 2-7": nothing elsewhere
            return 0, 0
        return 4 * (r - 1) + 3 * c, 10 * (r - 1)
    if piece_type == chess.KNIGHT:
        return 12 * c - 18, 8 * c - 12
    if piece_type == chess.BISHOP:
        return 6 * c - 6, 6 * c - 6
    if piece_type == chess.ROOK:
        mg = 20 if r == 6 else 0
        if square in (chess.D1, chess.E1):
            mg += 5
        return mg, 10 if r == 6 else 0
    if piece_type == chess.QUEEN:
        return 3 * c - 5, 8 * c - 12
    if piece_type == chess.KING:
        return KING_FILE_BONUS[f] - 15 * r, 12 * c - 18
    raise ValueError(piece_type)


def piece_terms(piece, square):
    """(mg, eg) a piece adds to white's sums: material + PST on its own side's square, negated
    for black (black reads the rank-mirrored square, s XOR 56)."""
    own_square = square if piece.color == chess.WHITE else chess.square_mirror(square)
    material_mg, material_eg = MATERIAL[piece.piece_type]
    pst_mg, pst_eg = pst(piece.piece_type, own_square)
    sign = 1 if piece.color == chess.WHITE else -1
    return sign * (material_mg + pst_mg), sign * (material_eg + pst_eg)


def reference_eval(cb, explain=False):
    """The evaluation of a python-chess position by the document's formulas; with ``explain``,
    (score, record) where the record holds every intermediate value and a line per piece."""
    mg = eg = phase_sum = 0
    lines = []
    for square, piece in sorted(cb.piece_map().items()):
        m, e = piece_terms(piece, square)
        mg += m
        eg += e
        phase_sum += PHASE_OF.get(piece.piece_type, 0)
        if explain:
            own = square if piece.color == chess.WHITE else chess.square_mirror(square)
            material = MATERIAL[piece.piece_type]
            sign = "+" if piece.color == chess.WHITE else "-"
            table = pst(piece.piece_type, own)
            lines.append(f"{piece.symbol()}{chess.square_name(square)}: "
                         f"mg {sign}({material[0]}{table[0]:+d}) eg {sign}({material[1]}{table[1]:+d})"
                         + ("" if piece.color == chess.WHITE else
                            f"  [black: read on {chess.square_name(own)}]"))
    white_mg, white_eg = mg, eg
    if cb.turn == chess.BLACK:
        mg, eg = -mg, -eg
    phase = min(PHASE_CAP, phase_sum)
    w = (phase * 32 + 12) // 24
    tapered = (mg * w + eg * (32 - w)) >> 5      # Python's >> floors, as the document says
    score = max(-EVAL_CLAMP, min(EVAL_CLAMP, tapered))
    if not explain:
        return score
    side = "white" if cb.turn == chess.WHITE else "black"
    record = {
        "white_mg": white_mg, "white_eg": white_eg, "side_to_move": side,
        "mg": mg, "eg": eg, "phase_sum": phase_sum, "phase": phase, "w": w,
        "tapered": tapered, "score": score, "pieces": lines,
        "taper": f"({mg} * {w} + {eg} * {32 - w}) >> 5 = {mg * w + eg * (32 - w)} >> 5 = {tapered}",
    }
    return score, record


# --- placements that reach every table entry --------------------------------------------------

#: Kings placed beside the lone piece; the second pair when the piece stands on the first.
_KING_SQUARES = ((chess.A1, chess.H8), (chess.H1, chess.A8))


def single_piece_boards():
    """(description, python-chess board) with two kings and one more piece, for every piece kind,
    colour and square; then each king alone on every square (the other king in a corner).
    Both sides to move, since black's view negates before the taper."""
    out = []
    for color in chess.COLORS:
        for kind in (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
            for square in chess.SQUARES:
                white_king, black_king = next(k for k in _KING_SQUARES if square not in k)
                cb = chess.Board(None)
                cb.set_piece_at(white_king, chess.Piece(chess.KING, chess.WHITE))
                cb.set_piece_at(black_king, chess.Piece(chess.KING, chess.BLACK))
                cb.set_piece_at(square, chess.Piece(kind, color))
                cb.turn = chess.BLACK if square % 2 else chess.WHITE
                out.append((f"{chess.Piece(kind, color).symbol()}{chess.square_name(square)}", cb))
        for square in chess.SQUARES:
            other = next(s for s in (chess.H8, chess.A1) if s != square)
            # a knight keeps the phase above 0 so that the middlegame table counts too
            knight = next(s for s in (chess.D4, chess.E5) if s not in (square, other))
            cb = chess.Board(None)
            cb.set_piece_at(square, chess.Piece(chess.KING, color))
            cb.set_piece_at(other, chess.Piece(chess.KING, not color))
            cb.set_piece_at(knight, chess.Piece(chess.KNIGHT, chess.WHITE))
            cb.turn = chess.WHITE if square % 2 else chess.BLACK
            out.append((f"{chess.Piece(chess.KING, color).symbol()}{chess.square_name(square)}", cb))
    return out


#: Queen pairs (white on a square, black on its mirror) that cancel in the sums and lift the phase
#: to its cap, so that the taper weighs the middlegame value alone.
_QUEEN_PAIRS = ((chess.B3, chess.B6), (chess.C3, chess.C6), (chess.F3, chess.F6),
                (chess.G3, chess.G6), (chess.B4, chess.B5))


def with_full_phase(cb):
    """The same sums with three cancelling queen pairs added: phase 24, w = 32."""
    out = cb.copy()
    free = [pair for pair in _QUEEN_PAIRS if not any(out.piece_at(s) for s in pair)]
    for white, black in free[:3]:
        out.set_piece_at(white, chess.Piece(chess.QUEEN, chess.WHITE))
        out.set_piece_at(black, chess.Piece(chess.QUEEN, chess.BLACK))
    return out


# --- the reference positions ------------------------------------------------------------------

#: (name, FEN, why it is in the set). Evaluation reads only the pieces and the side to move.
REFERENCE_POSITIONS = (
    ("start", chess.STARTING_FEN, "symmetric: every term cancels, 0 whatever the phase"),
    ("start-black", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
     "symmetric with black to move: 0"),
    ("kings-home", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", "lone kings on e1/e8: mirror images, 0"),
    ("kings-g1-e8", "1n2k3/8/8/8/8/8/8/1N4K1 w - - 0 1",
     "king table: g1 is +30 mg, e8 is black's e1 (0); the knights cancel but make the phase 2"),
    ("kings-centre", "8/8/8/3k4/4K3/8/8/8 b - - 0 1",
     "both kings on centre squares, black to move"),
    ("lone-knight-a1", "4k3/8/8/8/8/8/8/N3K3 w - - 0 1", "knight on the rim corner: c = 0"),
    ("lone-knight-d4", "4k3/8/8/8/3N4/8/8/4K3 w - - 0 1", "knight in the centre: c = 3"),
    ("lone-bishop-b2", "4k3/8/8/8/8/8/1B6/4K3 w - - 0 1", "bishop at c = 1"),
    ("lone-rook-a7", "4k3/R7/8/8/8/8/8/4K3 w - - 0 1", "rook on the 7th rank: +20 mg, +10 eg"),
    ("lone-rook-d1", "4k3/8/8/8/8/8/8/3RK3 w - - 0 1", "rook on d1: +5 mg"),
    ("lone-queen-e5", "4k3/8/8/4Q3/8/8/8/4K3 w - - 0 1", "queen in the centre"),
    ("pawn-a2", "4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "pawn on its home rank on the rim: table 0"),
    ("pawn-e7", "4k3/4P3/8/8/8/8/8/K7 w - - 0 1", "pawn one step from promoting: 4*5 + 3*0, 10*5"),
    ("black-pawn-d5-white-to-move", "4k3/8/8/3p4/8/8/8/4K3 w - - 0 1",
     "black pawn read on its mirrored square d4; negative score floors (>> is floor)"),
    ("black-pawn-d4-mirror", "4k3/8/8/8/3P4/8/8/4K3 b - - 0 1",
     "the colour-mirrored twin of the previous position: the same score"),
    ("black-knight-f6-black-to-move", "4k3/8/5n2/8/8/8/8/4K3 b - - 0 1",
     "black piece, black to move: sums negated before the taper"),
    ("phase-opening-cap", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQK1NR w KQkq - 0 1",
     "start less white's f1 bishop: phase 23, w = 31"),
    ("phase-middlegame", "r1bq1rk1/pp3ppp/2n2n2/3p4/3P4/2N2N2/PP3PPP/R2Q1RK1 w - - 0 1",
     "queens, rooks, three minors a side missing one: a middle phase"),
    ("phase-queenless", "r4rk1/pp3pp1/2n5/3p4/3P4/5N2/PP3PPP/R4RK1 b - - 0 1",
     "rooks and a minor each, black a pawn down, black to move: phase 10, w = 13"),
    ("phase-endgame-rooks", "8/5k2/8/3r4/8/2R5/1P3K2/8 w - - 0 1",
     "rook ending, white a pawn up: phase 4, w = 5"),
    ("black-rook-a2-floor", "4k3/8/8/8/8/8/r7/4K3 w - - 0 1",
     "black rook on its 7th rank, white to move: -17510 >> 5 floors to -548 (truncation: -547)"),
    ("phase-pawn-ending", "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", "bishop and pawns: phase 1"),
    ("phase-above-cap", "QQQQkQQQ/8/8/8/8/8/P7/qqqqKqqq w - - 0 1",
     "fourteen queens and a pawn: phase sum 56 is capped at 24"),
    ("clamp-high", "QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/8/8/8/k3K3 w - - 0 1",
     "32 white queens: 30,000+ before the clamp to +20000"),
    ("clamp-low", "QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/8/8/8/k3K3 b - - 0 1",
     "the same with black to move: clamped to -20000"),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     "a busy middlegame with every piece kind"),
    ("kiwipete-mirror", "r3k2r/pppbbppp/2n2q1P/1P2p3/3pn3/BN2PNP1/P1PPQPB1/R3K2R b KQkq - 0 1",
     "Kiwipete's colour-mirrored twin: the same score"),
)


def reference_record(name, fen, why):
    score, record = reference_eval(chess.Board(fen), explain=True)
    return {"name": name, "fen": fen, "why": why, **record}


def read_reference():
    """The committed records of tests/data/eval-reference.json."""
    return json.loads(REFERENCE_FILE.read_text())["positions"]


def _write():
    doc = {
        "about": ("Static evaluations worked out from docs/semantics.md section 6 by tests/evalref.py, "
                  "which copies the document's material and piece-square formulas by hand and "
                  "shares no code with chessaccel.contract.evaltables or sim/model. 'pieces' gives each "
                  "piece's material+PST in mg and eg (white positive), 'taper' the final step."),
        "positions": [reference_record(*p) for p in REFERENCE_POSITIONS],
    }
    REFERENCE_FILE.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {len(doc['positions'])} positions to {REFERENCE_FILE}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/evalref.py --write")
    _write()

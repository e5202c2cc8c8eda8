"""An independent reference for the terms evaluation's features, written from docs/semantics.md
section 6 ("The terms evaluation") with python-chess as the oracle for attacks.

It shares no code with model/evalterms.py: it works on the absolute board with each colour's
"ahead" spelled out (white's pawns go up the ranks, black's down), where the model flips the
board into each side's frame; attacks are python-chess's ``Board.attacks`` (a slider's ray
stops at the first occupied square, which it attacks); the weights are read from the JSON file
with the json module, not through chessaccel.contract.evalweights. ``reference_terms(cb)``
returns {term: (mg, eg)} from white's view, material_pst excluded; ``reference_squares(cb)``
is material_pst from the file's own tables ("squares"; None when the file has none, the terms
then using the pst evaluation's, which tests/evalref.py checks).
"""

import json
from pathlib import Path

import chess

__all__ = ["WEIGHTS", "reference_terms", "reference_squares", "side_counts"]

WEIGHTS_FILE = (Path(__file__).resolve().parent.parent / "src" / "chessaccel" / "contract"
                / "evalweights.json")
WEIGHTS = json.loads(WEIGHTS_FILE.read_text())

_NAMES = {chess.PAWN: "pawn", chess.KNIGHT: "knight", chess.BISHOP: "bishop",
          chess.ROOK: "rook", chess.QUEEN: "queen"}


def reference_squares(cb):
    """(mg, eg) from white's view of the file's "squares": each white piece adds its table's
    entry on its square, each black piece subtracts the entry of the square seen from black's
    side (its rank counted from rank 8: python-chess's square_mirror); None without tables."""
    squares = WEIGHTS.get("squares")
    if squares is None:
        return None
    names = {**_NAMES, chess.KING: "king"}
    mg = eg = 0
    for square, piece in cb.piece_map().items():
        table = squares[names[piece.piece_type]]
        own = square if piece.color == chess.WHITE else chess.square_mirror(square)
        sign = 1 if piece.color == chess.WHITE else -1
        mg += sign * table["mg"][own]
        eg += sign * table["eg"][own]
    return mg, eg


def _ahead(color, rank_a, rank_b):
    """Whether rank_b lies ahead of rank_a for ``color``."""
    return rank_b > rank_a if color == chess.WHITE else rank_b < rank_a


def _relative_rank(color, rank):
    return rank if color == chess.WHITE else 7 - rank


def side_counts(cb, color):
    """The features of ``color`` as section 6 counts them."""
    enemy = not color
    pawns = list(cb.pieces(chess.PAWN, color))
    enemy_pawns = list(cb.pieces(chess.PAWN, enemy))
    forward = 1 if color == chess.WHITE else -1
    enemy_pawn_attacks = chess.SquareSet()
    for e in enemy_pawns:
        enemy_pawn_attacks |= cb.attacks(e)
    c = {"passed": [], "free": 0, "blocked": 0, "isolated": 0, "doubled": 0, "backward": 0,
         "connected": 0}
    for p in pawns:
        f, r = chess.square_file(p), chess.square_rank(p)
        if not any(abs(chess.square_file(e) - f) <= 1 and _ahead(color, r, chess.square_rank(e))
                   for e in enemy_pawns):
            c["passed"].append(_relative_rank(color, r))
            path = [chess.square(f, rr) for rr in range(8) if _ahead(color, r, rr)]
            if all(cb.piece_at(s) is None for s in path):
                c["free"] += 1
            elif cb.piece_at(chess.square(f, r + forward)) is not None:
                c["blocked"] += 1
        neighbours = [q for q in pawns if abs(chess.square_file(q) - f) == 1]
        if not neighbours:
            c["isolated"] += 1
        if any(chess.square_file(q) == f and _ahead(color, r, chess.square_rank(q)) for q in pawns):
            c["doubled"] += 1
        if (neighbours and all(_ahead(color, r, chess.square_rank(q)) for q in neighbours)
                and chess.square(f, r + forward) in enemy_pawn_attacks):
            c["backward"] += 1
        if any(chess.square_rank(q) == r or chess.square_rank(q) == r - forward
               for q in neighbours):
            c["connected"] += 1
    king = cb.king(color)
    kf, kr = chess.square_file(king), chess.square_rank(king)
    files = [g for g in (kf - 1, kf, kf + 1) if 0 <= g < 8]
    c["near"] = sum(1 for p in pawns if chess.square_file(p) in files
                    and chess.square_rank(p) == kr + forward)
    c["far"] = sum(1 for p in pawns if chess.square_file(p) in files
                   and chess.square_rank(p) == kr + 2 * forward)
    c["king_open"] = c["king_half_open"] = 0
    for g in files:
        if not any(chess.square_file(p) == g for p in pawns):
            if any(chess.square_file(e) == g for e in enemy_pawns):
                c["king_half_open"] += 1
            else:
                c["king_open"] += 1
    zone = chess.SquareSet(chess.BB_KING_ATTACKS[king]) | chess.SquareSet(chess.BB_SQUARES[king])
    c["zone"] = {name: sum(len(cb.attacks(s) & zone) for s in cb.pieces(t, enemy))
                 for t, name in _NAMES.items()}
    own = cb.occupied_co[color]
    c["mobility"] = {name: [len(chess.SquareSet(cb.attacks_mask(s) & ~own) - enemy_pawn_attacks)
                            for s in cb.pieces(t, color)]
                     for t, name in _NAMES.items() if t != chess.PAWN}
    c["bishops"] = len(cb.pieces(chess.BISHOP, color))
    c["rook_open"] = c["rook_half_open"] = c["rook_seventh"] = 0
    seventh, eighth = (6, 7) if color == chess.WHITE else (1, 0)
    enemy_king = cb.king(enemy)
    for s in cb.pieces(chess.ROOK, color):
        g = chess.square_file(s)
        if not any(chess.square_file(p) == g for p in pawns):
            if any(chess.square_file(e) == g for e in enemy_pawns):
                c["rook_half_open"] += 1
            else:
                c["rook_open"] += 1
        if chess.square_rank(s) == seventh and (
                chess.square_rank(enemy_king) == eighth
                or any(chess.square_rank(e) == seventh for e in enemy_pawns)):
            c["rook_seventh"] += 1
    # threats: python-chess's attackers of each own piece's square, by the attacker's type
    c["threat_by_pawn"] = c["threat_by_minor"] = c["threat_by_rook"] = c["hanging"] = 0
    for t in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
        for s in cb.pieces(t, color):
            attackers = {cb.piece_type_at(a) for a in cb.attackers(enemy, s)}
            c["threat_by_pawn"] += chess.PAWN in attackers
            c["threat_by_minor"] += t in (chess.ROOK, chess.QUEEN) and bool(
                attackers & {chess.KNIGHT, chess.BISHOP})
            c["threat_by_rook"] += t == chess.QUEEN and chess.ROOK in attackers
            c["hanging"] += bool(attackers) and not cb.attackers(color, s)
    return c


def _side_terms(c):
    w = WEIGHTS

    def times(n, key):
        return n * w[key][0], n * w[key][1]

    def plus(*pairs):
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)

    passed = plus(*[(w["passed_pawn"]["mg"][r], w["passed_pawn"]["eg"][r]) for r in c["passed"]],
                  times(c["free"], "passed_pawn_free_path"),
                  times(c["blocked"], "passed_pawn_blocked"))
    zone = plus(*[(n * w["king_zone_attack"][name][0], n * w["king_zone_attack"][name][1])
                  for name, n in c["zone"].items()])
    mobility = []
    for name, counts in c["mobility"].items():
        entry = w["mobility"][name]
        for n in counts:
            mobility.append(((n - entry["centre"]) * entry["per_square"][0],
                             (n - entry["centre"]) * entry["per_square"][1]))
    return {
        "passed_pawns": passed,
        "isolated_pawns": times(c["isolated"], "isolated_pawn"),
        "doubled_pawns": times(c["doubled"], "doubled_pawn"),
        "backward_pawns": times(c["backward"], "backward_pawn"),
        "connected_pawns": times(c["connected"], "connected_pawn"),
        "king_shield": plus(times(c["near"], "king_shield_near"), times(c["far"], "king_shield_far")),
        "king_files": plus(times(c["king_open"], "king_open_file"),
                           times(c["king_half_open"], "king_half_open_file")),
        "king_attacks": zone,
        "mobility": plus(*mobility),
        "bishop_pair": tuple(w["bishop_pair"]) if c["bishops"] >= 2 else (0, 0),
        "rook_files": plus(times(c["rook_open"], "rook_open_file"),
                           times(c["rook_half_open"], "rook_half_open_file")),
        "rook_seventh": times(c["rook_seventh"], "rook_seventh"),
        "threats": plus(*[times(c[k], key) for k, key in (
            ("threat_by_pawn", "threat_by_pawn"), ("threat_by_minor", "threat_by_minor"),
            ("threat_by_rook", "threat_by_rook"), ("hanging", "hanging_piece"))]),
    }


def reference_terms(cb):
    """{term: (mg, eg)} from white's view: white's value minus black's, and the tempo."""
    white, black = _side_terms(side_counts(cb, chess.WHITE)), _side_terms(side_counts(cb, chess.BLACK))
    out = {name: (white[name][0] - black[name][0], white[name][1] - black[name][1])
           for name in white}
    tempo = WEIGHTS["tempo"]
    out["tempo"] = (tempo[0], tempo[1]) if cb.turn == chess.WHITE else (-tempo[0], -tempo[1])
    return out

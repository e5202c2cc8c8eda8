"""The "terms" evaluation: material and piece-square tables plus pawn structure, king safety,
mobility, piece terms and threats (docs/semantics.md, section 6, "The terms evaluation").

Every term is computed for one side in that side's own frame (its ranks flipped for black, so
the side always plays up the board, as the OpenCL kernels and the hardware see it), and a term's
value from white's view is white's minus black's: a position and its colour-mirrored twin
therefore score exactly alike. The weights are contract/evalweights.py's (evalweights.json).

Boards are turned into 64-bit words (bit s = square s) once per call; attack sets follow the
contract's rule for rays (a ray stops at the first occupied square, which it reaches).
"""

from functools import lru_cache

from chessaccel.contract.defs import EVAL_MAX, PieceType
from chessaccel.contract.evalweights import (
    check_evaluation, BACKWARD_PAWN, BISHOP_PAIR, CONNECTED_PAWN, DOUBLED_PAWN, ISOLATED_PAWN, KING_HALF_OPEN_FILE,
    KING_OPEN_FILE, KING_SHIELD_FAR, KING_SHIELD_NEAR, KING_ZONE_ATTACK, MOBILITY_CENTRE,
    MOBILITY_PER_SQUARE, PASSED_PAWN_BLOCKED, PASSED_PAWN_EG, PASSED_PAWN_FREE_PATH,
    PASSED_PAWN_MG, ROOK_HALF_OPEN_FILE, ROOK_OPEN_FILE, ROOK_SEVENTH, TEMPO, TERMS, WEIGHT_NAMES,
    HANGING_PIECE, THREAT_BY_MINOR, THREAT_BY_PAWN, THREAT_BY_ROOK, square_tables)
from chessaccel.contract.geometry import (BISHOP_DIRS, COLOR_OF, EMPTY, KING_TARGETS,
                                          KNIGHT_TARGETS, ROOK_DIRS, TYPE_OF, ray)
from .evaluate import evaluate, material_pst, phase, taper

__all__ = ["term_values", "side_features", "evaluate_terms", "FEATURES", "frames", "EVALUATORS",
           "evaluator", "feature_counts"]

P, N, B, R, Q, K = (PieceType[n].value for n in ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))

_ALL = (1 << 64) - 1
_FILE_A = 0x0101010101010101
_NOT_A = _ALL ^ _FILE_A
_NOT_H = _ALL ^ (_FILE_A << 7)


def _mask(squares):
    out = 0
    for s in squares:
        out |= 1 << s
    return out


def _on_board(f, r):
    return 0 <= f < 8 and 0 <= r < 8


# --- masks of the own frame (the side plays up the board), per square --------------------------

_FILE = tuple(_FILE_A << f for f in range(8))
#: the squares ahead of s on its file
_FRONT = tuple(_mask(s + 8 * k for k in range(1, 8 - s // 8)) for s in range(64))
#: the squares ahead of s on its file and the two beside it (where an enemy pawn stops "passed")
_PASSED_SPAN = tuple(_mask(8 * r + f for r in range(s // 8 + 1, 8)
                           for f in (s % 8 - 1, s % 8, s % 8 + 1) if 0 <= f < 8)
                     for s in range(64))
#: the files beside file f
_ADJACENT_FILES = tuple((_FILE[f - 1] if f > 0 else 0) | (_FILE[f + 1] if f < 7 else 0)
                        for f in range(8))
#: the squares of the files beside s on its rank and the ranks below (the pawns that could
#: still come up to support it)
_ADJACENT_BEHIND = tuple(_ADJACENT_FILES[s % 8] & ((1 << (8 * (s // 8 + 1))) - 1)
                         for s in range(64))
#: beside s on its rank / diagonally behind it (an own pawn there defends s)
_PHALANX = tuple(_mask(s + d for d in (-1, 1) if _on_board(s % 8 + d, s // 8)) for s in range(64))
_SUPPORT = tuple(_mask(s - 8 + d for d in (-1, 1) if _on_board(s % 8 + d, s // 8 - 1))
                 for s in range(64))
#: the king's shield: the three squares one rank up (file - 1 .. file + 1), and two ranks up
_SHIELD_NEAR = tuple(_mask(8 * (s // 8 + 1) + f for f in (s % 8 - 1, s % 8, s % 8 + 1)
                           if _on_board(f, s // 8 + 1)) for s in range(64))
_SHIELD_FAR = tuple(_mask(8 * (s // 8 + 2) + f for f in (s % 8 - 1, s % 8, s % 8 + 1)
                          if _on_board(f, s // 8 + 2)) for s in range(64))
#: the king's zone: its square and the squares next to it
_ZONE = tuple(_mask(KING_TARGETS[s]) | (1 << s) for s in range(64))
_KING = tuple(_mask(KING_TARGETS[s]) for s in range(64))
_KNIGHT = tuple(_mask(KNIGHT_TARGETS[s]) for s in range(64))
_RAYS = {t: tuple(tuple(tuple(ray(s, df, dr)) for df, dr in dirs) for s in range(64))
         for t, dirs in ((B, BISHOP_DIRS), (R, ROOK_DIRS))}
_RANK_7 = 0xFF << 48
_RANK_8 = 0xFF << 56


def _flip(x):
    """The word with its ranks reversed (the other side's frame)."""
    return int.from_bytes(x.to_bytes(8, "little"), "big")


def _slider(s, occupied, rays):
    out = 0
    for line in rays[s]:
        for t in line:
            out |= 1 << t
            if occupied >> t & 1:
                break
    return out


#: the squares whose occupancy decides a slider's attacks (its rays less the board's edge)
_RELEVANT = {t: tuple(_mask(q for line in _RAYS[t][s] for q in line[:-1]) for s in range(64))
             for t in (B, R)}


@lru_cache(maxsize=1 << 16)
def _slider_attacks(t, s, relevant_occupancy):
    """A bishop's or rook's attacks by its relevant occupancy (cached: the search meets the
    same lines again and again)."""
    return _slider(s, relevant_occupancy, _RAYS[t])


def _attacks(t, s, occupied):
    if t == N:
        return _KNIGHT[s]
    if t == Q:
        return (_slider_attacks(B, s, occupied & _RELEVANT[B][s])
                | _slider_attacks(R, s, occupied & _RELEVANT[R][s]))
    return _slider_attacks(t, s, occupied & _RELEVANT[t][s])


def _squares(x):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


#: The counts side_features reports for one side (section 6 names each).
FEATURES = ("passed_ranks", "passed_free", "passed_blocked", "isolated", "doubled", "backward",
            "connected", "shield_near", "shield_far", "king_open_files", "king_half_open_files",
            "zone_attacks", "mobility", "bishops", "rook_open_files", "rook_half_open_files",
            "rooks_seventh", "threat_by_pawn", "threat_by_minor", "threat_by_rook", "hanging")


def side_features(own, enemy):
    """The features of one side in its own frame. ``own`` and ``enemy`` map a PieceType value
    to the word of that side's pieces of the type (the side plays up the board). Returns a dict:
    ``passed_ranks`` (the relative rank of each passed pawn), counts of the pawn and rook
    features, ``zone_attacks`` and ``mobility`` as {PieceType value: count} (enemy attackers /
    own mobile pieces' target squares, summed per type), ``bishops``."""
    own_all = own[P] | own[N] | own[B] | own[R] | own[Q] | own[K]
    occupied = own_all | enemy[P] | enemy[N] | enemy[B] | enemy[R] | enemy[Q] | enemy[K]
    pawns, enemy_pawns = own[P], enemy[P]
    # squares the enemy's pawns take on (they move down the board)
    enemy_pawn_attacks = ((enemy_pawns >> 7) & _NOT_A) | ((enemy_pawns >> 9) & _NOT_H)
    passed_ranks = []
    passed_free = passed_blocked = isolated_count = doubled = backward = connected = 0
    for s in _squares(pawns):
        if not enemy_pawns & _PASSED_SPAN[s]:
            passed_ranks.append(s >> 3)
            if not occupied & _FRONT[s]:
                passed_free += 1
            elif occupied >> (s + 8) & 1:
                passed_blocked += 1
        isolated = not pawns & _ADJACENT_FILES[s & 7]
        isolated_count += isolated
        if pawns & _FRONT[s]:
            doubled += 1
        if (not isolated and not pawns & _ADJACENT_BEHIND[s]
                and enemy_pawn_attacks >> (s + 8) & 1):
            backward += 1
        if pawns & (_PHALANX[s] | _SUPPORT[s]):
            connected += 1
    f = {"passed_ranks": passed_ranks, "passed_free": passed_free,
         "passed_blocked": passed_blocked, "isolated": isolated_count, "doubled": doubled,
         "backward": backward, "connected": connected}
    # king safety
    k = (own[K] & -own[K]).bit_length() - 1
    f["shield_near"] = (pawns & _SHIELD_NEAR[k]).bit_count()
    f["shield_far"] = (pawns & _SHIELD_FAR[k]).bit_count()
    f["king_open_files"] = f["king_half_open_files"] = 0
    kf = k & 7
    for file in range(max(kf - 1, 0), min(kf + 1, 7) + 1):
        if not pawns & _FILE[file]:
            if enemy_pawns & _FILE[file]:
                f["king_half_open_files"] += 1
            else:
                f["king_open_files"] += 1
    # each knight's, bishop's, rook's and queen's attacks, found once for the king zone, the
    # mobility and the threats
    own_attacks = {t: [_attacks(t, s, occupied) for s in _squares(own[t])] for t in (N, B, R, Q)}
    enemy_attacks = {t: [_attacks(t, s, occupied) for s in _squares(enemy[t])]
                     for t in (N, B, R, Q)}
    zone = _ZONE[k]
    zone_attacks = {P: (((enemy_pawns >> 7) & _NOT_A) & zone).bit_count()
                    + (((enemy_pawns >> 9) & _NOT_H) & zone).bit_count()}
    for t in (N, B, R, Q):
        zone_attacks[t] = sum((a & zone).bit_count() for a in enemy_attacks[t])
    f["zone_attacks"] = zone_attacks
    # mobility: targets not held by own pieces nor taken on by an enemy pawn
    free = _ALL & ~own_all & ~enemy_pawn_attacks
    f["mobility"] = {t: [(a & free).bit_count() for a in own_attacks[t]] for t in (N, B, R, Q)}
    f["bishops"] = own[B].bit_count()
    f["rook_open_files"] = f["rook_half_open_files"] = f["rooks_seventh"] = 0
    enemy_on_back = bool(enemy[K] & _RANK_8) or bool(enemy_pawns & _RANK_7)
    for s in _squares(own[R]):
        file = _FILE[s & 7]
        if not pawns & file:
            if enemy_pawns & file:
                f["rook_half_open_files"] += 1
            else:
                f["rook_open_files"] += 1
        if s >> 3 == 6 and enemy_on_back:
            f["rooks_seventh"] += 1
    # threats: own pieces on squares the enemy attacks, by the attacker's kind
    def union(attacks, types):
        out = 0
        for t in types:
            for a in attacks[t]:
                out |= a
        return out
    enemy_minor, enemy_rook = union(enemy_attacks, (N, B)), union(enemy_attacks, (R,))
    enemy_any = enemy_pawn_attacks | enemy_minor | union(enemy_attacks, (R, Q))
    defended = (((pawns << 7) & _NOT_H & _ALL) | ((pawns << 9) & _NOT_A & _ALL)
                | union(own_attacks, (N, B, R, Q)))
    for s in _squares(enemy[K]):
        enemy_any |= _KING[s]
    for s in _squares(own[K]):
        defended |= _KING[s]
    pieces = own[N] | own[B] | own[R] | own[Q]
    f["threat_by_pawn"] = (pieces & enemy_pawn_attacks).bit_count()
    f["threat_by_minor"] = ((own[R] | own[Q]) & enemy_minor).bit_count()
    f["threat_by_rook"] = (own[Q] & enemy_rook).bit_count()
    f["hanging"] = (pieces & enemy_any & ~defended).bit_count()
    return f


def _side_terms(f):
    """(mg, eg) of each term for one side's features."""
    def times(n, w):
        return n * w[0], n * w[1]
    mobility_mg = mobility_eg = 0
    for t, counts in f["mobility"].items():
        w, centre = MOBILITY_PER_SQUARE[t], MOBILITY_CENTRE[t]
        for c in counts:
            mobility_mg += w[0] * (c - centre)
            mobility_eg += w[1] * (c - centre)
    passed_mg = sum(PASSED_PAWN_MG[r] for r in f["passed_ranks"])
    passed_eg = sum(PASSED_PAWN_EG[r] for r in f["passed_ranks"])
    free, blocked = times(f["passed_free"], PASSED_PAWN_FREE_PATH), \
        times(f["passed_blocked"], PASSED_PAWN_BLOCKED)
    near, far = times(f["shield_near"], KING_SHIELD_NEAR), times(f["shield_far"], KING_SHIELD_FAR)
    open_, half = times(f["king_open_files"], KING_OPEN_FILE), \
        times(f["king_half_open_files"], KING_HALF_OPEN_FILE)
    rook_open, rook_half = times(f["rook_open_files"], ROOK_OPEN_FILE), \
        times(f["rook_half_open_files"], ROOK_HALF_OPEN_FILE)
    zone_mg = sum(n * KING_ZONE_ATTACK[t][0] for t, n in f["zone_attacks"].items())
    zone_eg = sum(n * KING_ZONE_ATTACK[t][1] for t, n in f["zone_attacks"].items())
    return {
        "passed_pawns": (passed_mg + free[0] + blocked[0], passed_eg + free[1] + blocked[1]),
        "isolated_pawns": times(f["isolated"], ISOLATED_PAWN),
        "doubled_pawns": times(f["doubled"], DOUBLED_PAWN),
        "backward_pawns": times(f["backward"], BACKWARD_PAWN),
        "connected_pawns": times(f["connected"], CONNECTED_PAWN),
        "king_shield": (near[0] + far[0], near[1] + far[1]),
        "king_files": (open_[0] + half[0], open_[1] + half[1]),
        "king_attacks": (zone_mg, zone_eg),
        "mobility": (mobility_mg, mobility_eg),
        "bishop_pair": BISHOP_PAIR if f["bishops"] >= 2 else (0, 0),
        "rook_files": (rook_open[0] + rook_half[0], rook_open[1] + rook_half[1]),
        "rook_seventh": times(f["rooks_seventh"], ROOK_SEVENTH),
        "threats": tuple(sum(parts) for parts in zip(
            times(f["threat_by_pawn"], THREAT_BY_PAWN), times(f["threat_by_minor"], THREAT_BY_MINOR),
            times(f["threat_by_rook"], THREAT_BY_ROOK), times(f["hanging"], HANGING_PIECE))),
    }


def frames(board):
    """(white's pieces, black's pieces) in white's frame and (black's, white's) in black's:
    two pairs of {PieceType value: word} for side_features."""
    words = ([0] * 7, [0] * 7)
    for s, code in enumerate(board.sq):
        if code != EMPTY:
            words[COLOR_OF[code]][TYPE_OF[code]] |= 1 << s
    white, black = words
    white_flipped = [_flip(x) for x in white]
    black_flipped = [_flip(x) for x in black]
    return (white, black), (black_flipped, white_flipped)


#: The terms evaluation's material + piece-square tables (evalweights.json's "squares", or the
#: pst evaluation's).
_SQUARES = square_tables("terms")


def term_values(board):
    """{term: (mg, eg)} from white's view, in TERMS order: material + piece-square values (the
    terms evaluation's tables), then each term's white value minus black's, and the tempo of
    the side to move."""
    white_frame, black_frame = frames(board)
    w = _side_terms(side_features(*white_frame))
    b = _side_terms(side_features(*black_frame))
    out = {"material_pst": material_pst(board, _SQUARES)}
    for name in TERMS[1:-1]:
        out[name] = (w[name][0] - b[name][0], w[name][1] - b[name][1])
    out["tempo"] = TEMPO if board.side == 0 else (-TEMPO[0], -TEMPO[1])
    return out


def evaluate_terms(board):
    """The "terms" evaluation: centipawns from the side to move's view, clamped to
    +-EVAL_MAX; the sums of every term tapered as the "pst" evaluation tapers its one."""
    mg = eg = 0
    for m, e in term_values(board).values():
        mg += m
        eg += e
    if board.side == 1:
        mg, eg = -mg, -eg
    return max(-EVAL_MAX, min(EVAL_MAX, taper(mg, eg, phase(board))))


def _side_counts(f):
    """One side's count for each weight of WEIGHT_NAMES (what the weight is multiplied by)."""
    by_name = {f"passed_pawn[{r}]": f["passed_ranks"].count(r) for r in range(1, 7)}
    by_name.update(passed_pawn_free_path=f["passed_free"], passed_pawn_blocked=f["passed_blocked"],
                   isolated_pawn=f["isolated"], doubled_pawn=f["doubled"],
                   backward_pawn=f["backward"], connected_pawn=f["connected"],
                   king_shield_near=f["shield_near"], king_shield_far=f["shield_far"],
                   king_open_file=f["king_open_files"],
                   king_half_open_file=f["king_half_open_files"],
                   bishop_pair=int(f["bishops"] >= 2), rook_open_file=f["rook_open_files"],
                   rook_half_open_file=f["rook_half_open_files"],
                   rook_seventh=f["rooks_seventh"], tempo=0,
                   threat_by_pawn=f["threat_by_pawn"], threat_by_minor=f["threat_by_minor"],
                   threat_by_rook=f["threat_by_rook"], hanging_piece=f["hanging"])
    for name, t in (("pawn", P), ("knight", N), ("bishop", B), ("rook", R), ("queen", Q)):
        by_name[f"king_zone_attack.{name}"] = f["zone_attacks"][t]
    for name, t in (("knight", N), ("bishop", B), ("rook", R), ("queen", Q)):
        by_name[f"mobility.{name}"] = sum(c - MOBILITY_CENTRE[t] for c in f["mobility"][t])
    return [by_name[name] for name in WEIGHT_NAMES]


def feature_counts(board):
    """The terms evaluation as counts: a tuple, in WEIGHT_NAMES order (contract/evalweights.py),
    of how many times each weight is added from white's view (white's count minus black's; the
    tempo +1 with white to move, -1 with black; a mobility count is the sum of (targets - centre)
    over the pieces, the centres being fixed). So the terms' sums are linear in the weights:
    ``sum(term_values(board).values())`` is ``material_pst(board, square_tables("terms"))`` plus the dot products of
    these counts with the mg and eg weights, and evaluate_terms is their taper (a tuner's
    features, host/tunecli.py)."""
    white_frame, black_frame = frames(board)
    white = _side_counts(side_features(*white_frame))
    black = _side_counts(side_features(*black_frame))
    out = [w - b for w, b in zip(white, black)]
    out[WEIGHT_NAMES.index("tempo")] = 1 if board.side == 0 else -1
    return tuple(out)


#: The model's function of each evaluation (contract/evalweights.py's EVALUATIONS).
EVALUATORS = {"pst": evaluate, "terms": evaluate_terms}


def evaluator(name):
    """The static evaluation function called ``name``; EvaluationError (one line) if none is."""
    return EVALUATORS[check_evaluation(name)]

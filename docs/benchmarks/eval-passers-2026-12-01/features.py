"""Candidate evaluation features, screened by how far they lower the held-out loss (scratch)."""
import sys
import numpy as np
import chess
from chessaccel.model.position import board_from_chess
from chessaccel.model import evalterms as et

P, N, B, R, Q, K = et.P, et.N, et.B, et.R, et.Q, et.K
LIGHT = 0x55AA55AA55AA55AA

def cheb(a, b):
    return max(abs((a & 7) - (b & 7)), abs((a >> 3) - (b >> 3)))

NAMES = ["kd_sq", "kd_sq_cap", "kd_lin2", "passed_enemy_kdist", "passed_own_kdist",
         "knight_outpost", "bishop_outpost", "pawn_storm", "low_mobility", "bad_bishop",
         "safe_checks", "king_pawn_dist", "weak_zone", "restricted", "rook_behind_passer",
         "queen_zone_sq", "space", "passed_unstoppable_like", "attackers_ge2"]

def side(own, enemy):
    own_all = own[P] | own[N] | own[B] | own[R] | own[Q] | own[K]
    enemy_all = enemy[P] | enemy[N] | enemy[B] | enemy[R] | enemy[Q] | enemy[K]
    occ = own_all | enemy_all
    pawns, ep = own[P], enemy[P]
    epa = ((ep >> 7) & et._NOT_A) | ((ep >> 9) & et._NOT_H)
    opa = ((pawns << 7) & et._NOT_H & et._ALL) | ((pawns << 9) & et._NOT_A & et._ALL)
    k = own[K].bit_length() - 1
    ek = enemy[K].bit_length() - 1
    zone = et._ZONE[k]
    ea = {t: [(s, et._attacks(t, s, occ)) for s in et._squares(enemy[t])] for t in (N, B, R, Q)}
    oa = {t: [(s, et._attacks(t, s, occ)) for s in et._squares(own[t])] for t in (N, B, R, Q)}
    units = 0; attackers = 0; qz = 0
    for t, u in ((N, 2), (B, 2), (R, 3), (Q, 5)):
        for s, a in ea[t]:
            c = (a & zone).bit_count()
            if c:
                attackers += 1
                units += u * c
                if t == Q: qz += c
    f = {}
    f["kd_sq"] = units * units // 16 if attackers >= 2 else 0
    f["kd_sq_cap"] = min(units, 20) ** 2 // 16
    f["kd_lin2"] = units if attackers >= 2 else 0
    f["attackers_ge2"] = max(0, attackers - 1)
    f["queen_zone_sq"] = qz * qz
    pe = po = 0; rbp = 0
    for s in et._squares(pawns):
        if not ep & et._PASSED_SPAN[s]:
            r = s >> 3
            if r >= 3:
                push = s + 8
                pe += (r - 2) * cheb(ek, push)
                po += (r - 2) * cheb(k, push)
            behind = et._FILE[s & 7] & ((1 << s) - 1)
            if own[R] & behind: rbp += 1
    f["passed_enemy_kdist"], f["passed_own_kdist"], f["rook_behind_passer"] = pe, po, rbp
    def outpost(t):
        n = 0
        for s in et._squares(own[t]):
            r = s >> 3
            if 3 <= r <= 5 and (opa >> s) & 1 and not (ep & et._PASSED_SPAN[s] & ~et._FILE[s & 7]):
                n += 1
        return n
    f["knight_outpost"], f["bishop_outpost"] = outpost(N), outpost(B)
    kf, kr = k & 7, k >> 3
    storm = 0
    for file in range(max(kf - 1, 0), min(kf + 1, 7) + 1):
        for rr in range(kr + 1, min(kr + 4, 8)):
            if ep >> (rr * 8 + file) & 1: storm += 1
    f["pawn_storm"] = storm
    free = et._ALL & ~own_all & ~epa
    low = restricted = 0
    for t in (N, B, R, Q):
        for s, a in oa[t]:
            n = (a & free).bit_count()
            if n <= 1: low += 1
            restricted += max(0, et.MOBILITY_CENTRE[t] - n)
    f["low_mobility"], f["restricted"] = low, restricted
    bb = 0
    for s in et._squares(own[B]):
        colour = LIGHT if (LIGHT >> s) & 1 else ~LIGHT & et._ALL
        bb += (pawns & colour).bit_count()
    f["bad_bishop"] = bb
    # safe checks by the enemy: squares reaching our king, attacked by an enemy piece of the type,
    # not held by enemy pieces, not defended by our pieces
    own_def = opa | et._KING[k]
    for t in (N, B, R, Q):
        for s, a in oa[t]: own_def |= a
    sc = 0
    for t in (N, B, R, Q):
        check_sq = et._attacks(t, k, occ) & ~enemy_all & ~own_def
        for s, a in ea[t]:
            sc += (a & check_sq).bit_count()
    f["safe_checks"] = sc
    allp = pawns | ep
    f["king_pawn_dist"] = min((cheb(k, s) for s in et._squares(allp)), default=0)
    enemy_any = epa | et._KING[ek]
    for t in (N, B, R, Q):
        for s, a in ea[t]: enemy_any |= a
    own_nonking = opa
    for t in (N, B, R, Q):
        for s, a in oa[t]: own_nonking |= a
    f["weak_zone"] = (zone & enemy_any & ~own_nonking).bit_count()
    centre_files = 0x3C3C3C3C3C3C3C3C
    space_mask = centre_files & (0xFFFFFF << 8)
    behind = pawns
    behind |= behind >> 8; behind |= behind >> 16; behind |= behind >> 32
    f["space"] = (space_mask & ~pawns & ~epa).bit_count() + (space_mask & behind & ~pawns & ~epa).bit_count()
    f["passed_unstoppable_like"] = 0
    return [f[n] for n in NAMES]

def features(fen):
    cb = chess.Board(fen)
    board = board_from_chess(cb)
    wf, bf = et.frames(board)
    w, b = side(*wf), side(*bf)
    return [x - y for x, y in zip(w, b)]

if __name__ == "__main__":
    from multiprocessing import Pool
    d = np.load(sys.argv[1])
    fens = [str(f) for f in d["fen"]]
    with Pool(int(sys.argv[3]) if len(sys.argv) > 3 else 2) as p:
        rows = p.map(features, fens, chunksize=2000)
    np.save(sys.argv[2], np.array(rows, dtype=np.int32))

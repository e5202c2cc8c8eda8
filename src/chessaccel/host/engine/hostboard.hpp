// The host's positions in compiled code, shared by hostboard.cpp (the host board's functions for
// Python) and hostsearch.cpp (the compiled host search): the position, move generation in the
// accelerator's order, make, keys and the draw tests. hostboard.cpp's comment says what each
// is held to.
#pragma once
#include <cstdint>
#include <cstring>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace hostboard {

enum { EMPTY = 0, PAWN = 1, KNIGHT = 2, BISHOP = 3, ROOK = 4, QUEEN = 5, KING = 6 };
constexpr int NO_EP = 64;
constexpr int MAX_MOVES = 256;

struct Pos {
    uint8_t sq[64];
    uint8_t side;           // 0 white, 1 black
    uint8_t castling;
    uint8_t ep;
    uint8_t king[2];
    uint8_t pad[3];
    uint32_t halfmove;
    uint32_t pad2;
    uint64_t key;
};
static_assert(sizeof(Pos) == 88, "the layout hostboard.py reads");

inline int type_of(int code) { return code & 7; }
inline int color_of(int code) { return code >> 3; }
inline int make_code(int color, int type) { return color << 3 | type; }
inline int file_of(int s) { return s & 7; }
inline int rank_of(int s) { return s >> 3; }
inline bool on_board(int f, int r) { return f >= 0 && f < 8 && r >= 0 && r < 8; }

// piece steps and rays, built once
inline int knight_to[64][8], knight_n[64];
inline int king_to[64][8], king_n[64];
inline int ray_sq[64][8][7], ray_n[64][8];         // directions 0-3 orthogonal, 4-7 diagonal
inline uint8_t castle_clear[64];
inline uint64_t z_piece[16][64], z_side, z_castle[16], z_ep[8];
// the order key's promotion field: PROMOTION_ORDER is queen, rook, bishop, knight
const int promo_rank[8] = {0, 0, 3, 2, 1, 0, 0, 0};
const int promo_pieces[4] = {QUEEN, ROOK, BISHOP, KNIGHT};

inline uint64_t splitmix(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct Tables {
    Tables() {
        const int kn[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
        const int dirs[8][2] = {{0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
        for (int s = 0; s < 64; s++) {
            int f = file_of(s), r = rank_of(s);
            knight_n[s] = king_n[s] = 0;
            for (auto& d : kn)
                if (on_board(f + d[0], r + d[1])) knight_to[s][knight_n[s]++] = (r + d[1]) * 8 + f + d[0];
            for (int d = 0; d < 8; d++) {
                int df = dirs[d][0], dr = dirs[d][1];
                if (on_board(f + df, r + dr)) king_to[s][king_n[s]++] = (r + dr) * 8 + f + df;
                ray_n[s][d] = 0;
                for (int k = 1; on_board(f + k * df, r + k * dr); k++)
                    ray_sq[s][d][ray_n[s][d]++] = (r + k * dr) * 8 + f + k * df;
            }
        }
        std::memset(castle_clear, 0, sizeof castle_clear);
        castle_clear[4] = 1 | 2;
        castle_clear[7] = 1;
        castle_clear[0] = 2;
        castle_clear[60] = 4 | 8;
        castle_clear[63] = 4;
        castle_clear[56] = 8;
        uint64_t state = 0x43686573734163ull;   // fixed: keys are the same in every process
        for (auto& row : z_piece)
            for (auto& z : row) z = splitmix(state);
        z_side = splitmix(state);
        for (auto& z : z_castle) z = splitmix(state);
        for (auto& z : z_ep) z = splitmix(state);
    }
};
inline Tables tables;

// Is square s attacked by a piece of colour `by`?
inline bool attacked(const Pos& p, int s, int by) {
    const uint8_t* sq = p.sq;
    int f = file_of(s), r = rank_of(s);
    int pr = r + (by == 0 ? -1 : 1);        // the rank an attacking pawn stands on
    int pawn = make_code(by, PAWN);
    if (pr >= 0 && pr < 8) {
        if (f > 0 && sq[pr * 8 + f - 1] == pawn) return true;
        if (f < 7 && sq[pr * 8 + f + 1] == pawn) return true;
    }
    int knight = make_code(by, KNIGHT), king = make_code(by, KING);
    for (int k = 0; k < knight_n[s]; k++)
        if (sq[knight_to[s][k]] == knight) return true;
    for (int k = 0; k < king_n[s]; k++)
        if (sq[king_to[s][k]] == king) return true;
    int queen = make_code(by, QUEEN), rook = make_code(by, ROOK), bishop = make_code(by, BISHOP);
    for (int d = 0; d < 8; d++) {
        int slider = d < 4 ? rook : bishop;
        for (int k = 0; k < ray_n[s][d]; k++) {
            int c = sq[ray_sq[s][d][k]];
            if (c == EMPTY) continue;
            if (c == slider || c == queen) return true;
            break;
        }
    }
    return false;
}

inline bool in_check(const Pos& p) { return attacked(p, p.king[p.side], p.side ^ 1); }

// The model Board's make (sim/model/board.py), without the key.
inline void make_board(const Pos& p, uint32_t move, Pos& c) {
    std::memcpy(&c, &p, sizeof(Pos));
    int f = move & 63, t = (move >> 6) & 63, promo = (move >> 12) & 7;
    int piece = p.sq[f], ptype = type_of(piece);
    int captured = p.sq[t];
    if (ptype == PAWN && t == p.ep) {
        int taken = rank_of(f) * 8 + file_of(t);
        captured = c.sq[taken];
        c.sq[taken] = EMPTY;
    }
    c.sq[t] = promo ? make_code(p.side, promo) : piece;
    c.sq[f] = EMPTY;
    if (ptype == KING) {
        c.king[p.side] = t;
        if (t - f == 2 || f - t == 2) {
            int rook_from = t > f ? f + 3 : f - 4, rook_to = t > f ? f + 1 : f - 1;
            c.sq[rook_to] = c.sq[rook_from];
            c.sq[rook_from] = EMPTY;
        }
    }
    c.castling = p.castling & ~(castle_clear[f] | castle_clear[t]);
    c.ep = (ptype == PAWN && (t - f == 16 || f - t == 16)) ? (f + t) / 2 : NO_EP;
    c.side = p.side ^ 1;
    c.halfmove = (ptype == PAWN || captured != EMPTY) ? 0 : p.halfmove + 1;
}

inline bool legal_after(const Pos& p, uint32_t move) {
    Pos c;
    make_board(p, move, c);
    return !attacked(c, c.king[p.side], c.side);
}

// python-chess's generate_pseudo_legal_ep capturers: own pawns beside the ep square's pawn
inline int ep_capturers(const Pos& p, int out[2]) {
    int n = 0, ep = p.ep;
    if (ep == NO_EP || p.sq[ep] != EMPTY) return 0;
    int r = p.side == 0 ? 4 : 3;
    if (rank_of(ep) != (p.side == 0 ? 5 : 2)) return 0;
    int pawn = make_code(p.side, PAWN), f = file_of(ep);
    if (f > 0 && p.sq[r * 8 + f - 1] == pawn) out[n++] = r * 8 + f - 1;
    if (f < 7 && p.sq[r * 8 + f + 1] == pawn) out[n++] = r * 8 + f + 1;
    return n;
}

inline bool has_legal_ep(const Pos& p) {
    int from[2], n = ep_capturers(p, from);
    for (int k = 0; k < n; k++)
        if (legal_after(p, from[k] | p.ep << 6)) return true;
    return false;
}

inline uint64_t compute_key(const Pos& p) {
    uint64_t k = 0;
    for (int s = 0; s < 64; s++)
        if (p.sq[s]) k ^= z_piece[p.sq[s]][s];
    if (p.side) k ^= z_side;
    k ^= z_castle[p.castling & 15];
    if (p.ep != NO_EP && has_legal_ep(p)) k ^= z_ep[file_of(p.ep)];
    return k;
}

// The key's term of a square's code (none for an empty square).
inline uint64_t z_square(int code, int s) { return code ? z_piece[code][s] : 0; }

// c := p after `move` (make_board), its key from p's (which must be compute_key(p)): the squares
// the move changed, the side, the castling rights and the en-passant terms of both.
inline void make(const Pos& p, uint32_t move, Pos& c) {
    make_board(p, move, c);
    int f = move & 63, t = (move >> 6) & 63;
    uint64_t k = p.key ^ z_side ^ z_castle[p.castling & 15] ^ z_castle[c.castling & 15];
    if (p.ep != NO_EP && has_legal_ep(p)) k ^= z_ep[file_of(p.ep)];
    k ^= z_square(p.sq[f], f) ^ z_square(c.sq[f], f) ^ z_square(p.sq[t], t) ^ z_square(c.sq[t], t);
    int ptype = type_of(p.sq[f]);
    if (ptype == PAWN && t == p.ep) {
        int taken = rank_of(f) * 8 + file_of(t);
        k ^= z_square(p.sq[taken], taken) ^ z_square(c.sq[taken], taken);
    } else if (ptype == KING && (t - f == 2 || f - t == 2)) {
        int rook_from = t > f ? f + 3 : f - 4, rook_to = t > f ? f + 1 : f - 1;
        k ^= z_square(p.sq[rook_from], rook_from) ^ z_square(c.sq[rook_from], rook_from)
           ^ z_square(p.sq[rook_to], rook_to) ^ z_square(c.sq[rook_to], rook_to);
    }
    if (c.ep != NO_EP && has_legal_ep(c)) k ^= z_ep[file_of(c.ep)];
    c.key = k;
}

struct MoveList {
    uint32_t move[MAX_MOVES];
    int n = 0;
    void add(uint32_t m) { move[n++] = m; }
};

inline void add_pawn_move(MoveList& ml, int f, int t, bool last_rank) {
    if (last_rank)
        for (int promo : promo_pieces) ml.add(f | t << 6 | promo << 12);
    else
        ml.add(f | t << 6);
}

// The squares (as bits, square s bit s) of colour `color`'s pieces.
inline uint64_t pieces_of(const Pos& p, int color) {
#ifdef __SSE2__
    uint64_t empty = 0, black = 0;
    for (int chunk = 0; chunk < 4; chunk++) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.sq + 16 * chunk));
        empty |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()))
                 << (16 * chunk);
        // the colour bit (3) moved to each byte's top, where movemask reads it
        black |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_slli_epi16(v, 4)) << (16 * chunk);
    }
    return ~empty & (color ? black : ~black);
#else
    uint64_t out = 0;
    for (int s = 0; s < 64; s++)
        if (p.sq[s] != EMPTY && color_of(p.sq[s]) == color) out |= 1ull << s;
    return out;
#endif
}

// Pseudo-legal moves (any order); castling only where it is legal. `check`: in_check(p).
inline void pseudo_moves(const Pos& p, MoveList& ml, bool check) {
    const uint8_t* sq = p.sq;
    int us = p.side, them = us ^ 1;
    int up = us == 0 ? 8 : -8, start = us == 0 ? 1 : 6, last = us == 0 ? 7 : 0;
    for (uint64_t own = pieces_of(p, us); own; own &= own - 1) {
        int f = __builtin_ctzll(own), c = sq[f];
        int type = type_of(c);
        if (type == PAWN) {
            int one = f + up;
            bool promotes = rank_of(one) == last;
            if (sq[one] == EMPTY) {
                add_pawn_move(ml, f, one, promotes);
                if (rank_of(f) == start && sq[one + up] == EMPTY) ml.add(f | (one + up) << 6);
            }
            for (int df = -1; df <= 1; df += 2) {
                int tf = file_of(f) + df;
                if (tf < 0 || tf > 7) continue;
                int t = one + df, v = sq[t];
                if (v != EMPTY && color_of(v) == them) add_pawn_move(ml, f, t, promotes);
            }
        } else if (type == KNIGHT || type == KING) {
            const int* to = type == KNIGHT ? knight_to[f] : king_to[f];
            int n = type == KNIGHT ? knight_n[f] : king_n[f];
            for (int k = 0; k < n; k++) {
                int v = sq[to[k]];
                if (v == EMPTY || color_of(v) == them) ml.add(f | to[k] << 6);
            }
        } else {
            int d0 = type == BISHOP ? 4 : 0, d1 = type == ROOK ? 4 : 8;
            for (int d = d0; d < d1; d++)
                for (int k = 0; k < ray_n[f][d]; k++) {
                    int t = ray_sq[f][d][k], v = sq[t];
                    if (v == EMPTY) { ml.add(f | t << 6); continue; }
                    if (color_of(v) == them) ml.add(f | t << 6);
                    break;
                }
        }
    }
    int from[2], n = ep_capturers(p, from);
    for (int k = 0; k < n; k++) ml.add(from[k] | p.ep << 6);
    // castling (python-chess's rules for standard chess: the rights, king and rook in place,
    // the squares between empty, the king not in check and not passing an attacked square)
    int home = us == 0 ? 4 : 60, king = make_code(us, KING), rook = make_code(us, ROOK);
    int rights = p.castling >> (2 * us);
    // the king on its home square: attacked there is in check
    if ((rights & 3) && sq[home] == king
            && (p.king[us] == home ? !check : !attacked(p, home, them))) {
        if ((rights & 1) && sq[home + 3] == rook && sq[home + 1] == EMPTY && sq[home + 2] == EMPTY
                && !attacked(p, home + 1, them) && !attacked(p, home + 2, them))
            ml.add(home | (home + 2) << 6);
        if ((rights & 2) && sq[home - 4] == rook && sq[home - 1] == EMPTY && sq[home - 2] == EMPTY
                && sq[home - 3] == EMPTY && !attacked(p, home - 1, them) && !attacked(p, home - 2, them))
            ml.add(home | (home - 2) << 6);
    }
}

// The squares (as bits) of the side to move's pieces that are the only piece between their
// king and an enemy slider on its line: the pieces whose move may expose the king.
inline uint64_t pinned(const Pos& p) {
    int king = p.king[p.side], us = p.side, them = us ^ 1;
    if (king >= 64) return ~0ull;
    int queen = make_code(them, QUEEN);
    uint64_t out = 0;
    for (int d = 0; d < 8; d++) {
        int slider = make_code(them, d < 4 ? ROOK : BISHOP), own = -1;
        for (int k = 0; k < ray_n[king][d]; k++) {
            int s = ray_sq[king][d][k], c = p.sq[s];
            if (c == EMPTY) continue;
            if (own < 0 && color_of(c) == us) { own = s; continue; }
            if (own >= 0 && (c == slider || c == queen)) out |= 1ull << own;
            break;
        }
    }
    return out;
}

// Out of check, a move by a piece that is not pinned to its own king (pinned(p): `pins`) cannot
// expose the king, save the king's own moves and en passant; only those are played out.
inline bool needs_test(const Pos& p, uint32_t move, bool check, uint64_t pins) {
    int f = move & 63, t = (move >> 6) & 63, king = p.king[p.side];
    return check || f == king || (pins >> f & 1) || (t == p.ep && type_of(p.sq[f]) == PAWN);
}

inline int legal_moves(const Pos& p, uint32_t* out) {
    MoveList ml;
    bool check = in_check(p);
    pseudo_moves(p, ml, check);
    uint64_t pins = check ? 0 : pinned(p);
    int n = 0;
    for (int k = 0; k < ml.n; k++)
        if (!needs_test(p, ml.move[k], check, pins) || legal_after(p, ml.move[k]))
            out[n++] = ml.move[k];
    return n;
}

inline bool has_legal_move(const Pos& p) {
    MoveList ml;
    bool check = in_check(p);
    pseudo_moves(p, ml, check);
    uint64_t pins = check ? 0 : pinned(p);
    for (int k = 0; k < ml.n; k++)
        if (!needs_test(p, ml.move[k], check, pins) || legal_after(p, ml.move[k])) return true;
    return false;
}

constexpr uint32_t CASTLING_STAGE = 1u << 30;
constexpr uint32_t QUIET_CLASS_KEY = 6;     // the order key's victim field for a quiet move

// order.ordered_moves's key: stage, victim class (highest first), the victim's relative
// square, the aggressor's type, its relative square, the promotion's rank
inline uint32_t order_key(const Pos& p, uint32_t move, int ep_hot) {
    int f = move & 63, t = (move >> 6) & 63, promo = (move >> 12) & 7;
    int aggressor = type_of(p.sq[f]);
    if (aggressor == KING && (t - f == 2 || f - t == 2)) return CASTLING_STAGE + (t > f ? 0 : 1);
    int flip = p.side == 0 ? 0 : 56, victim = p.sq[t], cls;
    if (victim != EMPTY) cls = type_of(victim) + 1;
    else if (t == ep_hot) cls = 2;
    else cls = 1;
    return (uint32_t)((7 - cls) << 20 | (t ^ flip) << 14 | aggressor << 10 | (f ^ flip) << 4
                      | promo_rank[promo]);
}

// the ep square when a pawn of the side to move attacks it (order._en_passant_is_hot), else -1
inline int hot_ep(const Pos& p) {
    int ep = p.ep;
    if (ep == NO_EP) return -1;
    int pr = rank_of(ep) + (p.side == 0 ? -1 : 1), f = file_of(ep);
    if (pr < 0 || pr > 7) return -1;
    int pawn = make_code(p.side, PAWN);
    if ((f > 0 && p.sq[pr * 8 + f - 1] == pawn) || (f < 7 && p.sq[pr * 8 + f + 1] == pawn)) return ep;
    return -1;
}

inline int index_of(const uint32_t* moves, int n, uint32_t m) {
    for (int k = 0; k < n; k++)
        if (moves[k] == m) return k;
    return -1;
}

inline bool insufficient_for(const Pos& p, int color) {
    int own = 0, own_knights = 0, own_bishops = 0, other_minor_or_rook = 0;
    int pawns = 0, knights = 0, bishops_dark = 0, bishops_light = 0;
    for (int s = 0; s < 64; s++) {
        int c = p.sq[s];
        if (c == EMPTY) continue;
        int t = type_of(c);
        if (t == PAWN) pawns++;
        if (t == KNIGHT) knights++;
        if (t == BISHOP) (((file_of(s) + rank_of(s)) & 1) ? bishops_light : bishops_dark)++;
        if (color_of(c) == color) {
            own++;
            if (t == PAWN || t == ROOK || t == QUEEN) return false;
            if (t == KNIGHT) own_knights++;
            if (t == BISHOP) own_bishops++;
        } else if (t != KING && t != QUEEN) {
            other_minor_or_rook++;
        }
    }
    if (own_knights) return own <= 2 && !other_minor_or_rook;
    if (own_bishops) return (!bishops_dark || !bishops_light) && !pawns && !knights;
    return true;
}

// Sort order_key(...) << 32 | move values (unique keys) ascending: a bucket per class and
// relative target square (the key's top fields), found through one bitmask per class, each
// bucket a list kept in order (it rarely holds more than one or two); castling (its own stage)
// last. An insertion sort of the whole list cost more than the moves' generation.
inline void sort_keyed(uint64_t* keyed, int n) {
    constexpr int CLASSES = 7;              // the class field: 7 - (1 .. 7)
    uint64_t occupied[CLASSES] = {};
    int16_t head[CLASSES][64];              // read only where `occupied` has the bit
    int16_t next[MAX_MOVES];
    uint64_t castles[2];
    int nc = 0;
    for (int k = 0; k < n; k++) {
        uint64_t v = keyed[k];
        uint32_t key = (uint32_t)(v >> 32);
        if (key >= CASTLING_STAGE) {
            if (nc && castles[0] > v) { castles[1] = castles[0]; castles[0] = v; }
            else castles[nc] = v;
            nc++;
            continue;
        }
        int cls = key >> 20, to = (key >> 14) & 63;
        uint64_t bit = 1ull << to;
        if (!(occupied[cls] & bit)) {
            occupied[cls] |= bit;
            head[cls][to] = (int16_t)k;
            next[k] = -1;
            continue;
        }
        int16_t* at = &head[cls][to];
        while (*at >= 0 && keyed[*at] < v) at = &next[*at];
        next[k] = *at;
        *at = (int16_t)k;
    }
    uint64_t sorted[MAX_MOVES];
    int m = 0;
    for (int cls = 0; cls < CLASSES; cls++)
        for (uint64_t bits = occupied[cls]; bits; bits &= bits - 1)
            for (int i = head[cls][__builtin_ctzll(bits)]; i >= 0; i = next[i]) sorted[m++] = keyed[i];
    for (int k = 0; k < nc; k++) sorted[m++] = castles[k];
    std::memcpy(keyed, sorted, n * sizeof(uint64_t));
}

// A capture that likely loses material: a piece takes a cheaper one on a square the opponent
// defends (no promotion; the exchange is not played out: a cheap stand-in for a static exchange
// evaluation, enough to put such captures after the quiet moves).
constexpr int EXCHANGE_VALUE[8] = {0, 1, 3, 3, 5, 9, 0, 0};
inline bool losing_capture(const Pos& p, uint32_t move) {
    if (move >> 12) return false;
    int f = move & 63, t = (move >> 6) & 63;
    int victim = p.sq[t];
    if (victim == EMPTY || color_of(victim) == p.side) return false;   // en passant: even
    return EXCHANGE_VALUE[type_of(p.sq[f])] > EXCHANGE_VALUE[type_of(victim)]
        && attacked(p, t, p.side ^ 1);
}

// Legal moves of p in the host's order: `tt` first when legal and tt_front, then captures
// in generation order, then the killers k1, k2 (when legal and not `tt`), then the quiet moves
// and castling in generation order (HostSearch._ordered); with `bad_last`, the losing captures
// (losing_capture) but the first move after all of them, in their order. Returns their number.
inline int ordered_moves(const Pos& p, uint32_t tt, int tt_front, uint32_t k1, uint32_t k2,
                         uint32_t* out, int bad_last = 0) {
    uint32_t moves[MAX_MOVES];
    int n = legal_moves(p, moves);
    uint64_t keyed[MAX_MOVES];
    int ep = hot_ep(p);
    for (int k = 0; k < n; k++) keyed[k] = (uint64_t)order_key(p, moves[k], ep) << 32 | moves[k];
    sort_keyed(keyed, n);
    int m = 0;
    uint32_t killers[2];
    int nk = 0;
    const uint32_t candidates[2] = {k1, k2};
    for (uint32_t killer : candidates)
        if (killer && killer != tt && (nk == 0 || killers[0] != killer)) {
            for (int k = 0; k < n; k++)
                if ((uint32_t)keyed[k] == killer) { killers[nk++] = killer; break; }
        }
    bool placed = nk == 0;
    for (int k = 0; k < n; k++) {
        uint32_t move = (uint32_t)keyed[k];
        if (nk && (move == killers[0] || (nk == 2 && move == killers[1]))) continue;
        if (!placed && (keyed[k] >> 52) >= QUIET_CLASS_KEY) {
            for (int j = 0; j < nk; j++) out[m++] = killers[j];
            placed = true;
        }
        out[m++] = move;
    }
    if (!placed)
        for (int j = 0; j < nk; j++) out[m++] = killers[j];
    if (tt && tt_front) {
        int at = index_of(out, m, tt);
        if (at > 0) {
            for (int k = at; k > 0; k--) out[k] = out[k - 1];
            out[0] = tt;
        }
    }
    if (bad_last) {
        uint32_t bad[MAX_MOVES];
        int nb = 0, kept = 1;
        for (int k = 1; k < m; k++) {
            if (losing_capture(p, out[k])) bad[nb++] = out[k];
            else out[kept++] = out[k];
        }
        for (int k = 0; k < nb; k++) out[kept + k] = bad[k];
    }
    return m;
}

inline bool is_checkmate(const Pos& p) { return in_check(p) && !has_legal_move(p); }

// The fifty-move rule ends the game here (python-chess: the clock at 100 and not checkmate).
inline bool fifty_moves(const Pos& p) { return p.halfmove >= 100 && !is_checkmate(p); }

inline bool insufficient_material(const Pos& p) {
    return insufficient_for(p, 0) && insufficient_for(p, 1);
}

// A capture (en passant included): python-chess's is_capture.
inline bool is_capture(const Pos& p, uint32_t move) {
    int f = move & 63, t = (move >> 6) & 63;
    if (p.sq[t] != EMPTY && color_of(p.sq[t]) != p.side) return true;
    return type_of(p.sq[f]) == PAWN && t == p.ep && file_of(f) != file_of(t);
}

// A capture or a pawn move: python-chess's is_zeroing.
inline bool is_zeroing(const Pos& p, uint32_t move) {
    int f = move & 63, t = (move >> 6) & 63;
    if (type_of(p.sq[f]) == PAWN || type_of(p.sq[t]) == PAWN) return true;
    return (p.sq[f] != EMPTY && color_of(p.sq[f]) != p.side)
        || (p.sq[t] != EMPTY && color_of(p.sq[t]) != p.side);
}

// c := p with the side to move passing (null-move pruning: never in check), key included.
inline void make_null(const Pos& p, Pos& c) {
    c = p;
    c.side ^= 1;
    c.ep = NO_EP;
    c.halfmove = p.halfmove + 1;
    // p's key with the side flipped and p's en-passant term gone (c has no en passant)
    c.key = p.key ^ z_side;
    if (p.ep != NO_EP && has_legal_ep(p)) c.key ^= z_ep[file_of(p.ep)];
}

// `move` leaves the opponent in check.
inline bool gives_check(const Pos& p, uint32_t move) {
    Pos c;
    make_board(p, move, c);
    return in_check(c);
}

// The side to move has a piece besides pawns and king (null move is unsafe without: zugzwang).
inline bool has_pieces(const Pos& p) {
    for (int s = 0; s < 64; s++) {
        int code = p.sq[s];
        if (code != EMPTY && color_of(code) == p.side && type_of(code) != PAWN
                && type_of(code) != KING)
            return true;
    }
    return false;
}

}  // namespace hostboard

// The "terms" evaluation's terms (docs/semantics.md, section 6, "The terms evaluation") over the
// host's mailbox position, for the compiled host search's own static evaluation (hostsearch.cpp's
// static_eval: material and piece-square tables, plus these where the engine's Evaluation is
// "terms"). The definition is the model's, model/evalterms.py, and this is it written again bit
// for bit: every term computed for one side in its own frame (ranks flipped for black), white's
// value minus black's, the tempo of the side to move; the same integers, so the sums and their
// taper are the model's exactly (tests/test_hosteval.py holds the two to each other).
//
// No weight is written here: hostsearch.py hands them over from contract/evalweights.py (the one
// weights file) in hs_configure's array, into TermWeights.
#pragma once
#include "hostboard.hpp"

#include <cstdint>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace hosteval {

using hostboard::Pos;

// The weights, in hostsearch.py's _term_weights order: per-rank passed-pawn tables (relative rank
// 0..7), then (mg, eg) pairs; the king-zone and mobility weights indexed by PieceType value.
struct TermWeights {
    int passed_mg[8], passed_eg[8];
    int free_path[2], blocked[2], isolated[2], doubled[2], backward[2], connected[2];
    int shield_near[2], shield_far[2], king_open[2], king_half_open[2];
    int bishop_pair[2], rook_open[2], rook_half_open[2], rook_seventh[2], tempo[2];
    int zone_attack[8][2];          // the enemy attacker's type: pawn .. queen
    int mobility[8][2];             // the mobile piece's type: knight .. queen
    int mobility_centre[8];
    int threat_by_pawn[2], threat_by_minor[2], threat_by_rook[2], hanging[2];
};

// The terms after material_pst, in contract/evalweights.py's TERMS order.
enum Term {
    PASSED_PAWNS, ISOLATED_PAWNS, DOUBLED_PAWNS, BACKWARD_PAWNS, CONNECTED_PAWNS, KING_SHIELD,
    KING_FILES, KING_ATTACKS, MOBILITY, BISHOP_PAIR, ROOK_FILES, ROOK_SEVENTH, THREATS, TEMPO,
    TERM_COUNT
};

namespace detail {

constexpr uint64_t FILE_A = 0x0101010101010101ull;
constexpr uint64_t NOT_A = ~FILE_A;
constexpr uint64_t NOT_H = ~(FILE_A << 7);
constexpr uint64_t RANK_7 = 0xFFull << 48;
constexpr uint64_t RANK_8 = 0xFFull << 56;
// rays: north, east, north-east, north-west run up the square numbers (nearest blocker: the
// lowest bit), south, west, south-west, south-east down (the highest)
constexpr int DIRS[8][2] = {{0, 1}, {1, 0}, {1, 1}, {-1, 1}, {0, -1}, {-1, 0}, {-1, -1}, {1, -1}};
constexpr int ROOK_FIRST = 0, BISHOP_FIRST = 2;     // rook: 0, 1, 4, 5; bishop: 2, 3, 6, 7

inline bool on(int f, int r) { return f >= 0 && f < 8 && r >= 0 && r < 8; }
inline uint64_t bit(int f, int r) { return on(f, r) ? 1ull << (8 * r + f) : 0; }

// model/evalterms.py's masks, per square of the side's own frame
struct Masks {
    uint64_t file[8], adjacent_files[8];
    uint64_t front[64], passed_span[64], adjacent_behind[64], phalanx[64], support[64];
    uint64_t shield_near[64], shield_far[64], zone[64], knight[64], ray[64][8];
    Masks() {
        for (int f = 0; f < 8; f++) file[f] = FILE_A << f;
        for (int f = 0; f < 8; f++)
            adjacent_files[f] = (f > 0 ? file[f - 1] : 0) | (f < 7 ? file[f + 1] : 0);
        const int jumps[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
        for (int s = 0; s < 64; s++) {
            int f = s & 7, r = s >> 3;
            front[s] = passed_span[s] = 0;
            for (int q = r + 1; q < 8; q++) {
                front[s] |= bit(f, q);
                passed_span[s] |= bit(f - 1, q) | bit(f, q) | bit(f + 1, q);
            }
            adjacent_behind[s] = adjacent_files[f] & (r == 7 ? ~0ull : (1ull << (8 * (r + 1))) - 1);
            phalanx[s] = bit(f - 1, r) | bit(f + 1, r);
            support[s] = bit(f - 1, r - 1) | bit(f + 1, r - 1);
            shield_near[s] = bit(f - 1, r + 1) | bit(f, r + 1) | bit(f + 1, r + 1);
            shield_far[s] = bit(f - 1, r + 2) | bit(f, r + 2) | bit(f + 1, r + 2);
            zone[s] = 1ull << s;
            for (int df = -1; df <= 1; df++)
                for (int dr = -1; dr <= 1; dr++) zone[s] |= bit(f + df, r + dr);
            knight[s] = 0;
            for (auto& j : jumps) knight[s] |= bit(f + j[0], r + j[1]);
            for (int d = 0; d < 8; d++) {
                ray[s][d] = 0;
                for (int k = 1; on(f + k * DIRS[d][0], r + k * DIRS[d][1]); k++)
                    ray[s][d] |= bit(f + k * DIRS[d][0], r + k * DIRS[d][1]);
            }
        }
    }
};
inline const Masks masks;

// (x86-64's baseline has no popcnt instruction, and the library is built for it: there, the
// bit-parallel count beats the compiler's call to libgcc)
#if defined(__POPCNT__) || !defined(__x86_64__)
inline int popcount(uint64_t x) { return __builtin_popcountll(x); }
#else
inline int popcount(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (int)((x * 0x0101010101010101ull) >> 56);
}
#endif
inline int lowest(uint64_t x) { return __builtin_ctzll(x); }

// A ray stops at the first occupied square, which it reaches (the contract's rule).
inline uint64_t slide(int s, uint64_t occupied, int first) {
    uint64_t out = 0;
    for (int d = first; d < 8; d += (d & 1) ? 3 : 1) {    // first, first + 1, first + 4, first + 5
        uint64_t line = masks.ray[s][d], blockers = line & occupied;
        if (blockers) {
            int q = d < 4 ? lowest(blockers) : 63 - __builtin_clzll(blockers);
            line ^= masks.ray[q][d];
        }
        out |= line;
    }
    return out;
}

inline uint64_t attacks(int type, int s, uint64_t occupied) {
    switch (type) {
    case hostboard::KNIGHT: return masks.knight[s];
    case hostboard::BISHOP: return slide(s, occupied, BISHOP_FIRST);
    case hostboard::ROOK: return slide(s, occupied, ROOK_FIRST);
    default: return slide(s, occupied, BISHOP_FIRST) | slide(s, occupied, ROOK_FIRST);
    }
}

// One side's knights, bishops, rooks and queens with their attacks in white's frame: each piece's
// attacks serve its own side's mobility and the other side's king-zone attacks, computed once
// (the rank flip of a piece's attacks is its attacks in the flipped position).
struct Pieces {
    int n = 0;
    int type[64];
    uint64_t attacks[64];
};

// One side's terms in its own frame (model/evalterms.py's side_features and _side_terms), added
// to out times sign. own / enemy: words by PieceType value; own_pieces / enemy_pieces: their
// attacks, in this frame after a rank flip where `flip`.
inline void side_terms(const uint64_t* own, const uint64_t* enemy, const Pieces& own_pieces,
                       const Pieces& enemy_pieces, bool flip, const TermWeights& w, int sign,
                       int out[TERM_COUNT][2]) {
    using namespace hostboard;
    uint64_t own_all = own[PAWN] | own[KNIGHT] | own[BISHOP] | own[ROOK] | own[QUEEN] | own[KING];
    uint64_t occupied = own_all | enemy[PAWN] | enemy[KNIGHT] | enemy[BISHOP] | enemy[ROOK]
                      | enemy[QUEEN] | enemy[KING];
    uint64_t pawns = own[PAWN], enemy_pawns = enemy[PAWN];
    // the enemy's pawns take on the squares below them
    uint64_t takes_right = (enemy_pawns >> 7) & NOT_A, takes_left = (enemy_pawns >> 9) & NOT_H;
    uint64_t enemy_pawn_attacks = takes_right | takes_left;
    int passed_mg = 0, passed_eg = 0, passed_free = 0, passed_blocked = 0;
    int isolated = 0, doubled = 0, backward = 0, connected = 0;
    for (uint64_t x = pawns; x; x &= x - 1) {
        int s = lowest(x);
        if (!(enemy_pawns & masks.passed_span[s])) {
            passed_mg += w.passed_mg[s >> 3];
            passed_eg += w.passed_eg[s >> 3];
            if (!(occupied & masks.front[s])) passed_free++;
            else if (s < 56 && (occupied >> (s + 8) & 1)) passed_blocked++;
        }
        bool alone = !(pawns & masks.adjacent_files[s & 7]);
        isolated += alone;
        if (pawns & masks.front[s]) doubled++;
        if (!alone && !(pawns & masks.adjacent_behind[s]) && s < 56
                && (enemy_pawn_attacks >> (s + 8) & 1))
            backward++;
        if (pawns & (masks.phalanx[s] | masks.support[s])) connected++;
    }
    auto add = [&](int term, int mg, int eg) {
        out[term][0] += sign * mg;
        out[term][1] += sign * eg;
    };
    add(PASSED_PAWNS, passed_mg + passed_free * w.free_path[0] + passed_blocked * w.blocked[0],
        passed_eg + passed_free * w.free_path[1] + passed_blocked * w.blocked[1]);
    add(ISOLATED_PAWNS, isolated * w.isolated[0], isolated * w.isolated[1]);
    add(DOUBLED_PAWNS, doubled * w.doubled[0], doubled * w.doubled[1]);
    add(BACKWARD_PAWNS, backward * w.backward[0], backward * w.backward[1]);
    add(CONNECTED_PAWNS, connected * w.connected[0], connected * w.connected[1]);
    // king safety (without a king, the model's index -1 is square 63)
    int k = own[KING] ? lowest(own[KING]) : 63;
    int near = popcount(pawns & masks.shield_near[k]), far = popcount(pawns & masks.shield_far[k]);
    add(KING_SHIELD, near * w.shield_near[0] + far * w.shield_far[0],
        near * w.shield_near[1] + far * w.shield_far[1]);
    int open_files = 0, half_open = 0, kf = k & 7;
    for (int f = kf > 0 ? kf - 1 : 0; f <= (kf < 7 ? kf + 1 : 7); f++)
        if (!(pawns & masks.file[f])) {
            if (enemy_pawns & masks.file[f]) half_open++;
            else open_files++;
        }
    add(KING_FILES, open_files * w.king_open[0] + half_open * w.king_half_open[0],
        open_files * w.king_open[1] + half_open * w.king_half_open[1]);
    uint64_t zone = masks.zone[k];
    int pawn_hits = popcount(takes_right & zone) + popcount(takes_left & zone);
    int zone_mg = pawn_hits * w.zone_attack[PAWN][0], zone_eg = pawn_hits * w.zone_attack[PAWN][1];
    if (flip) zone = __builtin_bswap64(zone);      // the pieces' attacks are in white's frame
    for (int k = 0; k < enemy_pieces.n; k++) {
        int t = enemy_pieces.type[k], hits = popcount(enemy_pieces.attacks[k] & zone);
        zone_mg += hits * w.zone_attack[t][0];
        zone_eg += hits * w.zone_attack[t][1];
    }
    // mobility: targets not held by own pieces nor taken on by an enemy pawn
    uint64_t reachable = ~own_all & ~enemy_pawn_attacks;
    if (flip) reachable = __builtin_bswap64(reachable);
    int mobility_mg = 0, mobility_eg = 0;
    for (int k = 0; k < own_pieces.n; k++) {
        int t = own_pieces.type[k];
        int c = popcount(own_pieces.attacks[k] & reachable) - w.mobility_centre[t];
        mobility_mg += w.mobility[t][0] * c;
        mobility_eg += w.mobility[t][1] * c;
    }
    add(KING_ATTACKS, zone_mg, zone_eg);
    add(MOBILITY, mobility_mg, mobility_eg);
    if (popcount(own[BISHOP]) >= 2) add(BISHOP_PAIR, w.bishop_pair[0], w.bishop_pair[1]);
    int rook_open = 0, rook_half_open = 0, seventh = 0;
    bool enemy_on_back = (enemy[KING] & RANK_8) || (enemy_pawns & RANK_7);
    for (uint64_t x = own[ROOK]; x; x &= x - 1) {
        int s = lowest(x);
        uint64_t file = masks.file[s & 7];
        if (!(pawns & file)) {
            if (enemy_pawns & file) rook_half_open++;
            else rook_open++;
        }
        if (s >> 3 == 6 && enemy_on_back) seventh++;
    }
    add(ROOK_FILES, rook_open * w.rook_open[0] + rook_half_open * w.rook_half_open[0],
        rook_open * w.rook_open[1] + rook_half_open * w.rook_half_open[1]);
    add(ROOK_SEVENTH, seventh * w.rook_seventh[0], seventh * w.rook_seventh[1]);
    // threats: own pieces on squares the enemy attacks, by the attacker's kind (white's frame for
    // the pieces' attacks, so the pawns' and kings' are flipped to it)
    uint64_t enemy_pawn_hits = enemy_pawn_attacks, enemy_king = enemy[KING], own_king = own[KING];
    uint64_t own_pawn_hits = ((pawns << 7) & NOT_H) | ((pawns << 9) & NOT_A);
    uint64_t own_n = own[KNIGHT], own_b = own[BISHOP], own_r = own[ROOK], own_q = own[QUEEN];
    if (flip) {
        enemy_pawn_hits = __builtin_bswap64(enemy_pawn_hits);
        own_pawn_hits = __builtin_bswap64(own_pawn_hits);
        enemy_king = __builtin_bswap64(enemy_king);
        own_king = __builtin_bswap64(own_king);
        own_n = __builtin_bswap64(own_n);
        own_b = __builtin_bswap64(own_b);
        own_r = __builtin_bswap64(own_r);
        own_q = __builtin_bswap64(own_q);
    }
    uint64_t enemy_minor = 0, enemy_rook = 0, enemy_any = enemy_pawn_hits;
    for (int k = 0; k < enemy_pieces.n; k++) {
        int t = enemy_pieces.type[k];
        uint64_t a = enemy_pieces.attacks[k];
        enemy_any |= a;
        if (t == KNIGHT || t == BISHOP) enemy_minor |= a;
        else if (t == ROOK) enemy_rook |= a;
    }
    if (enemy_king) enemy_any |= masks.zone[lowest(enemy_king)] & ~enemy_king;
    uint64_t defended = own_pawn_hits;
    for (int k = 0; k < own_pieces.n; k++) defended |= own_pieces.attacks[k];
    if (own_king) defended |= masks.zone[lowest(own_king)] & ~own_king;
    uint64_t pieces = own_n | own_b | own_r | own_q;
    int by_pawn = popcount(pieces & enemy_pawn_hits);
    int by_minor = popcount((own_r | own_q) & enemy_minor);
    int by_rook = popcount(own_q & enemy_rook);
    int hanging = popcount(pieces & enemy_any & ~defended);
    add(THREATS, by_pawn * w.threat_by_pawn[0] + by_minor * w.threat_by_minor[0]
                 + by_rook * w.threat_by_rook[0] + hanging * w.hanging[0],
        by_pawn * w.threat_by_pawn[1] + by_minor * w.threat_by_minor[1]
                 + by_rook * w.threat_by_rook[1] + hanging * w.hanging[1]);
}

}  // namespace detail

// The squares holding each of the n piece codes of `codes` (a bit per square) into out, in that
// order; with SSE2 sixteen squares a compare.
inline void squares_of(const Pos& p, const int* codes, int n, uint64_t* out) {
#ifdef __SSE2__
    __m128i lanes[4];
    for (int k = 0; k < 4; k++) lanes[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.sq + 16 * k));
    for (int i = 0; i < n; i++) {
        __m128i code = _mm_set1_epi8((char)codes[i]);
        uint64_t x = 0;
        for (int k = 0; k < 4; k++)
            x |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(lanes[k], code)) << (16 * k);
        out[i] = x;
    }
#else
    for (int i = 0; i < n; i++) {
        uint64_t x = 0;
        for (int s = 0; s < 64; s++) x |= (uint64_t)(p.sq[s] == codes[i]) << s;
        out[i] = x;
    }
#endif
}

// The occupied squares.
inline uint64_t occupied_squares(const Pos& p) {
    const int empty = hostboard::EMPTY;
    uint64_t x;
    squares_of(p, &empty, 1, &x);
    return ~x;
}

// Each term's (mg, eg) from white's view (model/evalterms.py's term_values, less material_pst):
// white's value minus black's, and the tempo of the side to move.
inline void term_values(const Pos& p, const TermWeights& w, int out[TERM_COUNT][2]) {
    // words[colour][type]: the squares of colour << 3 | type (type 0 and 7 hold nothing)
    static const int codes[12] = {1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14};
    uint64_t found[12], words[2][8];
    squares_of(p, codes, 12, found);
    for (int c = 0; c < 2; c++) {
        words[c][0] = words[c][7] = 0;
        for (int t = 1; t <= 6; t++) words[c][t] = found[6 * c + t - 1];
    }
    uint64_t occupied = 0;
    for (int t = hostboard::PAWN; t <= hostboard::KING; t++) occupied |= words[0][t] | words[1][t];
    detail::Pieces pieces[2];
    for (int c = 0; c < 2; c++)
        for (int t = hostboard::KNIGHT; t <= hostboard::QUEEN; t++)
            for (uint64_t x = words[c][t]; x; x &= x - 1) {
                detail::Pieces& side = pieces[c];
                side.type[side.n] = t;
                side.attacks[side.n++] = detail::attacks(t, detail::lowest(x), occupied);
            }
    for (int t = 0; t < TERM_COUNT; t++) out[t][0] = out[t][1] = 0;
    detail::side_terms(words[0], words[1], pieces[0], pieces[1], false, w, 1, out);
    uint64_t black[8], white[8];     // black's frame: the ranks flipped
    for (int t = 0; t < 8; t++) {
        black[t] = __builtin_bswap64(words[1][t]);
        white[t] = __builtin_bswap64(words[0][t]);
    }
    detail::side_terms(black, white, pieces[1], pieces[0], true, w, -1, out);
    int sign = p.side == 0 ? 1 : -1;
    out[TEMPO][0] = sign * w.tempo[0];
    out[TEMPO][1] = sign * w.tempo[1];
}

// The terms' sums, added to (mg, eg) from white's view.
inline void add_terms(const Pos& p, const TermWeights& w, int& mg, int& eg) {
    int out[TERM_COUNT][2];
    term_values(p, w, out);
    for (int t = 0; t < TERM_COUNT; t++) {
        mg += out[t][0];
        eg += out[t][1];
    }
}

}  // namespace hosteval

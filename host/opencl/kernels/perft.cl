// Perft with bulk counting, and the breadth-first expansion that spreads one position over the
// device. Order does not change a count, so these kernels enumerate moves piece by piece, not
// in the contract's order; they share make, TestCheck and the board with the search. Bulk
// counting: at the last ply the legal moves are counted, not made: a piece that is not pinned,
// with the king not in check, has exactly its pseudo-legal targets; the king may go where no
// enemy piece attacks; the rest (any move while in check, pinned pawns, en passant) is made and
// tested one move at a time.

#define MOVE_FROM(m) ((int)(((m) >> MOVE_FROM_SHIFT) & 63u))
#define MOVE_TO(m) ((int)(((m) >> MOVE_TO_SHIFT) & 63u))
#define MOVE_PROMO(m) ((int)(((m) >> MOVE_PROMO_SHIFT) & 7u))

// make + TestCheck + unmake of one pseudo-legal move.
inline bool is_legal(Board *b, int from, int to, int promo) {
    Undo u;
    int mover = type_at(b, from), victim = type_at(b, to);
    if (!make_legal(b, &u, from, to, promo, mover, victim, false))
        return false;
    unmake(b, &u, from, to, promo, mover, victim);
    return true;
}

// Record a legal move (all four promotions for a pawn reaching the last rank) in `list` when
// it is given; the number of moves recorded.
inline int emit(ushort *list, int n, int from, int to, bool promotes) {
    if (!promotes) {
        if (list) list[n] = (ushort)pack_move(from, to, 0);
        return 1;
    }
    if (list)
        for (int i = 0; i < PROMOTIONS; i++)
            list[n + i] = (ushort)pack_move(from, to, PROMOTION_ORDER[i]);
    return PROMOTIONS;
}

// The legal moves of the pieces on `from_mask` (and castling when asked), each made and tested.
inline int try_moves(Board *b, ulong from_mask, bool castling, ushort *list) {
    ulong occ = occupied(b), own = b->own, enemy = occ & ~own, empty = ~occ;
    int n = 0;
    ulong pieces = from_mask & own & ~type_set(b, PAWN);
    while (pieces) {
        int from = lowest(pieces);
        pieces &= pieces - 1;
        ulong fb = BIT(from), att;
        int t = type_at(b, from);
        if (t == KNIGHT) att = knight_attacks(fb);
        else if (t == KING) att = king_attacks(fb);
        else {
            att = 0;
            if (t != ROOK) att |= diagonal_attacks(fb, empty);
            if (t != BISHOP) att |= straight_attacks(fb, empty);
        }
        att &= ~own;
        while (att) {
            int to = lowest(att);
            att &= att - 1;
            if (is_legal(b, from, to, 0))
                n += emit(list, n, from, to, false);
        }
    }
    ulong pawns = from_mask & own & type_set(b, PAWN);
    ulong ep = b->ep != NO_SQ ? BIT(b->ep) : 0UL;
    while (pawns) {
        int from = lowest(pawns);
        pawns &= pawns - 1;
        ulong fb = BIT(from);
        ulong to_set = pawn_attacks_up(fb) & (enemy | ep);
        ulong push = (fb << 8) & empty;
        to_set |= push | (((push & RANK_3) << 8) & empty);
        while (to_set) {
            int to = lowest(to_set);
            to_set &= to_set - 1;
            bool promotes = to >= 56;
            if (is_legal(b, from, to, promotes ? QUEEN : 0))
                n += emit(list, n, from, to, promotes);
        }
    }
    if (castling) {
        for (int side = 0; side < 2; side++) {
            if (castle_allowed(b, side == 0)) {
                int to = side == 0 ? 6 : 2;
                if (is_legal(b, 4, to, 0))
                    n += emit(list, n, 4, to, false);
            }
        }
    }
    return n;
}

inline int legal_moves(Board *b, ushort *list) { return try_moves(b, ~0UL, true, list); }

// One direction of the pin scan: `blocker` is the own piece the king's ray meets first; if the
// ray continued past it meets an enemy slider of the direction's kind, the piece is pinned and
// may move only along that ray (r2: the squares up to and including the pinner).
#define PIN_SCAN(FILL, SLIDERS, MOVERS)                                             \
    {                                                                               \
        ulong blocker = FILL(kb, empty) & own;                                      \
        if (blocker) {                                                              \
            ulong r2 = FILL(kb, empty | blocker);                                   \
            if (r2 & enemy & (SLIDERS)) {                                           \
                pinned |= blocker;                                                  \
                if (blocker & (MOVERS))                                             \
                    count += popcount(r2) - 1;                                      \
            }                                                                       \
        }                                                                           \
    }

// The number of legal moves (perft 1) without making them, where that is exact.
inline ulong count_legal(Board *b) {
    ulong occ = occupied(b), own = b->own, enemy = occ & ~own, empty = ~occ;
    int k = own_king(b);
    ulong kb = BIT(k);
    if (attackers(b, k))
        return (ulong)legal_moves(b, 0);   // in check: every move made and tested
    ulong straight = straight_set(b), diagonal = diagonal_set(b);
    ulong pawns = type_set(b, PAWN), knights = type_set(b, KNIGHT);
    ulong danger = pawn_attacks_down(enemy & pawns) | knight_attacks(enemy & knights)
                 | king_attacks(enemy & type_set(b, KING))
                 | straight_attacks(enemy & straight, empty)
                 | diagonal_attacks(enemy & diagonal, empty);
    ulong count = 0, pinned = 0;
    PIN_SCAN(fill_north, straight, straight)
    PIN_SCAN(fill_south, straight, straight)
    PIN_SCAN(fill_east, straight, straight)
    PIN_SCAN(fill_west, straight, straight)
    PIN_SCAN(fill_north_east, diagonal, diagonal)
    PIN_SCAN(fill_north_west, diagonal, diagonal)
    PIN_SCAN(fill_south_east, diagonal, diagonal)
    PIN_SCAN(fill_south_west, diagonal, diagonal)

    count += popcount(king_attacks(kb) & ~own & ~danger);
    if ((b->castle & OWN_K) && !(occ & (BIT(5) | BIT(6))) && !(danger & (BIT(5) | BIT(6))))
        count++;
    if ((b->castle & OWN_Q) && !(occ & (BIT(1) | BIT(2) | BIT(3))) && !(danger & (BIT(2) | BIT(3))))
        count++;

    ulong free_pieces = own & ~pinned;
    ulong s = free_pieces & knights;
    while (s) {
        ulong one = s & (0UL - s);
        s ^= one;
        count += popcount(knight_attacks(one) & ~own);
    }
    s = free_pieces & (straight | diagonal);
    while (s) {
        ulong one = s & (0UL - s);
        s ^= one;
        ulong att = 0;
        if (one & diagonal) att |= diagonal_attacks(one, empty);
        if (one & straight) att |= straight_attacks(one, empty);
        count += popcount(att & ~own);
    }
    ulong free_pawns = free_pieces & pawns;
    ulong push = (free_pawns << 8) & empty;
    ulong double_push = ((push & RANK_3) << 8) & empty;
    ulong left = ((free_pawns << 7) & NOT_H) & enemy;
    ulong right = ((free_pawns << 9) & NOT_A) & enemy;
    count += popcount(push & ~RANK_8) + PROMOTIONS * popcount(push & RANK_8)
           + popcount(double_push)
           + popcount(left & ~RANK_8) + PROMOTIONS * popcount(left & RANK_8)
           + popcount(right & ~RANK_8) + PROMOTIONS * popcount(right & RANK_8);
    if (b->ep != NO_SQ) {
        // en passant can uncover the king along the rank: make and test it
        ulong takers = free_pawns & pawn_attacks_down(BIT(b->ep));
        while (takers) {
            int from = lowest(takers);
            takers &= takers - 1;
            count += is_legal(b, from, b->ep, 0);
        }
    }
    ulong pinned_pawns = pinned & pawns;
    if (pinned_pawns)
        count += try_moves(b, pinned_pawns, false, 0);
    return count;
}

// Leaves `depth` plies below the position (1 <= depth <= LEAF_DEPTH_MAX), the last ply bulk-counted.
inline ulong perft_below(Board *b, int depth) {
    if (depth == 1)
        return count_legal(b);
    ushort list[MAX_MOVES];
    int n = legal_moves(b, list);
    ulong total = 0;
    for (int i = 0; i < n; i++) {
        uint m = list[i];
        int from = MOVE_FROM(m), to = MOVE_TO(m), promo = MOVE_PROMO(m);
        int mover = type_at(b, from), victim = type_at(b, to);
        Undo u;
        make_legal(b, &u, from, to, promo, mover, victim, false);
        if (depth == 2) {
            total += count_legal(b);
        } else {
            ushort list2[MAX_MOVES];
            int n2 = legal_moves(b, list2);
            for (int j = 0; j < n2; j++) {
                uint m2 = list2[j];
                int from2 = MOVE_FROM(m2), to2 = MOVE_TO(m2), promo2 = MOVE_PROMO(m2);
                int mover2 = type_at(b, from2), victim2 = type_at(b, to2);
                Undo u2;
                make_legal(b, &u2, from2, to2, promo2, mover2, victim2, false);
                total += count_legal(b);
                unmake(b, &u2, from2, to2, promo2, mover2, victim2);
            }
        }
        unmake(b, &u, from, to, promo, mover, victim);
    }
    return total;
}

// Bulk perft of every position to `depth`; one partial sum per work-group.
__kernel void perft_bulk(__global const ulong *positions, const uint n, const int depth,
                         __global ulong *partial_sums, __local ulong *scratch)
{
    uint i = get_global_id(0), lid = get_local_id(0), size = get_local_size(0);
    ulong leaves = 0;
    if (i < n) {
        Board b;
        load_position(&b, positions + (size_t)i * POSITION_WORDS);
        leaves = perft_below(&b, depth);
    }
    scratch[lid] = leaves;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = size >> 1; stride > 0; stride >>= 1) {
        if (lid < stride)
            scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial_sums[get_group_id(0)] = scratch[0];
}

// Breadth-first expansion, pass 1: how many children each position has.
__kernel void count_children(__global const ulong *positions, const uint n, __global uint *counts)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    Board b;
    load_position(&b, positions + (size_t)i * POSITION_WORDS);
    counts[i] = (uint)count_legal(&b);
}

// Pass 2: write each position's children from its offset (an exclusive prefix sum of the
// counts). A child list whose length disagrees with pass 1 raises the error flag.
__kernel void expand(__global const ulong *positions, const uint n,
                     __global const ulong *offsets, __global ulong *children,
                     __global volatile uint *error_flag)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    Board b;
    load_position(&b, positions + (size_t)i * POSITION_WORDS);
    ushort list[MAX_MOVES];
    int count = legal_moves(&b, list);
    ulong first = offsets[i];
    if ((ulong)count != offsets[i + 1] - first) {
        atomic_or(error_flag, 1u);
        return;
    }
    for (int k = 0; k < count; k++) {
        uint m = list[k];
        int from = MOVE_FROM(m), to = MOVE_TO(m), promo = MOVE_PROMO(m);
        int mover = type_at(&b, from), victim = type_at(&b, to);
        Undo u;
        make_legal(&b, &u, from, to, promo, mover, victim, false);
        store_position(&b, children + (first + k) * POSITION_WORDS);
        unmake(&b, &u, from, to, promo, mover, victim);
    }
}

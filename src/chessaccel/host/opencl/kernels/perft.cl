// Perft with bulk counting, and the breadth-first expansion that spreads one position over the
// device. Order does not change a count, so these kernels enumerate moves piece by piece, not
// in the contract's order; they share make, TestCheck and the board with the search. Bulk
// counting: at the last ply the legal moves are counted, not made: a piece that is not pinned,
// with the king not in check, has exactly its pseudo-legal targets; the king may go where no
// enemy piece attacks; in check, a piece that is not pinned may take the checker or step
// between (count_evasions); the rest (pinned pawns, en passant) is made and tested one move at
// a time. Counting set-wise what a lane would otherwise make and test matters on a GPU more
// than the work itself: the 31 other lanes of its warp wait while one lane in check works
// through its moves (docs/opencl.md: this alone took Kiwipete from 138 G to 290 G leaves/s).

#define MOVE_FROM(m) ((int)(((m) >> MOVE_FROM_SHIFT) & 63u))
#define MOVE_TO(m) ((int)(((m) >> MOVE_TO_SHIFT) & 63u))
#define MOVE_PROMO(m) ((int)(((m) >> MOVE_PROMO_SHIFT) & 7u))

// PERFT_COUNT (a build switch of the bulk kernels' own program, device.py): a bit set of changes
// to the count, each measured on the H100 (docs/opencl.md, "Perft"): 1 builds the enemy's attack
// map from the sliders that can reach the king's zone only; 2 counts the own pieces' moves in
// one loop per kind of piece; 4 (board.cl) byte-swaps the board's words for the flip in 32-bit
// halves; 8 sums a position's count in 32 bits rather than 64; 16 (with PERFT_MAGIC, whose lines
// buffer holds the between table) finds the pinned pieces from the between table, as perft_gpu
// does, rather than by the x-ray of two attack look-ups from the king; 32 (board.cl) finds the
// lowest set bit by a popcount.
#ifndef PERFT_COUNT
#define PERFT_COUNT 0
#endif
#if PERFT_COUNT & 8
typedef uint Count;
#else
typedef ulong Count;
#endif
#ifndef PERFT_LEAF
#define PERFT_LEAF 0
#endif
#if (PERFT_COUNT & 16) && !(defined(PERFT_MAGIC) && PERFT_MAGIC)
#error "PERFT_COUNT 16 reads the between table of the magic tables' buffer: build it with PERFT_MAGIC=1"
#endif

// make + TestCheck + unmake of one pseudo-legal move.
static inline bool is_legal(Board *b, int from, int to, int promo) {
    Undo u;
    int mover = type_at(b, from), victim = type_at(b, to);
    if (!make_legal(b, &u, from, to, promo, mover, victim, 0, true))
        return false;
    unmake(b, &u, from, to, promo, mover, victim);
    return true;
}

// Record a pawn move (all four promotions when it reaches the last rank) in `list` when it
// is given; the number of moves recorded.
static inline int emit_pawn(ushort *list, int n, int from, int to) {
    if (to < 56) {
        if (list) list[n] = (ushort)pack_move(from, to, 0);
        return 1;
    }
    if (list)
        for (int i = 0; i < PROMOTIONS; i++)
            list[n + i] = (ushort)pack_move(from, to, PROMOTION_ORDER[i]);
    return PROMOTIONS;
}

// The legal moves of the pieces on `from_mask`, each made and tested (in check, pinned pieces).
static inline int try_moves(Board *b, ulong from_mask, ushort *list) {
    ulong occ = occupied(b), own = b->own, enemy = occ & ~own, empty = ~occ;
    int n = 0;
    ulong pieces = from_mask & own & ~type_set(b, PAWN);
    while (pieces) {
        int from = lowest(pieces);
        pieces &= pieces - 1;
        ulong att;
        int t = type_at(b, from);
        if (t == KNIGHT) att = KNIGHT_FROM(b->lines, from);
        else if (t == KING) att = KING_FROM(b->lines, from);
        else {
            att = 0;
            if (t != ROOK) att |= diagonal_from(b->lines, from, occ);
            if (t != BISHOP) att |= straight_from(b->lines, from, occ);
        }
        att &= ~own;
        while (att) {
            int to = lowest(att);
            att &= att - 1;
            if (is_legal(b, from, to, 0)) {
                if (list) list[n] = (ushort)pack_move(from, to, 0);
                n++;
            }
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
            if (is_legal(b, from, to, to >= 56 ? QUEEN : 0))
                n += emit_pawn(list, n, from, to);
        }
    }
    return n;
}

// What every legal move needs to know: the squares the enemy attacks (seen through the own
// king, so that a king in check cannot step back along the checking line), whether the king
// is in check, and the own pieces pinned to it.
typedef struct {
    ulong occ, own, enemy, empty, danger, pinned;
    int king;
    bool in_check;
} Legality;

// The pin scan of one kind of line (straight or diagonal): the king's lines with the own
// pieces they meet first taken away reach the enemy sliders that pin those pieces. A pinned
// piece may move only between its king and its pinner (the squares both attack, on the
// board without it), capture included; with `count`, a pinned slider of the line's kind adds
// those moves to `*count`.
#define PIN_SCAN(FROM, SLIDERS)                                                           \
    {                                                                                     \
        ulong first = FROM(b->lines, L->king, L->occ) & L->own;                           \
        ulong through = L->occ & ~first;                                                  \
        ulong reach = FROM(b->lines, L->king, through);                                   \
        ulong pinners = reach & L->enemy & (SLIDERS);                                     \
        while (pinners) {                                                                 \
            int p = lowest(pinners);                                                      \
            pinners &= pinners - 1;                                                       \
            ulong between = reach & FROM(b->lines, p, through);                           \
            ulong pinned = between & first;                                               \
            L->pinned |= pinned;                                                          \
            if (count_pinned_sliders && (pinned & (SLIDERS)))                             \
                *count += popcount(between);                                              \
        }                                                                                 \
    }

static inline void legality(const Board *b, Legality *L, bool count_pinned_sliders, Count *count) {
    L->occ = occupied(b);
    L->own = b->own;
    L->enemy = L->occ & ~L->own;
    L->empty = ~L->occ;
    L->king = own_king(b);
    ulong enemy = L->enemy;
    ulong through_king = L->occ & ~BIT(L->king);
    // each slider's attacks by table look-up (a few loads) rather than 8 set-wise fills
    ulong danger = pawn_attacks_down(enemy & type_set(b, PAWN))
                 | knight_attacks(enemy & type_set(b, KNIGHT))
                 | king_attacks(enemy & type_set(b, KING));
    ulong sliders = enemy & straight_set(b);
#if PERFT_COUNT & 1
    // only the enemy sliders that can reach the king's zone on the empty board: the map is
    // read on the king's square, its targets and the castling squares alone
    ulong straight_reach = b->lines[LINES_STRAIGHT_ZONE + L->king];
    ulong diagonal_reach = b->lines[LINES_DIAGONAL_ZONE + L->king];
    if (b->castle & OWN_K) {                // g1: the g-file, g1-h2, g1-a7
        straight_reach |= FILE_A << 6;
        diagonal_reach |= 0x0001020408102040UL | BIT(15);
    }
    if (b->castle & OWN_Q) {                // c1: the c-file, c1-h6, c1-a3
        straight_reach |= FILE_A << 2;
        diagonal_reach |= 0x0000804020100804UL | BIT(9) | BIT(16);
    }
    sliders &= straight_reach;
#endif
    while (sliders) {
        danger |= straight_from(b->lines, lowest(sliders), through_king);
        sliders &= sliders - 1;
    }
    sliders = enemy & diagonal_set(b);
#if PERFT_COUNT & 1
    sliders &= diagonal_reach;
#endif
    while (sliders) {
        danger |= diagonal_from(b->lines, lowest(sliders), through_king);
        sliders &= sliders - 1;
    }
    L->danger = danger;
    L->in_check = (L->danger & BIT(L->king)) != 0;
    L->pinned = 0;
    count_pinned_sliders = count_pinned_sliders && !L->in_check;
    // a pin needs an enemy slider on one of the king's lines (on the empty board)
    int k = L->king;
#if PERFT_COUNT & 16
    // each such slider pins the piece between it and the king when that is the only piece
    // there and an own one (the between table: one load a slider, no attack look-up)
    ulong straight_lines = (0xFFUL << (k & 56)) | (FILE_A << (k & 7));
    ulong pinners = (enemy & straight_set(b) & straight_lines)
                  | (enemy & diagonal_set(b)
                     & (b->lines[LINES_DIAGONAL + k] | b->lines[LINES_ANTI_DIAGONAL + k]));
    while (pinners) {
        int p = lowest(pinners);
        pinners &= pinners - 1;
        ulong between = b->lines[LINES_BETWEEN + p * 64 + k];
        ulong blockers = between & L->occ;
        if ((blockers & L->own) && !(blockers & (blockers - 1))) {
            L->pinned |= blockers;
            // a pinned slider of the line's kind moves between the two and takes the pinner
            ulong line_sliders = (straight_lines & BIT(p)) ? straight_set(b) : diagonal_set(b);
            if (count_pinned_sliders && (blockers & line_sliders))
                *count += popcount(between);
        }
    }
#else
    if (enemy & straight_set(b) & ((0xFFUL << (k & 56)) | (FILE_A << (k & 7))))
        PIN_SCAN(straight_from, straight_set(b))
    if (enemy & diagonal_set(b) & (b->lines[LINES_DIAGONAL + k] | b->lines[LINES_ANTI_DIAGONAL + k]))
        PIN_SCAN(diagonal_from, diagonal_set(b))
#endif
}

// Castling when not in check: the right, the empty squares, no attacked square on the king's way.
static inline int castlings(const Board *b, const Legality *L, ushort *list, int n) {
    int found = 0;
    if ((b->castle & OWN_K) && !(L->occ & (BIT(5) | BIT(6))) && !(L->danger & (BIT(5) | BIT(6)))) {
        if (list) list[n] = (ushort)pack_move(4, 6, 0);
        found++;
    }
    if ((b->castle & OWN_Q) && !(L->occ & (BIT(1) | BIT(2) | BIT(3)))
            && !(L->danger & (BIT(2) | BIT(3)))) {
        if (list) list[n + found] = (ushort)pack_move(4, 2, 0);
        found++;
    }
    return found;
}

// Every legal move, in no particular order, without making the ones that need no test.
static inline int legal_moves(Board *b, ushort *list) {
    Legality L;
    legality(b, &L, false, 0);
    if (L.in_check)
        return try_moves(b, ~0UL, list);
    int n = 0;
    ulong att = KING_FROM(b->lines, L.king) & ~L.own & ~L.danger;
    while (att) {
        int to = lowest(att);
        att &= att - 1;
        list[n++] = (ushort)pack_move(L.king, to, 0);
    }
    n += castlings(b, &L, list, n);
    ulong free_pieces = L.own & ~L.pinned;
    ulong knights = type_set(b, KNIGHT), straight = straight_set(b), diagonal = diagonal_set(b);
    ulong pieces = free_pieces & (knights | straight | diagonal);
    while (pieces) {
        int from = lowest(pieces);
        ulong one = pieces & (0UL - pieces);
        pieces ^= one;
        ulong targets = 0;
        if (one & knights) targets = KNIGHT_FROM(b->lines, from);
        if (one & diagonal) targets |= diagonal_from(b->lines, from, L.occ);
        if (one & straight) targets |= straight_from(b->lines, from, L.occ);
        targets &= ~L.own;
        while (targets) {
            int to = lowest(targets);
            targets &= targets - 1;
            list[n++] = (ushort)pack_move(from, to, 0);
        }
    }
    ulong pawns = free_pieces & type_set(b, PAWN);
    ulong push = (pawns << 8) & L.empty;
    ulong double_push = ((push & RANK_3) << 8) & L.empty;
    ulong left = ((pawns << 7) & NOT_H) & L.enemy;
    ulong right = ((pawns << 9) & NOT_A) & L.enemy;
    while (push) { int to = lowest(push); push &= push - 1; n += emit_pawn(list, n, to - 8, to); }
    while (double_push) { int to = lowest(double_push); double_push &= double_push - 1;
                          list[n++] = (ushort)pack_move(to - 16, to, 0); }
    while (left) { int to = lowest(left); left &= left - 1; n += emit_pawn(list, n, to - 7, to); }
    while (right) { int to = lowest(right); right &= right - 1; n += emit_pawn(list, n, to - 9, to); }
    if (b->ep != NO_SQ) {
        // en passant can uncover the king along the rank: make and test it
        ulong takers = pawns & pawn_attacks_down(BIT(b->ep));
        while (takers) {
            int from = lowest(takers);
            takers &= takers - 1;
            if (is_legal(b, from, b->ep, 0))
                list[n++] = (ushort)pack_move(from, b->ep, 0);
        }
    }
    if (L.pinned)
        n += try_moves(b, L.pinned, list + n);
    return n;
}

// The pawn moves of `pawns` that land on `target` (pushes, double pushes, captures; a move
// to the last rank counts its four promotions). En passant is left to the caller.
static inline Count count_pawn_moves(ulong pawns, const Legality *L, ulong target) {
    ulong push = (pawns << 8) & L->empty;
    ulong double_push = ((push & RANK_3) << 8) & L->empty & target;
    ulong left = ((pawns << 7) & NOT_H) & L->enemy & target;
    ulong right = ((pawns << 9) & NOT_A) & L->enemy & target;
    push &= target;
    return popcount(push & ~RANK_8) + PROMOTIONS * popcount(push & RANK_8)
         + popcount(double_push)
         + popcount(left & ~RANK_8) + PROMOTIONS * popcount(left & RANK_8)
         + popcount(right & ~RANK_8) + PROMOTIONS * popcount(right & RANK_8);
}

// The en-passant captures of `pawns`, each made and tested (the captured pawn leaves a
// square the rank's sliders may then see through).
static inline Count count_en_passant(Board *b, ulong pawns) {
    Count count = 0;
    if (b->ep != NO_SQ) {
        ulong takers = pawns & pawn_attacks_down(BIT(b->ep));
        while (takers) {
            int from = lowest(takers);
            takers &= takers - 1;
            count += is_legal(b, from, b->ep, 0);
        }
    }
    return count;
}

// PERFT_LEAF 8, 16 and 32 (count_legal and count_evasions, below, in every bulk kernel): the
// count without making any move. 8 (the king not in check): en passant by a pawn that is not
// pinned is legal unless the king stands on the pawns' rank and the two pawns leave it open to
// an enemy rook or queen (in a legal position the captured pawn cannot uncover a diagonal or a
// file: the double push it just made would have uncovered the diagonal first, and the capturing
// pawn lands on its file).
static inline Count count_en_passant_free(const Board *b, const Legality *L, ulong pawns) {
    if (b->ep == NO_SQ)
        return 0;
    ulong takers = pawns & pawn_attacks_down(BIT(b->ep));
    Count count = popcount(takers);
    ulong rooks = L->enemy & straight_set(b) & (0xFFUL << 32);
    if (takers && (L->king >> 3) == 4 && rooks) {
        ulong captured = BIT(b->ep - 8);
        while (takers) {
            ulong occ = L->occ ^ (takers & (0UL - takers)) ^ captured;
            count -= (straight_from(b->lines, L->king, occ) & rooks) != 0;
            takers &= takers - 1;
        }
    }
    return count;
}

// 16: a pinned pawn moves along the line through its king and itself only (pushes, captures of
// the pinner, en passant onto the line). 32: en passant in check (count_evasions) the same way as
// 8, when it takes the checker or steps between it and the king.
static inline Count count_pinned_pawns(const Board *b, const Legality *L, ulong pinned_pawns) {
    Count count = 0;
    int k = L->king;
    ulong diagonal = b->lines[LINES_DIAGONAL + k], anti = b->lines[LINES_ANTI_DIAGONAL + k];
    while (pinned_pawns) {
        int p = lowest(pinned_pawns);
        pinned_pawns &= pinned_pawns - 1;
        ulong pb = BIT(p);
        ulong line = ((k ^ p) & 56) == 0 ? (0xFFUL << (k & 56))
                   : ((k ^ p) & 7) == 0 ? (FILE_A << (k & 7))
                   : (diagonal & pb) ? diagonal : anti;
        count += count_pawn_moves(pb, L, line);
        if (b->ep != NO_SQ)
            count += (pawn_attacks_up(pb) & BIT(b->ep) & line) != 0;
    }
    return count;
}

// The legal moves other than the king's when the king is in check, counted set-wise (a lane
// in check would otherwise make and test each of its moves while its warp waits): none in
// double check; else a piece that is not pinned (a pinned one can neither take the checker
// nor step between) may take the checker or, against a slider, step between it and the king.
static inline Count count_evasions(Board *b, const Legality *L) {
    ulong checkers = attackers(b, L->king);
    if (checkers & (checkers - 1))
        return 0;
    int checker = lowest(checkers);
    ulong target = checkers;
    ulong straight = straight_from(b->lines, L->king, L->occ);
    if (straight & checkers & straight_set(b)) {
        target |= straight & straight_from(b->lines, checker, L->occ);
    } else {
        ulong diagonal = diagonal_from(b->lines, L->king, L->occ);
        if (diagonal & checkers & diagonal_set(b))
            target |= diagonal & diagonal_from(b->lines, checker, L->occ);
    }
    Count count = 0;
    ulong free_pieces = L->own & ~L->pinned;
    ulong knights = type_set(b, KNIGHT), straight_set_ = straight_set(b), diagonal_set_ = diagonal_set(b);
    ulong s = free_pieces & (knights | straight_set_ | diagonal_set_);
    while (s) {
        int from = lowest(s);
        ulong one = s & (0UL - s);
        s ^= one;
        ulong att = 0;
        if (one & knights) att = KNIGHT_FROM(b->lines, from);
        if (one & diagonal_set_) att |= diagonal_from(b->lines, from, L->occ);
        if (one & straight_set_) att |= straight_from(b->lines, from, L->occ);
        count += popcount(att & target);
    }
    ulong pawns = free_pieces & type_set(b, PAWN);
#if PERFT_LEAF & 32
    // en passant answers the check when it takes the checker or steps between
    if (b->ep != NO_SQ && ((checkers & BIT(b->ep - 8)) || (target & BIT(b->ep))))
        count += count_en_passant_free(b, L, pawns);
    return count + count_pawn_moves(pawns, L, target);
#else
    return count + count_pawn_moves(pawns, L, target) + count_en_passant(b, pawns);
#endif
}

// The number of legal moves (perft 1): pieces that need no test are counted by popcount.
static inline Count count_legal(Board *b) {
    Legality L;
    Count count = 0;
    legality(b, &L, true, &count);
    count += popcount(KING_FROM(b->lines, L.king) & ~L.own & ~L.danger);
    if (L.in_check)
        return count + count_evasions(b, &L);
    count += castlings(b, &L, 0, 0);
    ulong free_pieces = L.own & ~L.pinned;
    ulong knights = type_set(b, KNIGHT), straight = straight_set(b), diagonal = diagonal_set(b);
#if PERFT_COUNT & 2
    // one loop per kind: a warp runs each body as often as its lane with the most such pieces
    ulong s = free_pieces & knights;
    while (s) {
        count += popcount(KNIGHT_FROM(b->lines, lowest(s)) & ~L.own);
        s &= s - 1;
    }
    s = free_pieces & diagonal;
    while (s) {
        count += popcount(diagonal_from(b->lines, lowest(s), L.occ) & ~L.own);
        s &= s - 1;
    }
    s = free_pieces & straight;
    while (s) {
        count += popcount(straight_from(b->lines, lowest(s), L.occ) & ~L.own);
        s &= s - 1;
    }
#else
    ulong s = free_pieces & (knights | straight | diagonal);
    while (s) {
        int from = lowest(s);
        ulong one = s & (0UL - s);
        s ^= one;
        ulong att = 0;
        if (one & knights) att = KNIGHT_FROM(b->lines, from);
        if (one & diagonal) att |= diagonal_from(b->lines, from, L.occ);
        if (one & straight) att |= straight_from(b->lines, from, L.occ);
        count += popcount(att & ~L.own);
    }
#endif
    ulong pawns = free_pieces & type_set(b, PAWN);
#if PERFT_LEAF & 8
    count += count_pawn_moves(pawns, &L, ~0UL) + count_en_passant_free(b, &L, pawns);
#else
    count += count_pawn_moves(pawns, &L, ~0UL) + count_en_passant(b, pawns);
#endif
    ulong pinned_pawns = L.pinned & type_set(b, PAWN);
#if PERFT_LEAF & 16
    count += count_pinned_pawns(b, &L, pinned_pawns);
#else
    if (pinned_pawns)
        count += try_moves(b, pinned_pawns, 0);
#endif
    return count;
}

// PERFT_LEAF (a build switch of the bulk kernels' own program, device.py): a bit set of changes
// to perft_below_2, the two-ply leaf. 1: the parent is flipped once into its children's frame
// and each child is made there (make_child: no byte swap per child; perft_gpu's leaf has a code
// path per colour and flips nothing); 2 (with 1): the parent restored by making the move again
// (every change is an xor) rather than from a copy of the board; 4: the tables' pointer marked
// restrict (read-only, so the compiler may use the non-coherent loads); 8, 16 and 32 (count_legal
// and count_evasions, above, so every bulk kernel counts so): en passant and the pinned pawns
// counted without making a move; 64: the two-ply sum in 32 bits; 128: the leaf takes its parent
// and a move (perft_fused_N, below; the host's expansion writes no child); 256: each child made
// without its victim's type, its planes written in one pass (make_child_cleared); 1024: the sorted
// lanes ranked by a counting sort (counted_index, below). And the bits of the expansion above
// the leaf (backend.py reads them): 2048: its kernels (count_children, expand, expand_moves, the
// prefix sum) from this program, with the count's and the tables' switches, rather than from the
// search's program; 4096: expand_moves writes 16 bytes a store where it can; 8192: the levels
// are enqueued without waiting on the host between passes (scan_totals, below); 16384:
// expand_moves gathers a work-group's children in local memory and writes them together;
// 131072 (with 2048 and 8192): the levels of at most one position a lane expanded by one
// work-group in one launch (expand_top, below); 262144: `expand` in `split` lanes a position where
// the level has fewer positions than the device has lanes (each lane makes every split-th child).

// A move of the parent (from, to: squares of the children's frame, the parent's squares ^ 56)
// made on the parent's board flipped into that frame: the mover is the enemy there and moves
// down the board; `parent_ep` is the parent's en-passant square in this frame (NO_SQ ^ 56 when
// none). Applied twice it restores the pieces, as move_pieces.
static inline void child_pieces(Board *b, int from, int to, int promo, int mover, int victim,
                                int parent_ep) {
    ulong fb = BIT(from), tb = BIT(to);
    if (victim) {                                  // the victim was the child's own piece
        toggle(b, victim, tb);
        b->own ^= tb;
    }
    if (mover == PAWN && to == parent_ep) {        // en passant: the pawn above is taken
        ulong cb = BIT(to + 8);
        toggle(b, PAWN, cb);
        b->own ^= cb;
    }
    toggle(b, mover, fb);
    toggle(b, promo ? promo : mover, tb);
    if (mover == KING && (to - from == 2 || from - to == 2))     // castling moves the rook too
        toggle(b, ROOK, to > from ? (BIT(from + 3) | BIT(from + 1)) : (BIT(from - 4) | BIT(from - 1)));
}

static inline void make_child(Board *b, int from, int to, int promo, int mover, int victim,
                              int parent_ep) {
    child_pieces(b, from, to, promo, mover, victim, parent_ep);
    b->castle &= ~(castle_clear(from) | castle_clear(to));
    b->ep = (mover == PAWN && from - to == 16) ? from - 8 : NO_SQ;
}

// PERFT_LEAF 256 (with 1, not 2): make_child without the victim's type (one plane look-up fewer a
// move): each plane is written in one pass, the from- and to-squares cleared (whatever stood on the
// to-square, a piece of the child's side or nothing, leaves) and the landing piece's bits set; the
// castling rights are looked at only when the move touches a king's or a rook's home square.
#define CASTLING_SQUARES 0x9100000000000091UL
#if (PERFT_LEAF & 256) && ((PERFT_LEAF & 3) != 1)
#error "PERFT_LEAF 256 makes the children of the parent flipped once (1) and restores by the copy (not 2)"
#endif
static inline void make_child_cleared(Board *b, int from, int to, int promo, int mover,
                                      int parent_ep) {
    ulong fb = BIT(from), tb = BIT(to), moved = fb | tb;
    int lands = promo ? promo : mover;
    b->q0 = (b->q0 & ~moved) | (tb & (0UL - (ulong)(lands & 1)));
    b->q1 = (b->q1 & ~moved) | (tb & (0UL - (ulong)((lands >> 1) & 1)));
    b->q2 = (b->q2 & ~moved) | (tb & (0UL - (ulong)((lands >> 2) & 1)));
    b->own &= ~tb;
    if (mover == PAWN && to == parent_ep) {        // en passant: the pawn above is taken
        ulong cb = BIT(to + 8);
        toggle(b, PAWN, cb);
        b->own ^= cb;
    }
    if (mover == KING && (to - from == 2 || from - to == 2))     // castling moves the rook too
        toggle(b, ROOK, to > from ? (BIT(from + 3) | BIT(from + 1)) : (BIT(from - 4) | BIT(from - 1)));
    if ((fb | tb) & CASTLING_SQUARES)
        b->castle &= ~(castle_clear(from) | castle_clear(to));
    b->ep = (mover == PAWN && from - to == 16) ? from - 8 : NO_SQ;
}

// Leaves two and three plies below the position, the last ply bulk-counted.
static inline ulong perft_below_2(Board *b) {
    ushort list[MAX_MOVES];
    int n = legal_moves(b, list);
#if PERFT_LEAF & 64
    uint total = 0;         // at most 218 x 218 leaves two plies below
#else
    ulong total = 0;
#endif
#if PERFT_LEAF & 1
    int parent_ep = b->ep ^ 56;
    flip(b);
#if !(PERFT_LEAF & 2)
    Board parent = *b;
#else
    uint castle = b->castle;
#endif
    for (int i = 0; i < n; i++) {
        uint m = list[i];
        int from = MOVE_FROM(m) ^ 56, to = MOVE_TO(m) ^ 56, promo = MOVE_PROMO(m);
#if PERFT_LEAF & 256
        make_child_cleared(b, from, to, promo, type_at(b, from), parent_ep);
#else
        int mover = type_at(b, from), victim = type_at(b, to);
        make_child(b, from, to, promo, mover, victim, parent_ep);
#endif
        total += count_legal(b);
#if PERFT_LEAF & 2
        child_pieces(b, from, to, promo, mover, victim, parent_ep);
        b->castle = castle;
#else
        *b = parent;
#endif
    }
#else
    for (int i = 0; i < n; i++) {
        uint m = list[i];
        int from = MOVE_FROM(m), to = MOVE_TO(m), promo = MOVE_PROMO(m);
        int mover = type_at(b, from), victim = type_at(b, to);
        Undo u;
        Board parent = *b;      // restored by a copy: cheaper than unmake's flip back
        make_legal(b, &u, from, to, promo, mover, victim, 0, false);
        total += count_legal(b);
        *b = parent;
    }
#endif
    return total;
}

static inline ulong perft_below_3(Board *b) {
    ushort list[MAX_MOVES];
    int n = legal_moves(b, list);
    ulong total = 0;
    for (int i = 0; i < n; i++) {
        uint m = list[i];
        int from = MOVE_FROM(m), to = MOVE_TO(m), promo = MOVE_PROMO(m);
        int mover = type_at(b, from), victim = type_at(b, to);
        Undo u;
        Board parent = *b;
        make_legal(b, &u, from, to, promo, mover, victim, 0, false);
        total += perft_below_2(b);
        *b = parent;
    }
    return total;
}

// With PERFT_LOCAL_LINES (a build switch of the bulk kernels' own program, device.py) the
// work-group first copies the attack tables into local memory and reads them from there; with
// PERFT_LOCAL_LINES = 2 the rank attacks go in as bytes (board.cl's RANK_BYTE: FILL_UP's entry
// is its rank byte copied onto every rank), in the first 512 bytes of FILL_UP's place.
#if defined(PERFT_LOCAL_LINES) && PERFT_LOCAL_LINES == 2
#define BULK_LINES_ARG __global const ulong *lines_global
#define BULK_LINES_SETUP(lid, size)                                                       \
    __local ulong lines[LINES_WORDS];                                                     \
    for (uint k_ = (lid); k_ < 512; k_ += (size))                                         \
        ((__local uchar *)(lines + LINES_FILL_UP))[k_] =                                  \
            (uchar)lines_global[LINES_FILL_UP + k_];                                      \
    for (uint k_ = LINES_FILE_ATTACKS + (lid); k_ < LINES_WORDS; k_ += (size))            \
        lines[k_] = lines_global[k_];                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);
#elif defined(PERFT_LOCAL_LINES) && PERFT_LOCAL_LINES
#define BULK_LINES_ARG __global const ulong *lines_global
#define BULK_LINES_SETUP(lid, size)                                                       \
    __local ulong lines[LINES_WORDS];                                                     \
    for (uint k_ = (lid); k_ < LINES_WORDS; k_ += (size))                                 \
        lines[k_] = lines_global[k_];                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);
#elif PERFT_LEAF & 4
#define BULK_LINES_ARG __global const ulong *restrict lines
#define BULK_LINES_SETUP(lid, size)
#else
#define BULK_LINES_ARG Lines lines
#define BULK_LINES_SETUP(lid, size)
#endif

// With PERFT_SORT_LANES (a build switch of the bulk kernels' own program, device.py) the lanes
// of a work-group take its positions in the order of their legal-move counts, so that the lanes
// of a warp loop over nearly the same number of moves in the ply above (a warp runs as many
// iterations as its longest lane). Each lane counts its own position's moves (count_legal, the
// key), the keys are ranked in local memory (in `scratch`, before the reduction uses it; ties
// broken by the lane), and lane r takes the position of rank r. The positions of the last,
// partial group (index >= n) rank first and count nothing. PERFT_SORT_LANES = 1 sorts the lanes
// of perft_bulk_2 (measured faster on the H100, docs/opencl.md), 2 those of perft_bulk_3 too
// (measured slower: 118 registers instead of 94).
#if defined(PERFT_SORT_LANES)
#define SORT_LANES_2 (PERFT_SORT_LANES >= 1)
#define SORT_LANES_3 (PERFT_SORT_LANES >= 2)
#else
#define SORT_LANES_2 0
#define SORT_LANES_3 0
#endif

// The rank of `key` among the keys of the work-group's lanes, and the position index `i` of the
// lane of that rank (every lane of the group calls it).
static inline uint sorted_index(uint i, uint key, uint lid, uint size, __local ulong *scratch) {
    __local uint *keys = (__local uint *)scratch;
    keys[lid] = key;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint rank = 0, j = 0;
    for (; j + 4 <= size; j += 4) {         // every lane reads the same words: a broadcast
        uint4 k = vload4(0, keys + j);
        rank += (k.x < key) + (k.y < key) + (k.z < key) + (k.w < key);
    }
    for (; j < size; j++)
        rank += keys[j] < key;
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[rank] = i;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint picked = (uint)scratch[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    return picked;
}

// PERFT_LEAF 1024: the same ranking by a counting sort, in place of sorted_index's comparison of
// each key with every other (a work-group of 512 lanes: 128 vector loads and 512 compares a
// lane). Each lane's bin is its position's move count + 1 (0 for a lane past n: those rank
// first); the lane takes its place in its bin by a local atomic increment, and its rank is that
// place plus the lanes in the bins below its own (its move count's worth of words, a few vector
// loads). Lanes of one bin rank in the atomics' order, which may differ from run to run: the
// count does not depend on which lane takes which position.
#define SORT_BINS 256
static inline uint counted_index(uint i, uint bin, uint lid, uint size, __local uint *bins,
                                 __local ulong *scratch) {
    for (uint k = lid; k < SORT_BINS; k += size)
        bins[k] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint rank = atomic_inc(bins + bin);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint k = 0;
    for (; k + 4 <= bin; k += 4) {
        uint4 c = vload4(0, bins + k);
        rank += c.x + c.y + c.z + c.w;
    }
    for (; k < bin; k++)
        rank += bins[k];
    __local uint *picked = (__local uint *)scratch;
    picked[rank] = i;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = picked[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    return mine;
}
#if PERFT_LEAF & 1024
#define SORT_BINS_SETUP __local uint sort_bins[SORT_BINS];
#define SORT_RANK(i, n, b, lid, size, scratch)                                            \
    {                                                                                     \
        uint bin = 0;                       /* lanes past n rank first */                 \
        if (i < n)                                                                        \
            bin = min((uint)count_legal(b) + 1, (uint)SORT_BINS - 1);                      \
        i = counted_index(i, bin, lid, size, sort_bins, scratch);                         \
    }
#else
#define SORT_BINS_SETUP
#define SORT_RANK(i, n, b, lid, size, scratch)                                            \
    {                                                                                     \
        uint key = lid;                     /* (moves + 1) * 2^16 + lane: unique */       \
        if (i < n)                                                                        \
            key = ((uint)count_legal(b) + 1) << 16 | lid;                                 \
        i = sorted_index(i, key, lid, size, scratch);                                     \
    }
#endif

// PERFT_LEAF 128 (the host's part in backend.py): the last breadth-first ply writes each child as
// its parent's index and its move (expand_moves, 6 bytes a child instead of a position's 40), and
// the leaf kernels perft_fused_N make that move themselves, as perft_gpu's leaf does: the
// expansion makes no move and writes a seventh of the bytes, and the leaf reads its parent, which
// the lanes beside it share, instead of a position of its own.
static inline void load_child(Board *b, __global const ulong *positions,
                              __global const uint *parents, __global const ushort *moves, uint i,
                              Lines lines) {
    load_position(b, positions + (size_t)parents[i] * POSITION_WORDS, lines);
    uint m = moves[i];
    int from = MOVE_FROM(m), to = MOVE_TO(m), promo = MOVE_PROMO(m);
    Undo u;
    make_legal(b, &u, from, to, promo, type_at(b, from), type_at(b, to), 0, false);
}

// Bulk perft of every position, one kernel per depth (a kernel carries the registers of its
// deepest path, so depth 1 and 2 do not pay for depth 3); one partial sum per work-group.
// SORT: whether the lanes take their positions sorted (SORT_LANES_*; not for one ply, which
// has no loop over moves). LOAD(b, i): position i of the level into *b; ARGS: the level's
// arguments before n (the positions; or with PERFT_LEAF 128, the parents, their children's
// parent indices and moves).
#define LOAD_POSITION(b, i) load_position(b, positions + (size_t)(i) * POSITION_WORDS, lines)
#define LOAD_CHILD(b, i) load_child(b, positions, parents, moves, i, lines)
#define POSITION_ARGS __global const ulong *positions
#define CHILD_ARGS __global const ulong *positions, __global const uint *parents,           \
                   __global const ushort *moves
#define PERFT_BULK_KERNEL(NAME, COUNT, SORT, ARGS, LOAD)                                  \
__kernel void NAME(ARGS, const uint n,                                                    \
                   __global ulong *partial_sums, __local ulong *scratch, BULK_LINES_ARG) \
{                                                                                         \
    uint i = get_global_id(0), lid = get_local_id(0), size = get_local_size(0);          \
    BULK_LINES_SETUP(lid, size)                                                           \
    SORT_BINS_SETUP                                                                       \
    if (SORT) {                                                                           \
        Board b;                                                                          \
        if (i < n)                                                                        \
            LOAD(&b, i);                                                                  \
        SORT_RANK(i, n, &b, lid, size, scratch)                                           \
    }                                                                                     \
    ulong leaves = 0;                                                                     \
    if (i < n) {                                                                          \
        Board b;                                                                          \
        LOAD(&b, i);                                                                      \
        leaves = COUNT(&b);                                                               \
    }                                                                                     \
    scratch[lid] = leaves;                                                                \
    barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    for (uint stride = size >> 1; stride > 0; stride >>= 1) {                             \
        if (lid < stride)                                                                 \
            scratch[lid] += scratch[lid + stride];                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                     \
    }                                                                                     \
    if (lid == 0)                                                                         \
        partial_sums[get_group_id(0)] = scratch[0];                                       \
}

PERFT_BULK_KERNEL(perft_bulk_1, count_legal, 0, POSITION_ARGS, LOAD_POSITION)
PERFT_BULK_KERNEL(perft_bulk_2, perft_below_2, SORT_LANES_2, POSITION_ARGS, LOAD_POSITION)
PERFT_BULK_KERNEL(perft_bulk_3, perft_below_3, SORT_LANES_3, POSITION_ARGS, LOAD_POSITION)
PERFT_BULK_KERNEL(perft_fused_1, count_legal, 0, CHILD_ARGS, LOAD_CHILD)
PERFT_BULK_KERNEL(perft_fused_2, perft_below_2, SORT_LANES_2, CHILD_ARGS, LOAD_CHILD)

#if !(defined(PERFT_LOCAL_LINES) && PERFT_LOCAL_LINES)   // served by the main program
// Breadth-first expansion, pass 1: how many children each position has.
__kernel void count_children(__global const ulong *positions, const uint n, __global uint *counts,
                             Lines lines)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    Board b;
    load_position(&b, positions + (size_t)i * POSITION_WORDS, lines);
    counts[i] = (uint)count_legal(&b);
}

// The work-group's inclusive scan of scratch[0..size) in local memory (Hillis-Steele): every
// lane of the group calls it (it holds barriers), each having written its own entry first.
#define LOCAL_INCLUSIVE_SCAN(T)                                                                 \
    static inline void local_inclusive_scan_##T(__local T *scratch, uint lid, uint size)       \
    {                                                                                           \
        for (uint d = 1; d < size; d <<= 1) {                                                   \
            T add = lid >= d ? scratch[lid - d] : 0;                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                       \
            scratch[lid] += add;                                                                \
            barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        }                                                                                       \
    }
LOCAL_INCLUSIVE_SCAN(ulong)
LOCAL_INCLUSIVE_SCAN(uint)

// The prefix sum of the counts on the device (the host would otherwise read, sum and send back
// tens of MB: some 40 ms of a start position perft 8 on the H100, docs/opencl.md), in two
// passes around the host's sum of the group totals. Pass 1b: each work-group's inclusive scan of
// its counts (Hillis-Steele in local memory) into offsets[i + 1], and the group's total.
__kernel void scan_groups(__global const uint *counts, const uint n, __global ulong *offsets,
                          __global ulong *group_totals, __local ulong *scratch, Lines lines)
{
    uint i = get_global_id(0), lid = get_local_id(0), size = get_local_size(0);
    scratch[lid] = i < n ? counts[i] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    local_inclusive_scan_ulong(scratch, lid, size);
    if (i < n)
        offsets[i + 1] = scratch[lid];
    if (lid == size - 1)
        group_totals[get_group_id(0)] = scratch[lid];
}

// Pass 1c: each group's offsets shifted by the sum of the groups before it (`bases`, from the
// host), so that offsets[i] is where position i's children start and offsets[n] their number.
__kernel void add_group_bases(__global ulong *offsets, const uint n, __global const ulong *bases,
                              Lines lines)
{
    uint i = get_global_id(0);
    if (i < n)
        offsets[i + 1] += bases[get_group_id(0)];
    if (i == 0)
        offsets[0] = 0;
}

// PERFT_LEAF 8192 (the host's part in backend.py): pass 1b's group totals summed on the device
// too, so that no level of the expansion waits for the host between its passes. One work-group:
// each lane sums a run of the totals, the lanes' sums are scanned in local memory, and each lane
// writes the exclusive prefix of its run into bases (what add_group_bases adds).
__kernel void scan_totals(__global const ulong *totals, const uint groups, __global ulong *bases,
                          __local ulong *scratch, Lines lines)
{
    uint lid = get_local_id(0), size = get_local_size(0);
    uint per = (groups + size - 1) / size;
    uint lo = min(lid * per, groups), hi = min(lo + per, groups);
    ulong sum = 0;
    for (uint g = lo; g < hi; g++)
        sum += totals[g];
    scratch[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    local_inclusive_scan_ulong(scratch, lid, size);
    ulong base = scratch[lid] - sum;
    for (uint g = lo; g < hi; g++) {
        bases[g] = base;
        base += totals[g];
    }
}

// Position i of pass 2 loaded into b and its legal moves into list: their number, or -1 (and
// the error flag raised) when it disagrees with pass 1's offsets.
static inline int listed_children(__global const ulong *positions, uint i,
                                  __global const ulong *offsets, Board *b, ushort *list,
                                  __global volatile uint *error_flag, Lines lines)
{
    load_position(b, positions + (size_t)i * POSITION_WORDS, lines);
    int count = legal_moves(b, list);
    if ((ulong)count != offsets[i + 1] - offsets[i]) {
        atomic_or(error_flag, 1u);
        return -1;
    }
    return count;
}

// Of b's `count` legal moves in `list`, the k-th for k = first, first + step, ... made and the
// child stored at children[k].
static inline void store_child_positions(Board *b, const ushort *list, int count,
                                         __global ulong *children, int first, int step)
{
    for (int k = first; k < count; k += step) {
        uint m = list[k];
        int from = MOVE_FROM(m), to = MOVE_TO(m), promo = MOVE_PROMO(m);
        int mover = type_at(b, from), victim = type_at(b, to);
        Undo u;
        make_legal(b, &u, from, to, promo, mover, victim, 0, false);
        store_position(b, children + (size_t)k * POSITION_WORDS);
        unmake(b, &u, from, to, promo, mover, victim);
    }
}

// Pass 2: write each position's children from its offset (an exclusive prefix sum of the
// counts), `split` lanes a position (lane part of them the children part, part + split, ...).
// A child list whose length disagrees with pass 1 raises the error flag.
__kernel void expand(__global const ulong *positions, const uint n,
                     __global const ulong *offsets, __global ulong *children,
                     __global volatile uint *error_flag, const uint split, Lines lines)
{
    uint i = get_global_id(0) / split, part = get_global_id(0) % split;
    if (i >= n)
        return;
    Board b;
    ushort list[MAX_MOVES];
    int count = listed_children(positions, i, offsets, &b, list, error_flag, lines);
    if (count > 0)
        store_child_positions(&b, list, count, children + offsets[i] * POSITION_WORDS, part, split);
}

// PERFT_LEAF 131072 (the host's part in backend.py): the levels at the top of the tree, of at
// most one position a lane of the work-group, expanded by that one work-group in one launch
// instead of five launches and a read a level: each lane counts its position's moves
// (count_legal), the counts are scanned in local memory, and each lane writes its position's
// children from its offset, into level_a and level_b in turn; until a level holds more positions
// than the group has lanes, or `levels` levels are made. result: the last level's size, the
// levels made, then each level's size (the first made first). A child list whose length
// disagrees with the count raises the error flag.
#define TOP_MAX_LANES 1024
__kernel void expand_top(__global const ulong *positions, const uint n, const uint levels,
                         __global ulong *level_a, __global ulong *level_b, __global uint *result,
                         __global volatile uint *error_flag, Lines lines)
{
    __local uint scratch[TOP_MAX_LANES];
    uint lid = get_local_id(0), size = get_local_size(0);
    __global const ulong *parents = positions;
    uint parents_n = n, made = 0;
    // the same in every lane: the barriers inside are met by all
    while (made < levels && parents_n <= size && parents_n > 0) {
        __global ulong *children = (made & 1) ? level_b : level_a;
        Board b;
        uint count = 0;
        if (lid < parents_n) {
            load_position(&b, parents + (size_t)lid * POSITION_WORDS, lines);
            count = (uint)count_legal(&b);
        }
        scratch[lid] = count;
        barrier(CLK_LOCAL_MEM_FENCE);
        local_inclusive_scan_uint(scratch, lid, size);
        uint first = scratch[lid] - count, total = scratch[size - 1];
        if (lid < parents_n) {
            ushort list[MAX_MOVES];
            int listed = legal_moves(&b, list);
            if ((uint)listed != count)
                atomic_or(error_flag, 1u);
            else if (listed > 0)
                store_child_positions(&b, list, listed, children + (size_t)first * POSITION_WORDS,
                                      0, 1);
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        if (lid == 0)
            result[2 + made] = total;
        parents = children;
        parents_n = total;
        made++;
    }
    if (lid == 0) {
        result[0] = parents_n;
        result[1] = made;
    }
}

// Pass 2 of the last ply above the leaves with PERFT_LEAF 128: each child written as its parent's
// index and its move (the leaf kernels perft_fused_N make it), from the parent's offset: by the
// lane itself, one child a store, or with PERFT_LEAF 4096, 16 bytes a store where the run is
// aligned (four parent indices, eight moves): a warp's stores go to 32 places each, so each
// lane's store is a memory transaction of its own whatever its size.
static inline void store_children(__global uint *parents, __global ushort *moves, uint i,
                                  ulong first, int count, const ushort *list)
{
#if PERFT_LEAF & 4096
    ulong k = first, end = first + (ulong)count;
    for (; k < end && (k & 3); k++)
        parents[k] = i;
    for (; k + 4 <= end; k += 4)
        ((__global uint4 *)parents)[k >> 2] = (uint4)(i);
    for (; k < end; k++)
        parents[k] = i;
    k = first;
    int j = 0;
    for (; k < end && (k & 7); k++, j++)
        moves[k] = list[j];
    for (; k + 8 <= end; k += 8, j += 8)
        ((__global uint4 *)moves)[k >> 3] = (uint4)(
            (uint)list[j] | (uint)list[j + 1] << 16, (uint)list[j + 2] | (uint)list[j + 3] << 16,
            (uint)list[j + 4] | (uint)list[j + 5] << 16, (uint)list[j + 6] | (uint)list[j + 7] << 16);
    for (; k < end; k++, j++)
        moves[k] = list[j];
#else
    for (int k = 0; k < count; k++) {
        parents[first + k] = i;
        moves[first + k] = list[k];
    }
#endif
}

// PERFT_LEAF 16384: the work-group's children (one run of the level's, as its parents are
// consecutive) gathered in local memory, each lane's moves and its lane number at their places
// in the run, then written out by all lanes together, lane k the run's k-th child, k + size the
// next: consecutive lanes store to consecutive words. A run longer than STAGED_CHILDREN (or a
// group of more than 256 lanes, whose numbers a byte cannot hold) is stored lane by lane
// (store_children). The host launches this kernel in work-groups of 64 (backend.py).
#define STAGED_CHILDREN 4096

__kernel void expand_moves(__global const ulong *positions, const uint n,
                           __global const ulong *offsets, __global uint *parents,
                           __global ushort *moves, __global volatile uint *error_flag, Lines lines)
{
    uint i = get_global_id(0);
    Board b;
    ushort list[MAX_MOVES];
#if PERFT_LEAF & 16384
    __local ushort staged_moves[STAGED_CHILDREN];
    __local uchar staged_lanes[STAGED_CHILDREN];
    uint lid = get_local_id(0), size = get_local_size(0);
    uint group_first = i - lid, group_end = min(group_first + size, n);
    ulong run_first = offsets[min(group_first, n)], run_end = offsets[group_end];
    // the same for every lane of the group: the barrier below is met by all or none
    bool staged = size <= 256 && run_end - run_first <= STAGED_CHILDREN;
    int count = i < n ? listed_children(positions, i, offsets, &b, list, error_flag, lines) : 0;
    ulong first = i < n ? offsets[i] : 0;
    if (!staged) {
        if (count > 0)
            store_children(parents, moves, i, first, count, list);
        return;
    }
    for (int k = 0; k < count; k++) {
        staged_moves[first - run_first + k] = list[k];
        staged_lanes[first - run_first + k] = (uchar)lid;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong k = run_first + lid; k < run_end; k += size) {
        parents[k] = group_first + staged_lanes[k - run_first];
        moves[k] = staged_moves[k - run_first];
    }
#else
    if (i >= n)
        return;
    int count = listed_children(positions, i, offsets, &b, list, error_flag, lines);
    if (count < 0)
        return;
    store_children(parents, moves, i, offsets[i], count, list);
#endif
}
#endif

// The board of one job, held in the side to move's frame, with make/unmake, attack sets,
// TestCheck and the incremental evaluation (docs/semantics.md sections 1, 3 and 6).
//
// Frame: every square is the *relative* square of the side to move (s for white, s ^ 56 for
// black), so the side to move always plays "up the board" from rank 1. The contract breaks
// every tie by the relative square, so move order is "lowest square first" with no per-side
// code, and the warps of a GPU never diverge on the colour to move. A move is made in the
// mover's frame and the board is flipped (byte-swapped) for the child.
//
// Pieces: three bit-planes hold each square's PieceType (type t on s <=> bit s of plane i is
// bit i of t) and `own` marks the side to move's pieces: four words instead of eight.
// The prelude (generated from chessaccel.contract.defs / evaltables) defines PAWN..KING, the tables and
// the limits.

#define BIT(s) ((ulong)1 << (s))
#define NO_SQ 64

#define FILE_A 0x0101010101010101UL
#define FILE_H 0x8080808080808080UL
#define NOT_A (~FILE_A)
#define NOT_H (~FILE_H)
#define NOT_AB 0xFCFCFCFCFCFCFCFCUL
#define NOT_GH 0x3F3F3F3F3F3F3F3FUL
#define RANK_3 0x0000000000FF0000UL
#define RANK_8 0xFF00000000000000UL

// Castling rights in the side to move's frame.
#define OWN_K 1u
#define OWN_Q 2u
#define ENEMY_K 4u
#define ENEMY_Q 8u

// The kindergarten attack tables (layout.line_tables; offsets LINES_* from the prelude): global
// memory, or each work-group's copy in local memory in the bulk perft program built with
// PERFT_LOCAL_LINES (device.py, BUILD_SWITCHES).
#define LINES_WORDS (LINES_DIAGONAL_ZONE + 64)
#if defined(PERFT_LOCAL_LINES) && PERFT_LOCAL_LINES
typedef __local const ulong *Lines;
#else
typedef __global const ulong *Lines;
#endif

typedef struct {
    Lines lines;        // the attack tables the job's kernel was given
    ulong q0, q1, q2;   // PieceType bit-planes
    ulong own;          // pieces of the side to move
    uint castle;        // OWN_K | OWN_Q | ENEMY_K | ENEMY_Q
    int ep;             // en-passant square (relative) or NO_SQ
    int mg, eg;         // material + piece-square sums, side to move's view
    int phase;          // sum of PHASE_INC (capped only when tapering)
} Board;

// What unmake needs that the move does not say (the SearchStack's undo record).
typedef struct {
    uint castle;
    int ep, mg, eg, phase;
} Undo;

static inline ulong occupied(const Board *b) { return b->q0 | b->q1 | b->q2; }

// Squares holding type t (a compile-time constant after inlining), both colours.
static inline ulong type_set(const Board *b, int t) {
    return ((t & 1) ? b->q0 : ~b->q0) & ((t & 2) ? b->q1 : ~b->q1) & ((t & 4) ? b->q2 : ~b->q2);
}
// Bishops and queens / rooks and queens (the diagonal and straight sliders).
static inline ulong diagonal_set(const Board *b) { return type_set(b, BISHOP) | type_set(b, QUEEN); }
static inline ulong straight_set(const Board *b) { return type_set(b, ROOK) | type_set(b, QUEEN); }

static inline int type_at(const Board *b, int s) {
    return (int)(((b->q0 >> s) & 1) | (((b->q1 >> s) & 1) << 1) | (((b->q2 >> s) & 1) << 2));
}

// Add or remove (xor) a piece of type t on the squares of `mask`.
static inline void toggle(Board *b, int t, ulong mask) {
    b->q0 ^= mask & (0UL - (ulong)(t & 1));
    b->q1 ^= mask & (0UL - (ulong)((t >> 1) & 1));
    b->q2 ^= mask & (0UL - (ulong)((t >> 2) & 1));
}

#if CPU_BUILTINS
// On PoCL (CPU_BUILTINS, set by device.py) OpenCL's upsample, clz and popcount are calls into
// its library, not instructions: 13 % of a search job's time (perf, 2026-11-29). Clang's
// builtins are one instruction each (bswap, tzcnt, popcnt) and give the same values.
static inline ulong byte_swap(ulong x) { return __builtin_bswap64(x); }
static inline int lowest(ulong x) { return x ? __builtin_ctzl(x) : -1; }
#undef popcount       // PoCL's own is a macro too
#define popcount(x) __builtin_popcountl((ulong)(x))
#else
#if BYTE_SWAP_HALVES || (defined(PERFT_COUNT) && (PERFT_COUNT & 4))
// the rank order reversed in 32-bit halves, shifts and masks in the pattern compilers know as a
// byte swap (NVIDIA's OpenCL compiler makes 16-bit shifts and ors of the vector shuffle below,
// some 25 instructions a word: docs/opencl.md, "Perft"); every kernel's make and unmake flip
// the board, so the search kernels take it too (BYTE_SWAP_HALVES, the prelude's, default 1)
static inline uint byte_swap32(uint x) {
    return (x << 24) | ((x & 0xFF00u) << 8) | ((x >> 8) & 0xFF00u) | (x >> 24);
}
static inline ulong byte_swap(ulong x) { return upsample(byte_swap32((uint)x), byte_swap32((uint)(x >> 32))); }
#else
static inline ulong byte_swap(ulong x) { return as_ulong(as_uchar8(x).s76543210); }
#endif
#if defined(PERFT_COUNT) && (PERFT_COUNT & 32)
// PERFT_COUNT 32 (the bulk perft program, perft.cl): the lowest set bit's index as the number of
// zeros below it, popcount(~x & (x - 1)) (two 32-bit popcounts; x - 1 is the loops' own x &= x - 1)
// rather than 63 - clz(x & -x) (64-bit clz is two and a select); 64 for x = 0, which no caller passes.
static inline int lowest(ulong x) { return (int)popcount(~x & (x - 1)); }
#else
static inline int lowest(ulong x) { return (int)(63 - clz(x & (0UL - x))); }
#endif
#endif

// --- attack sets: Kogge-Stone occluded fills (no tables: nothing to fetch from memory) -------

static inline ulong fill_north(ulong g, ulong e) {
    g |= e & (g << 8);  e &= e << 8;
    g |= e & (g << 16); e &= e << 16;
    g |= e & (g << 32);
    return g << 8;
}
static inline ulong fill_south(ulong g, ulong e) {
    g |= e & (g >> 8);  e &= e >> 8;
    g |= e & (g >> 16); e &= e >> 16;
    g |= e & (g >> 32);
    return g >> 8;
}
static inline ulong fill_east(ulong g, ulong e) {
    e &= NOT_A;
    g |= e & (g << 1); e &= e << 1;
    g |= e & (g << 2); e &= e << 2;
    g |= e & (g << 4);
    return (g << 1) & NOT_A;
}
static inline ulong fill_west(ulong g, ulong e) {
    e &= NOT_H;
    g |= e & (g >> 1); e &= e >> 1;
    g |= e & (g >> 2); e &= e >> 2;
    g |= e & (g >> 4);
    return (g >> 1) & NOT_H;
}
static inline ulong fill_north_east(ulong g, ulong e) {
    e &= NOT_A;
    g |= e & (g << 9);  e &= e << 9;
    g |= e & (g << 18); e &= e << 18;
    g |= e & (g << 36);
    return (g << 9) & NOT_A;
}
static inline ulong fill_north_west(ulong g, ulong e) {
    e &= NOT_H;
    g |= e & (g << 7);  e &= e << 7;
    g |= e & (g << 14); e &= e << 14;
    g |= e & (g << 28);
    return (g << 7) & NOT_H;
}
static inline ulong fill_south_east(ulong g, ulong e) {
    e &= NOT_A;
    g |= e & (g >> 7);  e &= e >> 7;
    g |= e & (g >> 14); e &= e >> 14;
    g |= e & (g >> 28);
    return (g >> 7) & NOT_A;
}
static inline ulong fill_south_west(ulong g, ulong e) {
    e &= NOT_H;
    g |= e & (g >> 9);  e &= e >> 9;
    g |= e & (g >> 18); e &= e >> 18;
    g |= e & (g >> 36);
    return (g >> 9) & NOT_H;
}

// Squares the pieces of `g` reach along rook / bishop lines; a ray stops at the first occupied
// square, which it reaches (`e` = empty squares).
static inline ulong straight_attacks(ulong g, ulong e) {
    return fill_north(g, e) | fill_south(g, e) | fill_east(g, e) | fill_west(g, e);
}
static inline ulong diagonal_attacks(ulong g, ulong e) {
    return fill_north_east(g, e) | fill_north_west(g, e)
         | fill_south_east(g, e) | fill_south_west(g, e);
}
static inline ulong knight_attacks(ulong g) {
    ulong l1 = (g >> 1) & NOT_H, l2 = (g >> 2) & NOT_GH;
    ulong r1 = (g << 1) & NOT_A, r2 = (g << 2) & NOT_AB;
    ulong h1 = l1 | r1, h2 = l2 | r2;
    return (h1 << 16) | (h1 >> 16) | (h2 << 8) | (h2 >> 8);
}
static inline ulong king_attacks(ulong g) {
    ulong a = ((g << 1) & NOT_A) | ((g >> 1) & NOT_H);
    g |= a;
    return a | (g << 8) | (g >> 8);
}
// Capture targets of the side to move's pawns (they move north) / of the enemy's (south).
static inline ulong pawn_attacks_up(ulong p) { return ((p << 9) & NOT_A) | ((p << 7) & NOT_H); }
static inline ulong pawn_attacks_down(ulong p) { return ((p >> 7) & NOT_A) | ((p >> 9) & NOT_H); }

// --- attacks of one square: table look-ups -------------------------------------------------
// A line's occupancy is gathered into a 6-bit index (files or ranks 2..7: the end squares
// never block) by a shift (rank) or one multiplication (file, diagonals), which picks the
// line's attacks from a table (layout.line_tables, where the construction is checked).

#define FILE_B (FILE_A << 1)
#define DIAGONAL_C2H7 0x0080402010080400UL

#if defined(PERFT_MAGIC) && PERFT_MAGIC
#if defined(PERFT_LOCAL_LINES) && PERFT_LOCAL_LINES
#error "PERFT_MAGIC reads the lines buffer from global memory: build it with PERFT_LOCAL_LINES=0"
#endif
// Magic bitboards (PERFT_MAGIC, a build switch of the bulk perft kernels' program; tables from
// host/opencl/magics.py after the line tables): each square's entry is four words (mask, magic,
// the word offset of its attack table, the shift), rooks' entries first, then bishops'.
// Before them, after the line tables, the between table (magics.between_table: the squares
// strictly between two squares of one line; perft.cl's pin scan with PERFT_COUNT 16).
#define LINES_BETWEEN LINES_WORDS
#define LINES_MAGIC (LINES_WORDS + 64 * 64)
#if PERFT_MAGIC == 2
// PERFT_MAGIC 2 (magics.fixed_magic_tables): every table as large as its kind's largest (4,096
// words a rook square, 512 a bishop square), so the shift is a constant and the table's place
// follows from the square: an entry is two words (mask, magic), one table load after them.
#define LINES_ROOK_TABLES (LINES_MAGIC + 2 * 64 * 2)
#define LINES_BISHOP_TABLES (LINES_ROOK_TABLES + 64 * 4096)
static inline ulong straight_from(Lines t, int s, ulong occ) {
    Lines e = t + LINES_MAGIC + 2 * s;
    return t[LINES_ROOK_TABLES + (s << 12) + (int)(((occ & e[0]) * e[1]) >> 52)];
}
static inline ulong diagonal_from(Lines t, int s, ulong occ) {
    Lines e = t + LINES_MAGIC + 2 * 64 + 2 * s;
    return t[LINES_BISHOP_TABLES + (s << 9) + (int)(((occ & e[0]) * e[1]) >> 55)];
}
#else
static inline ulong magic_attacks(Lines t, int entry, ulong occ) {
    ulong4 e = vload4(entry, t);
    return t[(int)e.z + (int)(((occ & e.x) * e.y) >> e.w)];
}
static inline ulong straight_from(Lines t, int s, ulong occ) {
    return magic_attacks(t, LINES_MAGIC / 4 + s, occ);
}
static inline ulong diagonal_from(Lines t, int s, ulong occ) {
    return magic_attacks(t, LINES_MAGIC / 4 + 64 + s, occ);
}
#endif
#elif defined(PERFT_LOCAL_LINES) && PERFT_LOCAL_LINES == 2
// The compact copy (PERFT_LOCAL_LINES = 2): the rank attacks as bytes, FILL_UP's first 512 bytes
// (the copy in perft.cl), so that a warp's 32 look-ups fall into 128 words of local memory
// rather than 1,024; the byte is copied onto every rank by one 32-bit multiplication.
#define RANK_BYTE(t, f, i) ((uint)((__local const uchar *)((t) + LINES_FILL_UP))[(f) * 64 + (i)])
static inline ulong every_rank(uint byte) {
    uint x = byte * 0x01010101u;
    return upsample(x, x);
}
static inline ulong straight_from(Lines t, int s, ulong occ) {
    int f = s & 7, r = s >> 3;
    ulong rank = (ulong)RANK_BYTE(t, f, (int)((occ >> (8 * r + 1)) & 63)) << (8 * r);
    int i = (int)((((occ >> f) & FILE_A) * DIAGONAL_C2H7) >> 58);
    return rank | (t[LINES_FILE_ATTACKS + r * 64 + i] << f);
}
static inline ulong diagonal_from(Lines t, int s, ulong occ) {
    int f = s & 7;
    ulong d = t[LINES_DIAGONAL + s], a = t[LINES_ANTI_DIAGONAL + s];
    return (every_rank(RANK_BYTE(t, f, (int)(((occ & d) * FILE_B) >> 58))) & d)
         | (every_rank(RANK_BYTE(t, f, (int)(((occ & a) * FILE_B) >> 58))) & a);
}
#else
static inline ulong straight_from(Lines t, int s, ulong occ) {
    int f = s & 7, r = s >> 3;
    ulong rank = t[LINES_FILL_UP + f * 64 + (int)((occ >> (8 * r + 1)) & 63)] & (0xFFUL << (8 * r));
    int i = (int)((((occ >> f) & FILE_A) * DIAGONAL_C2H7) >> 58);
    return rank | (t[LINES_FILE_ATTACKS + r * 64 + i] << f);
}
static inline ulong diagonal_from(Lines t, int s, ulong occ) {
    const Lines fill_up = t + LINES_FILL_UP + (s & 7) * 64;
    ulong d = t[LINES_DIAGONAL + s], a = t[LINES_ANTI_DIAGONAL + s];
    return (fill_up[(int)(((occ & d) * FILE_B) >> 58)] & d)
         | (fill_up[(int)(((occ & a) * FILE_B) >> 58)] & a);
}
#endif
#define KNIGHT_FROM(t, s) ((t)[LINES_KNIGHT + (s)])
#define KING_FROM(t, s) ((t)[LINES_KING + (s)])

// Enemy pieces attacking square s: the square radiates the super piece (TestCheck).
static inline ulong attackers(const Board *b, int s) {
    ulong occ = occupied(b), enemy = occ & ~b->own;
    return enemy & ((KNIGHT_FROM(b->lines, s) & type_set(b, KNIGHT))
                  | (KING_FROM(b->lines, s) & type_set(b, KING))
                  | (pawn_attacks_up(BIT(s)) & type_set(b, PAWN))
                  | (straight_from(b->lines, s, occ) & straight_set(b))
                  | (diagonal_from(b->lines, s, occ) & diagonal_set(b)));
}
static inline bool attacked(const Board *b, int s) { return attackers(b, s) != 0; }

static inline int own_king(const Board *b) { return lowest(type_set(b, KING) & b->own); }

// --- evaluation (section 6): incremental sums, tapered on demand; the terms with EVAL_TERMS --
// The tables come in one global buffer of int4 (layout.eval_table): entry t * 64 + s holds
// (SQUARE_MG, SQUARE_EG, PHASE_INC) of a white piece of type t on square s, entry
// PHASE_WEIGHT_BASE + p holds PHASE_WEIGHT[p]. Global memory, not __constant: lanes of a warp
// look up different squares, which the constant cache would serve one address at a time.
#define PHASE_WEIGHT_BASE (7 * 64)
typedef __global const int4 *Values;

// What a piece of type t on relative square s adds to the side to move's sums (an enemy
// piece uses the rank-mirrored square and counts negative).
#define OWN_VALUE(v, t, s) ((v)[(t) * 64 + (s)])
#define ENEMY_VALUE(v, t, s) ((v)[(t) * 64 + ((s) ^ 56)])

static inline void init_eval(Board *b, Values v) {
    int mg = 0, eg = 0, phase = 0;
    ulong occ = occupied(b);
    while (occ) {
        int s = lowest(occ);
        occ &= occ - 1;
        int t = type_at(b, s);
        int4 e = ((b->own >> s) & 1) ? OWN_VALUE(v, t, s) : -ENEMY_VALUE(v, t, s);
        mg += e.x;
        eg += e.y;
        phase += OWN_VALUE(v, t, 0).z;
    }
    b->mg = mg; b->eg = eg; b->phase = phase;
}

// floor(x / 2^TAPER_SHIFT), whatever the compiler does with a signed right shift
static inline int floor_shift(int x) {
    return x >= 0 ? (x >> TAPER_SHIFT) : -((-x + (1 << TAPER_SHIFT) - 1) >> TAPER_SHIFT);
}

#if EVAL_TERMS
// --- the terms evaluation (section 6, "The terms evaluation"), built in with EVAL_TERMS = 1 ---
// Computed in full at each evaluation, not incrementally: the terms of the side to move in its
// own frame minus the enemy's in the enemy's frame (the words byte-swapped), which is the
// model's white-minus-black turned to the side to move's view, plus the tempo. Weights and the
// passed-pawn tables come from the prelude (contract/evalweights.json).
#define RANK_7 0x00FF000000000000UL
#define RANK_1 0x00000000000000FFUL
#define RANK_2 0x000000000000FF00UL

static inline int mobility_of(int count, int centre) { return count - centre; }

// Every square at or above (fill_up) / at or below (fill_down) one of x's, on its file.
static inline ulong fill_up(ulong x) {
    x |= x << 8; x |= x << 16; x |= x << 32;
    return x;
}
static inline ulong fill_down(ulong x) {
    x |= x >> 8; x |= x >> 16; x |= x >> 32;
    return x;
}

// (mg, eg) of the terms of one side that depend on its frame (it plays up the board): its pawn
// structure, its king's shield and files. own[t] / enemy[t] are the words of each PieceType t
// in the side's frame.
static inline int2 pawn_king_terms(const ulong *own, const ulong *enemy) {
    ulong occ = own[PAWN] | own[KNIGHT] | own[BISHOP] | own[ROOK] | own[QUEEN] | own[KING]
              | enemy[PAWN] | enemy[KNIGHT] | enemy[BISHOP] | enemy[ROOK] | enemy[QUEEN]
              | enemy[KING];
    ulong pawns = own[PAWN], enemy_pawns = enemy[PAWN];
    ulong enemy_pawn_attacks = pawn_attacks_down(enemy_pawns);
    int mg = 0, eg = 0;
    // pawns: passed (by rank, free path / blocked), isolated, doubled, backward, connected;
    // each term's pawns found for all pawns at once (file fills), only the passed ones looped
    ulong ahead = fill_up(pawns << 8);                    // squares in front of own pawns
    ulong files = fill_down(ahead | pawns);               // files holding own pawns
    ulong beside = ((files << 1) & NOT_A) | ((files >> 1) & NOT_H);
    ulong enemy_ahead = fill_down(enemy_pawns >> 8);      // squares behind enemy pawns
    ulong not_passed = enemy_ahead | ((enemy_ahead << 1) & NOT_A) | ((enemy_ahead >> 1) & NOT_H);
    for (ulong x = pawns & ~not_passed; x; x &= x - 1) {
        int s = lowest(x), r = s >> 3;
        ulong bit = BIT(s);
        ulong front = fill_up(bit << 8);
        mg += PASSED_PAWN_MG[r];
        eg += PASSED_PAWN_EG[r];
        if (!(occ & front)) {
            mg += PASSED_PAWN_FREE_PATH_MG; eg += PASSED_PAWN_FREE_PATH_EG;
        } else if (occ & (bit << 8)) {
            mg += PASSED_PAWN_BLOCKED_MG; eg += PASSED_PAWN_BLOCKED_EG;
        }
    }
    int count = popcount(pawns & ~beside);                // isolated
    mg += count * ISOLATED_PAWN_MG; eg += count * ISOLATED_PAWN_EG;
    count = popcount(pawns & fill_down(pawns >> 8));      // doubled: an own pawn in front
    mg += count * DOUBLED_PAWN_MG; eg += count * DOUBLED_PAWN_EG;
    // backward: not isolated, no own pawn beside it at its rank or below, the square in front
    // taken on by an enemy pawn
    ulong beside_up = fill_up(((pawns << 1) & NOT_A) | ((pawns >> 1) & NOT_H));
    count = popcount(pawns & beside & ~beside_up & (enemy_pawn_attacks >> 8));
    mg += count * BACKWARD_PAWN_MG; eg += count * BACKWARD_PAWN_EG;
    // connected: an own pawn beside it or behind it on a diagonal
    ulong phalanx = ((pawns << 1) & NOT_A) | ((pawns >> 1) & NOT_H);
    count = popcount(pawns & (phalanx | pawn_attacks_up(pawns)));
    mg += count * CONNECTED_PAWN_MG; eg += count * CONNECTED_PAWN_EG;
    // king safety: shield, open and half-open files at the king (attacks on its zone: piece_terms)
    int k = lowest(own[KING]);
    ulong king = BIT(k);
    ulong row = king | ((king << 1) & NOT_A) | ((king >> 1) & NOT_H);
    int near = popcount(pawns & (row << 8)), far = popcount(pawns & (row << 16));
    mg += near * KING_SHIELD_NEAR_MG + far * KING_SHIELD_FAR_MG;
    eg += near * KING_SHIELD_NEAR_EG + far * KING_SHIELD_FAR_EG;
    for (int f = max((k & 7) - 1, 0); f <= min((k & 7) + 1, 7); f++) {
        ulong file = FILE_A << f;
        if (!(pawns & file)) {
            if (enemy_pawns & file) {
                mg += KING_HALF_OPEN_FILE_MG; eg += KING_HALF_OPEN_FILE_EG;
            } else {
                mg += KING_OPEN_FILE_MG; eg += KING_OPEN_FILE_EG;
            }
        }
    }
    return (int2)(mg, eg);
}

// One piece's attacks: its mobility (targets in `free`, about its type's centre) added to
// *mobility, its attacks on the enemy king's zone to *zone, the squares themselves to the
// union `into` (its side's attacks of its kind, for the threats).
#define PIECE_ATTACKS(attacks, free, enemy_zone, centre, mobility, zone, into) \
    { ulong a_ = (attacks); *(mobility) += popcount(a_ & (free)) - (centre); \
      *(zone) += popcount(a_ & (enemy_zone)); (into) |= a_; }

// (mg, eg) of both sides' piece terms, the side to move's less the enemy's, in the side to
// move's frame (the counts do not depend on the frame): mobility, attacks on the other king's
// zone, rooks on open and half-open files and the seventh rank, the bishop pair, the threats.
// Each piece's attacks are found once, for its mobility, its attacks on the other king's zone
// and its side's attack sets by kind (the threats: a few ors a piece, the counts at the end).
static inline int2 piece_terms(Lines t, const ulong *own, const ulong *enemy) {
    ulong own_all = own[PAWN] | own[KNIGHT] | own[BISHOP] | own[ROOK] | own[QUEEN] | own[KING];
    ulong enemy_all = enemy[PAWN] | enemy[KNIGHT] | enemy[BISHOP] | enemy[ROOK] | enemy[QUEEN]
                    | enemy[KING];
    ulong occ = own_all | enemy_all;
    ulong pawns = own[PAWN], enemy_pawns = enemy[PAWN];
    ulong own_pawn_attacks = pawn_attacks_up(pawns);
    ulong enemy_pawn_attacks = pawn_attacks_down(enemy_pawns);
    // targets not held by the side's pieces nor taken on by the other side's pawns
    ulong own_free = ~own_all & ~enemy_pawn_attacks;
    ulong enemy_free = ~enemy_all & ~own_pawn_attacks;
    ulong own_king_attacks = king_attacks(own[KING]);
    ulong enemy_king_attacks = king_attacks(enemy[KING]);
    ulong own_zone = own_king_attacks | own[KING];
    ulong enemy_zone = enemy_king_attacks | enemy[KING];
    // each side's attacks by its knights and bishops, its rooks, its queens (the threats)
    ulong minor[2] = {0, 0}, rook[2] = {0, 0}, queen[2] = {0, 0};
    // [0]: the side to move's figure, [1]: the enemy's
    int mob[4][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}}, zone[5][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}};
    // pawns on a king's zone, each direction counted apart (a square two pawns attack counts twice)
    zone[0][0] = popcount(((enemy_pawns >> 7) & NOT_A) & own_zone)
               + popcount(((enemy_pawns >> 9) & NOT_H) & own_zone);
    zone[0][1] = popcount(((pawns << 9) & NOT_A) & enemy_zone)
               + popcount(((pawns << 7) & NOT_H) & enemy_zone);
    // the zone counted for a side is the number of attacks on ITS king: a piece of the side to
    // move adds to zone[..][1]
    for (ulong x = own[KNIGHT]; x; x &= x - 1)
        PIECE_ATTACKS(KNIGHT_FROM(t, lowest(x)), own_free, enemy_zone, MOBILITY_CENTRE_KNIGHT,
                      &mob[0][0], &zone[1][1], minor[0]);
    for (ulong x = enemy[KNIGHT]; x; x &= x - 1)
        PIECE_ATTACKS(KNIGHT_FROM(t, lowest(x)), enemy_free, own_zone, MOBILITY_CENTRE_KNIGHT,
                      &mob[0][1], &zone[1][0], minor[1]);
    for (ulong x = own[BISHOP]; x; x &= x - 1)
        PIECE_ATTACKS(diagonal_from(t, lowest(x), occ), own_free, enemy_zone,
                      MOBILITY_CENTRE_BISHOP, &mob[1][0], &zone[2][1], minor[0]);
    for (ulong x = enemy[BISHOP]; x; x &= x - 1)
        PIECE_ATTACKS(diagonal_from(t, lowest(x), occ), enemy_free, own_zone,
                      MOBILITY_CENTRE_BISHOP, &mob[1][1], &zone[2][0], minor[1]);
    int rook_files[2][2] = {{0, 0}, {0, 0}}, seventh[2] = {0, 0};   // [half-open, open][side]
    for (ulong x = own[ROOK]; x; x &= x - 1) {
        int s = lowest(x);
        PIECE_ATTACKS(straight_from(t, s, occ), own_free, enemy_zone, MOBILITY_CENTRE_ROOK,
                      &mob[2][0], &zone[3][1], rook[0]);
        ulong file = FILE_A << (s & 7);
        if (!(pawns & file))
            rook_files[(enemy_pawns & file) ? 0 : 1][0]++;
        if ((s >> 3) == 6 && ((enemy[KING] & RANK_8) || (enemy_pawns & RANK_7)))
            seventh[0]++;
    }
    for (ulong x = enemy[ROOK]; x; x &= x - 1) {
        int s = lowest(x);
        PIECE_ATTACKS(straight_from(t, s, occ), enemy_free, own_zone, MOBILITY_CENTRE_ROOK,
                      &mob[2][1], &zone[3][0], rook[1]);
        ulong file = FILE_A << (s & 7);
        if (!(enemy_pawns & file))
            rook_files[(pawns & file) ? 0 : 1][1]++;
        // the enemy's seventh rank is the side to move's second
        if ((s >> 3) == 1 && ((own[KING] & RANK_1) || (pawns & RANK_2)))
            seventh[1]++;
    }
    for (ulong x = own[QUEEN]; x; x &= x - 1) {
        int s = lowest(x);
        PIECE_ATTACKS(straight_from(t, s, occ) | diagonal_from(t, s, occ), own_free, enemy_zone,
                      MOBILITY_CENTRE_QUEEN, &mob[3][0], &zone[4][1], queen[0]);
    }
    for (ulong x = enemy[QUEEN]; x; x &= x - 1) {
        int s = lowest(x);
        PIECE_ATTACKS(straight_from(t, s, occ) | diagonal_from(t, s, occ), enemy_free, own_zone,
                      MOBILITY_CENTRE_QUEEN, &mob[3][1], &zone[4][0], queen[1]);
    }
    int mg = 0, eg = 0, d;
    d = zone[0][0] - zone[0][1]; mg += d * KING_ZONE_ATTACK_PAWN_MG; eg += d * KING_ZONE_ATTACK_PAWN_EG;
    d = zone[1][0] - zone[1][1]; mg += d * KING_ZONE_ATTACK_KNIGHT_MG; eg += d * KING_ZONE_ATTACK_KNIGHT_EG;
    d = zone[2][0] - zone[2][1]; mg += d * KING_ZONE_ATTACK_BISHOP_MG; eg += d * KING_ZONE_ATTACK_BISHOP_EG;
    d = zone[3][0] - zone[3][1]; mg += d * KING_ZONE_ATTACK_ROOK_MG; eg += d * KING_ZONE_ATTACK_ROOK_EG;
    d = zone[4][0] - zone[4][1]; mg += d * KING_ZONE_ATTACK_QUEEN_MG; eg += d * KING_ZONE_ATTACK_QUEEN_EG;
    d = mob[0][0] - mob[0][1]; mg += d * MOBILITY_KNIGHT_MG; eg += d * MOBILITY_KNIGHT_EG;
    d = mob[1][0] - mob[1][1]; mg += d * MOBILITY_BISHOP_MG; eg += d * MOBILITY_BISHOP_EG;
    d = mob[2][0] - mob[2][1]; mg += d * MOBILITY_ROOK_MG; eg += d * MOBILITY_ROOK_EG;
    d = mob[3][0] - mob[3][1]; mg += d * MOBILITY_QUEEN_MG; eg += d * MOBILITY_QUEEN_EG;
    d = rook_files[0][0] - rook_files[0][1];
    mg += d * ROOK_HALF_OPEN_FILE_MG; eg += d * ROOK_HALF_OPEN_FILE_EG;
    d = rook_files[1][0] - rook_files[1][1];
    mg += d * ROOK_OPEN_FILE_MG; eg += d * ROOK_OPEN_FILE_EG;
    d = seventh[0] - seventh[1]; mg += d * ROOK_SEVENTH_MG; eg += d * ROOK_SEVENTH_EG;
    d = (popcount(own[BISHOP]) >= 2) - (popcount(enemy[BISHOP]) >= 2);
    mg += d * BISHOP_PAIR_MG; eg += d * BISHOP_PAIR_EG;
    // threats: a side's knights, bishops, rooks and queens on squares the other side's pawns /
    // knights and bishops (rooks and queens only) / rooks (queens only) attack, and hanging:
    // attacked by any enemy piece (pawns and king too) and by none of the side's own
    ulong own_attacks = own_pawn_attacks | minor[0] | rook[0] | queen[0] | own_king_attacks;
    ulong enemy_attacks = enemy_pawn_attacks | minor[1] | rook[1] | queen[1] | enemy_king_attacks;
    ulong own_heavy = own[ROOK] | own[QUEEN], enemy_heavy = enemy[ROOK] | enemy[QUEEN];
    ulong own_pieces = own[KNIGHT] | own[BISHOP] | own_heavy;
    ulong enemy_pieces = enemy[KNIGHT] | enemy[BISHOP] | enemy_heavy;
    // (int): OpenCL's own popcount of a ulong is a ulong
    d = (int)popcount(own_pieces & enemy_pawn_attacks) - (int)popcount(enemy_pieces & own_pawn_attacks);
    mg += d * THREAT_BY_PAWN_MG; eg += d * THREAT_BY_PAWN_EG;
    d = (int)popcount(own_heavy & minor[1]) - (int)popcount(enemy_heavy & minor[0]);
    mg += d * THREAT_BY_MINOR_MG; eg += d * THREAT_BY_MINOR_EG;
    d = (int)popcount(own[QUEEN] & rook[1]) - (int)popcount(enemy[QUEEN] & rook[0]);
    mg += d * THREAT_BY_ROOK_MG; eg += d * THREAT_BY_ROOK_EG;
    d = (int)popcount(own_pieces & enemy_attacks & ~own_attacks)
      - (int)popcount(enemy_pieces & own_attacks & ~enemy_attacks);
    mg += d * HANGING_PIECE_MG; eg += d * HANGING_PIECE_EG;
    return (int2)(mg, eg);
}

// The terms' (mg, eg) from the side to move's view, material and piece-square sums excluded.
static inline int2 eval_terms(const Board *b) {
    ulong occ = occupied(b);
    ulong own[7], enemy[7], own_flipped[7], enemy_flipped[7];
    own[0] = enemy[0] = own_flipped[0] = enemy_flipped[0] = 0;
    for (int t = PAWN; t <= KING; t++) {
        ulong pieces = type_set(b, t) & occ;
        own[t] = pieces & b->own;
        enemy[t] = pieces & ~b->own;
        own_flipped[t] = byte_swap(own[t]);
        enemy_flipped[t] = byte_swap(enemy[t]);
    }
    return pawn_king_terms(own, enemy) - pawn_king_terms(enemy_flipped, own_flipped)
         + piece_terms(b->lines, own, enemy) + (int2)(TEMPO_MG, TEMPO_EG);
}
#endif

static inline int evaluate(const Board *b, Values v) {
    int mg = b->mg, eg = b->eg;
#if EVAL_TERMS
    int2 terms = eval_terms(b);
    mg += terms.x;
    eg += terms.y;
#endif
    int w = v[PHASE_WEIGHT_BASE + min(b->phase, PHASE_MAX)].x;
    int score = floor_shift(mg * w + eg * ((1 << TAPER_SHIFT) - w));
    return clamp(score, -EVAL_MAX, EVAL_MAX);
}

// The change of the sums (and the phase) a move makes, in the mover's frame, before it is made.
static inline void eval_move(Board *b, Values v, int from, int to, int promo, int mover, int victim) {
    int lands = promo ? promo : mover;
    int4 d = OWN_VALUE(v, lands, to) - OWN_VALUE(v, mover, from);
    if (victim)                                    // the enemy's piece leaves its sums and the phase
        d += ENEMY_VALUE(v, victim, to) * (int4)(1, 1, -1, 0);
    if (mover == PAWN && to == b->ep)
        d += ENEMY_VALUE(v, PAWN, to - 8) * (int4)(1, 1, -1, 0);
    if (mover == KING && (to - from == 2 || from - to == 2)) {
        int rook_from = to > from ? from + 3 : from - 4, rook_to = to > from ? from + 1 : from - 1;
        d += OWN_VALUE(v, ROOK, rook_to) - OWN_VALUE(v, ROOK, rook_from);
    }
    b->mg += d.x;
    b->eg += d.y;
    b->phase += d.z;
}

// --- make / unmake (section 3) ---------------------------------------------------------------

static inline uint castle_clear(int s) {
    return s == 4 ? (OWN_K | OWN_Q) : s == 7 ? OWN_K : s == 0 ? OWN_Q
         : s == 60 ? (ENEMY_K | ENEMY_Q) : s == 63 ? ENEMY_K : s == 56 ? ENEMY_Q : 0u;
}

// The move's pieces change places, in the mover's frame. Applied twice it restores the pieces
// (every change is an xor), which is how unmake undoes it. `mover` is the moving PieceType,
// `victim` the type on the to-square (0 if empty).
static inline void move_pieces(Board *b, int from, int to, int promo, int mover, int victim) {
    ulong fb = BIT(from), tb = BIT(to);
    if (victim)
        toggle(b, victim, tb);
    if (mover == PAWN && to == b->ep)              // en passant: the pawn beside is taken
        toggle(b, PAWN, BIT(to - 8));
    toggle(b, mover, fb);
    toggle(b, promo ? promo : mover, tb);
    b->own ^= fb | tb;
    if (mover == KING && (to - from == 2 || from - to == 2)) {   // castling moves the rook too
        ulong rb = to > from ? (BIT(from + 3) | BIT(from + 1)) : (BIT(from - 4) | BIT(from - 1));
        toggle(b, ROOK, rb);
        b->own ^= rb;
    }
}

// Turn the board to the other side's frame.
static inline void flip(Board *b) {
    ulong enemy = (b->q0 | b->q1 | b->q2) & ~b->own;
    b->q0 = byte_swap(b->q0);
    b->q1 = byte_swap(b->q1);
    b->q2 = byte_swap(b->q2);
    b->own = byte_swap(enemy);
    b->castle = ((b->castle & 3u) << 2) | (b->castle >> 2);
    b->mg = -b->mg;
    b->eg = -b->eg;
}

// Whether TestCheck can be skipped: with the king not in check, a move other than the king's
// and other than en passant leaves the king attacked only by opening a line through its
// from-square, so only a from-square on one of the king's lines needs the test. The result is
// the contract's (make + TestCheck) either way; only the work differs.
static inline bool needs_test(const Board *b, bool in_check, int from, int to, int mover) {
    if (in_check || mover == KING || (mover == PAWN && to == b->ep))
        return true;
    int k = own_king(b);
    int rf = from >> 3, ff = from & 7, rk = k >> 3, fk = k & 7;
    return rf == rk || ff == fk || rf - ff == rk - fk || rf + ff == rk + fk;
}

// make: move the pieces, then TestCheck on the mover's king (when `test`: needs_test says
// whether it can fail). A legal move leaves the board in the child's frame and returns true; an
// illegal one is unmade and returns false. The evaluation sums follow when `v` is given (search).
static inline bool make_legal(Board *b, Undo *u, int from, int to, int promo, int mover, int victim,
                              Values v, bool test) {
    u->castle = b->castle; u->ep = b->ep; u->mg = b->mg; u->eg = b->eg; u->phase = b->phase;
    if (v)
        eval_move(b, v, from, to, promo, mover, victim);
    move_pieces(b, from, to, promo, mover, victim);
    if (test && attacked(b, own_king(b))) {
        move_pieces(b, from, to, promo, mover, victim);
        b->mg = u->mg; b->eg = u->eg; b->phase = u->phase;
        return false;
    }
    b->castle &= ~(castle_clear(from) | castle_clear(to));
    b->ep = (mover == PAWN && to - from == 16) ? ((from + 8) ^ 56) : NO_SQ;
    flip(b);
    return true;
}

static inline void unmake(Board *b, const Undo *u, int from, int to, int promo, int mover, int victim) {
    flip(b);
    b->ep = u->ep;
    move_pieces(b, from, to, promo, mover, victim);
    b->castle = u->castle; b->mg = u->mg; b->eg = u->eg; b->phase = u->phase;
}

// --- jobs in global memory -------------------------------------------------------------------
// A position is POSITION_WORDS ulongs: q0, q1, q2, own (side to move's frame), then
// castle (bits 0-3, OWN_K..ENEMY_Q) | ep (bits 4-10, NO_SQ = none).
#define POSITION_WORDS 5

static inline void load_position(Board *b, __global const ulong *p, Lines lines) {
    b->lines = lines;
    b->q0 = p[0]; b->q1 = p[1]; b->q2 = p[2]; b->own = p[3];
    b->castle = (uint)(p[4] & 15u);
    b->ep = (int)((p[4] >> 4) & 127u);
}

static inline void store_position(const Board *b, __global ulong *p) {
    p[0] = b->q0; p[1] = b->q1; p[2] = b->q2; p[3] = b->own;
    p[4] = (ulong)b->castle | ((ulong)b->ep << 4);
}

// Moves travel as the contract's packed Move (MOVE_*_SHIFT from chessaccel.contract.defs.Move), in the
// frame of the side that plays them.
static inline uint pack_move(int from, int to, int promo) {
    return ((uint)from << MOVE_FROM_SHIFT) | ((uint)to << MOVE_TO_SHIFT)
         | ((uint)promo << MOVE_PROMO_SHIFT);
}

// The contract's move order at one node (docs/semantics.md section 2): victims by class, most
// valuable first, ties to the lowest relative square; for each victim its aggressors, least
// valuable first, ties to the lowest relative square; a pawn reaching the last rank as Q, R, B,
// N; then castling kingside and queenside. In the side to move's frame "lowest relative square"
// is simply the lowest set bit.
//
// The 64 receivers become bitboards: `captures` holds every enemy piece some own piece attacks
// plus the en-passant square when an own pawn attacks it (class PAWN); `quiets` every other
// empty square an own piece can move to (class QUIET). A capture victim's class is the type of
// the piece on it, so picking the next victim is one intersection per class. The hardware's
// disable mask becomes "remove what has been tried" from these words: the same order, and the
// state survives a child search because the board is restored before generation resumes.

#define STAGE_VICTIMS 0
#define STAGE_CASTLE_KINGSIDE 1
#define STAGE_CASTLE_QUEENSIDE 2
#define STAGE_DONE 3

typedef struct {
    ulong captures;     // capture victims not yet taken up (class >= PAWN)
    ulong quiets;       // quiet victims not yet taken up (class QUIET)
    ulong aggressors;   // candidates of the current victim not yet tried
    int victim;         // current victim square
    int promo;          // index into PROMOTION_ORDER of the next promotion, 0 when none pending
    int stage;
    bool captures_only; // quiescence: class PAWN and above, no castling
} Gen;

// GenVictim's receivers for the node (a function of the board alone).
static inline void gen_init(Gen *g, const Board *b, bool captures_only) {
    ulong occ = occupied(b), own = b->own, enemy = occ & ~own, empty = ~occ;
    ulong pawns = type_set(b, PAWN) & own;
    ulong reach = knight_attacks(type_set(b, KNIGHT) & own)
                | king_attacks(type_set(b, KING) & own)
                | straight_attacks(straight_set(b) & own, empty)
                | diagonal_attacks(diagonal_set(b) & own, empty);
    ulong pawn_captures = pawn_attacks_up(pawns);
    ulong ep = b->ep != NO_SQ ? BIT(b->ep) : 0UL;
    ulong ep_victim = ep & pawn_captures;
    g->captures = (enemy & (reach | pawn_captures)) | ep_victim;
    if (captures_only) {
        g->quiets = 0;
    } else {
        ulong push = (pawns << 8) & empty;
        ulong double_push = ((push & RANK_3) << 8) & empty;
        g->quiets = empty & (reach | push | double_push) & ~ep_victim;
    }
    g->aggressors = 0;
    g->victim = 0;
    g->promo = 0;
    g->stage = STAGE_VICTIMS;
    g->captures_only = captures_only;
}

// GenAggressor: own squares that can move to victim v (the super piece radiated backwards).
static inline ulong aggressors_of(const Board *b, int v, bool captures_only) {
    ulong vb = BIT(v), occ = occupied(b), own = b->own, empty = ~occ;
    ulong pawns = type_set(b, PAWN) & own;
    bool occupied_victim = (occ & vb) != 0;
    ulong found;
    if (occupied_victim || v == b->ep) {
        found = pawns & (((vb >> 9) & NOT_H) | ((vb >> 7) & NOT_A));
    } else if (!captures_only) {
        ulong behind = vb >> 8;
        found = pawns & behind;
        if ((v >> 3) == 3 && (behind & empty))
            found |= pawns & (vb >> 16);
    } else {
        found = 0;
    }
    if (captures_only && !occupied_victim)
        return found;   // in quiescence an empty victim is the en-passant square: pawns only
    return found | (own & ((KNIGHT_FROM(b->lines, v) & type_set(b, KNIGHT))
                         | (KING_FROM(b->lines, v) & type_set(b, KING))
                         | (straight_from(b->lines, v, occ) & straight_set(b))
                         | (diagonal_from(b->lines, v, occ) & diagonal_set(b))));
}

static inline bool castle_allowed(const Board *b, bool kingside) {
    ulong occ = occupied(b);
    if (kingside)
        return (b->castle & OWN_K) && !(occ & (BIT(5) | BIT(6)))
            && !attacked(b, 4) && !attacked(b, 5) && !attacked(b, 6);
    return (b->castle & OWN_Q) && !(occ & (BIT(1) | BIT(2) | BIT(3)))
        && !attacked(b, 4) && !attacked(b, 3) && !attacked(b, 2);
}

// A pseudo-legal move with what make needs to know about it.
typedef struct {
    int from, to, promo;
    int mover, victim;   // PieceTypes: the piece moving, the piece on the to-square (0 = none)
} Move;

// The next pseudo-legal move of the node in contract order; false when the node is exhausted.
// The victim (when the last one's aggressors are used up) is picked first, then the aggressor,
// in straight-line code: the lanes of a warp that need a new victim and those that do not
// meet again at the aggressor (a loop around both made the warp run the aggressor twice).
static inline bool next_move(Gen *g, const Board *b, Move *m) {
    while (!g->aggressors) {
        if (g->stage == STAGE_VICTIMS) {
            ulong c = g->captures;
            ulong pick;
            if (c) {
                ulong s;
                if      ((s = c & type_set(b, KING)))   pick = s;
                else if ((s = c & type_set(b, QUEEN)))  pick = s;
                else if ((s = c & type_set(b, ROOK)))   pick = s;
                else if ((s = c & type_set(b, BISHOP))) pick = s;
                else if ((s = c & type_set(b, KNIGHT))) pick = s;
                else                                    pick = c;   // pawns and en passant
            } else {
                pick = g->quiets;
            }
            if (!pick) {
                g->stage = g->captures_only ? STAGE_DONE : STAGE_CASTLE_KINGSIDE;
                continue;
            }
            int v = lowest(pick);
            g->captures &= ~BIT(v);
            g->quiets &= ~BIT(v);
            g->victim = v;
            g->aggressors = aggressors_of(b, v, g->captures_only);
            continue;
        }
        if (g->stage == STAGE_CASTLE_KINGSIDE || g->stage == STAGE_CASTLE_QUEENSIDE) {
            bool kingside = g->stage == STAGE_CASTLE_KINGSIDE;
            g->stage += 1;
            if (castle_allowed(b, kingside)) {
                m->from = 4; m->to = kingside ? 6 : 2; m->promo = 0;
                m->mover = KING; m->victim = 0;
                return true;
            }
            continue;
        }
        return false;
    }
    ulong a = g->aggressors;
    int mover;
    ulong pick;
    ulong s;
    if      ((s = a & type_set(b, PAWN)))   { mover = PAWN;   pick = s; }
    else if ((s = a & type_set(b, KNIGHT))) { mover = KNIGHT; pick = s; }
    else if ((s = a & type_set(b, BISHOP))) { mover = BISHOP; pick = s; }
    else if ((s = a & type_set(b, ROOK)))   { mover = ROOK;   pick = s; }
    else if ((s = a & type_set(b, QUEEN)))  { mover = QUEEN;  pick = s; }
    else                                    { mover = KING;   pick = a; }
    int from = lowest(pick);
    m->from = from; m->to = g->victim; m->mover = mover;
    m->victim = type_at(b, g->victim);
    if (mover == PAWN && g->victim >= 56) {
        m->promo = PROMOTION_ORDER[g->promo];
        if (++g->promo == PROMOTIONS) { g->promo = 0; g->aggressors &= ~BIT(from); }
    } else {
        m->promo = 0;
        g->aggressors &= ~BIT(from);
    }
    return true;
}

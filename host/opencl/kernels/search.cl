// Leaf search jobs (docs/semantics.md section 5): fail-soft negamax alpha-beta with quiescence,
// one job per work-item, an explicit stack of per-ply frames (the SearchStack), and the loop of
// steps the accelerator's FSM runs: ENTER a node, pick the NEXT move, make and TEST it, RETURN a
// value to the parent. Work-items take jobs from a shared counter until none is left, so a lane
// whose job ends early starts another instead of idling beside a long one.

typedef struct {
    Gen g;          // generation state (what the hardware keeps in its disable mask)
    Move m;         // the move being searched below this node
    Undo u;         // its undo record
    int depth, alpha, beta, best;
    uint best_move;
    bool legal;     // a legal move has been searched
    bool in_check;
} Frame;

// The stack keeps the frames of the current node's ancestors packed in FRAME_WORDS ulongs
// (48 bytes): the three generation bitboards, the window with the best score and move, the
// evaluation sums, and one word of small fields. Only the current frame lives unpacked.
#define FRAME_WORDS 6

// Small fields shared by the search and perft frames (bits 0..42 of the last word).
static inline ulong pack_common(const Gen *g, const Move *m, const Undo *u) {
    return (ulong)g->victim | ((ulong)g->promo << 6) | ((ulong)g->stage << 8)
         | ((ulong)g->captures_only << 10)
         | ((ulong)m->from << 11) | ((ulong)m->to << 17) | ((ulong)m->promo << 23)
         | ((ulong)m->mover << 26) | ((ulong)m->victim << 29)
         | ((ulong)u->castle << 32) | ((ulong)u->ep << 36);
}
static inline void unpack_common(ulong w, Gen *g, Move *m, Undo *u) {
    g->victim = (int)(w & 63); g->promo = (int)((w >> 6) & 3); g->stage = (int)((w >> 8) & 3);
    g->captures_only = (w >> 10) & 1;
    m->from = (int)((w >> 11) & 63); m->to = (int)((w >> 17) & 63); m->promo = (int)((w >> 23) & 7);
    m->mover = (int)((w >> 26) & 7); m->victim = (int)((w >> 29) & 7);
    u->castle = (uint)((w >> 32) & 15); u->ep = (int)((w >> 36) & 127);
}

static inline void push_frame(ulong *w, const Frame *f) {
    w[0] = f->g.captures;
    w[1] = f->g.quiets;
    w[2] = f->g.aggressors;
    w[3] = (ulong)(ushort)f->alpha | ((ulong)(ushort)f->beta << 16)
         | ((ulong)(ushort)f->best << 32) | ((ulong)f->best_move << 48);
    w[4] = (ulong)(uint)f->u.mg | ((ulong)(uint)f->u.eg << 32);
    w[5] = pack_common(&f->g, &f->m, &f->u) | ((ulong)f->u.phase << 43) | ((ulong)f->depth << 50)
         | ((ulong)f->legal << 54) | ((ulong)f->in_check << 55);
}
static inline void pop_frame(const ulong *w, Frame *f) {
    f->g.captures = w[0];
    f->g.quiets = w[1];
    f->g.aggressors = w[2];
    ulong window = w[3];
    f->alpha = (short)(window & 0xFFFF);
    f->beta = (short)((window >> 16) & 0xFFFF);
    f->best = (short)((window >> 32) & 0xFFFF);
    f->best_move = (uint)(window >> 48);
    ulong sums = w[4];
    f->u.mg = (int)(uint)(sums & 0xFFFFFFFFUL);
    f->u.eg = (int)(uint)(sums >> 32);
    ulong small = w[5];
    unpack_common(small, &f->g, &f->m, &f->u);
    f->u.phase = (int)((small >> 43) & 127);
    f->depth = (int)((small >> 50) & 15);
    f->legal = (small >> 54) & 1;
    f->in_check = (small >> 55) & 1;
}

#define PV_STRIDE (MAX_PLY + 1)

// ENTER: count the node, stand pat or prepare generation. True when the node's value is known
// at once (the stack is full, or a stand-pat cutoff).
static inline bool enter_node(Frame *f, Board *b, Values v, int ply, int *value) {
    f->best_move = 0;
    f->legal = false;
    if (ply == MAX_PLY) {
        *value = evaluate(b, v);
        return true;
    }
    f->in_check = attacked(b, own_king(b));
    bool quiescence = f->depth == 0 && !f->in_check;
    if (quiescence) {
        f->best = evaluate(b, v);
        if (f->best >= f->beta) {
            *value = f->best;
            return true;
        }
        if (f->best > f->alpha)
            f->alpha = f->best;
    } else {
        f->best = -INF;
    }
    gen_init(&f->g, b, quiescence);
    return false;
}

// One loop serves every lane whatever it is doing: each turn first RETURNs values up the stack
// as far as they go (finishing a job and starting the next one from the queue when the root
// returns), then takes the NEXT move, makes and TESTs it and ENTERs the child. Lanes of a warp
// that are in different steps thus meet again in the expensive part (make, TestCheck,
// generation) on the same turn instead of idling through each other's steps.
//
// A job starts at ply params.w (0 for the accelerator's jobs; a part of a split job starts at
// its own depth in the tree, which the MAX_PLY rule and mate scores count from). With a
// node_budget, a job that would count more nodes is given up and reported with 0 nodes (a real
// job has at least one): the host splits it into its children (host/opencl/split.py).
__kernel void search_jobs(__global const ulong *positions,   // POSITION_WORDS per job
                          __global const int4 *params,       // (depth, alpha, beta, ply) per job
                          const uint n_jobs,
                          const ulong node_budget,           // 0: none
                          __global volatile uint *job_counter,
                          __global int *scores,
                          __global uint *best_moves,
                          __global ulong *node_counts,
                          const uint want_pv,
                          __global ushort *pv_moves,         // PV_STRIDE^2 per job when wanted
                          __global uchar *pv_lengths,        // PV_STRIDE per job when wanted
                          Values values,                     // evaluation tables
                          Lines lines)                       // attack tables
{
    ulong stack[MAX_PLY * FRAME_WORDS];
    Board b;
    Frame cur;
    uint job = 0;
    int ply = 0, root_ply = 0, value = 0;
    ulong nodes = 0;
    bool given_up = false;
    __global ushort *pv = pv_moves;
    __global uchar *pv_len = pv_lengths;
    // "the root has returned": the first turn takes a job from the queue
    bool have_value = true;
    bool started = false;
    for (;;) {
        // RETURN: values go up until a parent continues (or the root is done)
        while (have_value) {
            if (ply == root_ply) {
                if (started) {
                    scores[job] = given_up ? 0 : value;
                    best_moves[job] = given_up ? 0u : cur.best_move;
                    node_counts[job] = given_up ? 0UL : nodes;
                }
                started = true;
                job = atomic_inc(job_counter);
                if (job >= n_jobs)
                    return;
                load_position(&b, positions + (size_t)job * POSITION_WORDS, lines);
                init_eval(&b, values);
                int4 p = params[job];
                cur.depth = p.x; cur.alpha = p.y; cur.beta = p.z;
                ply = root_ply = p.w;
                given_up = false;
                nodes = 1;
                pv = pv_moves + (size_t)job * PV_STRIDE * PV_STRIDE;
                pv_len = pv_lengths + (size_t)job * PV_STRIDE;
                if (want_pv) pv_len[0] = 0;
                have_value = enter_node(&cur, &b, values, ply, &value);
                continue;
            }
            ply--;
            pop_frame(stack + ply * FRAME_WORDS, &cur);
            unmake(&b, &cur.u, cur.m.from, cur.m.to, cur.m.promo, cur.m.mover, cur.m.victim);
            int score = -value;
            have_value = false;
            if (score > cur.best) {
                cur.best = score;
                cur.best_move = pack_move(cur.m.from, cur.m.to, cur.m.promo);
                if (want_pv) {
                    __global ushort *row = pv + ply * PV_STRIDE;
                    __global const ushort *child = row + PV_STRIDE;
                    int n = pv_len[ply + 1];
                    row[0] = (ushort)cur.best_move;
                    for (int k = 0; k < n; k++)
                        row[k + 1] = child[k];
                    pv_len[ply] = (uchar)(n + 1);
                }
                if (score > cur.alpha) {
                    cur.alpha = score;
                    if (score >= cur.beta) {
                        value = cur.best;      // cutoff: return at once
                        have_value = true;
                    }
                }
            }
        }
        // NEXT + TEST: the next pseudo-legal move; a legal one is entered at once
        if (!next_move(&cur.g, &b, &cur.m)) {
            if (!cur.legal && !cur.g.captures_only)
                value = cur.in_check ? -(MATE - ply) : 0;   // mate / stalemate
            else
                value = cur.best;
            have_value = true;
            continue;
        }
        if (!make_legal(&b, &cur.u, cur.m.from, cur.m.to, cur.m.promo, cur.m.mover, cur.m.victim,
                        values, needs_test(&b, cur.in_check, cur.m.from, cur.m.to, cur.m.mover)))
            continue;
        cur.legal = true;
        push_frame(stack + ply * FRAME_WORDS, &cur);
        int alpha = cur.alpha;
        cur.depth = max(cur.depth - 1, 0);
        cur.alpha = -cur.beta;
        cur.beta = -alpha;
        ply++;
        nodes++;
        if (node_budget && nodes > node_budget) {   // give the job up: straight to the next one
            given_up = true;
            ply = root_ply;
            have_value = true;
            continue;
        }
        if (want_pv) pv_len[ply] = 0;
        have_value = enter_node(&cur, &b, values, ply, &value);
    }
}

// The nodes of split jobs (host/opencl/split.py): for each (position, depth, -, ply), what the
// search kernel's ENTER and NEXT would find there: whether the side to move is in check, the
// stand-pat value, and the legal children in generation order (captures only in quiescence),
// each as its packed move and its position.
__kernel void node_children(__global const ulong *positions, __global const int4 *params,
                            const uint n, __global uint *moves,   // MAX_MOVES per node
                            __global ulong *children,             // MAX_MOVES positions per node
                            __global int *info,                   // (count, in check, stand pat)
                            Values values, Lines lines)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    Board b;
    load_position(&b, positions + (size_t)i * POSITION_WORDS, lines);
    init_eval(&b, values);
    bool in_check = attacked(&b, own_king(&b));
    bool quiescence = params[i].x == 0 && !in_check;
    Gen g;
    gen_init(&g, &b, quiescence);
    Move m;
    Undo u;
    int count = 0;
    while (next_move(&g, &b, &m)) {
        if (!make_legal(&b, &u, m.from, m.to, m.promo, m.mover, m.victim, values,
                        needs_test(&b, in_check, m.from, m.to, m.mover)))
            continue;
        size_t slot = (size_t)i * MAX_MOVES + count;
        moves[slot] = pack_move(m.from, m.to, m.promo);
        store_position(&b, children + slot * POSITION_WORDS);
        unmake(&b, &u, m.from, m.to, m.promo, m.mover, m.victim);
        count++;
    }
    info[3 * i] = count;
    info[3 * i + 1] = in_check;
    info[3 * i + 2] = evaluate(&b, values);
}

// The legal moves of each position in generation order (make, TestCheck, unmake).
__kernel void list_moves(__global const ulong *positions, const uint n_jobs,
                         __global ushort *moves,      // MAX_MOVES per job
                         __global uint *counts, Lines lines)
{
    uint job = get_global_id(0);
    if (job >= n_jobs)
        return;
    Board b;
    load_position(&b, positions + (size_t)job * POSITION_WORDS, lines);
    Gen g;
    gen_init(&g, &b, false);
    Move m;
    Undo u;
    uint n = 0;
    while (next_move(&g, &b, &m)) {
        if (make_legal(&b, &u, m.from, m.to, m.promo, m.mover, m.victim, 0, true)) {
            if (n < MAX_MOVES)
                moves[(size_t)job * MAX_MOVES + n] = (ushort)pack_move(m.from, m.to, m.promo);
            n++;
            unmake(&b, &u, m.from, m.to, m.promo, m.mover, m.victim);
        }
    }
    counts[job] = n;
}

// Perft as the hardware runs it: the contract's generator, make and TestCheck at every node,
// every leaf made. One job (position, depth) per work-item, jobs from a shared counter.
typedef struct {
    Gen g;
    Move m;
    Undo u;
    bool in_check;
} WalkFrame;

#define WALK_WORDS 4

static inline void push_walk(ulong *w, const WalkFrame *f) {
    w[0] = f->g.captures;
    w[1] = f->g.quiets;
    w[2] = f->g.aggressors;
    w[3] = pack_common(&f->g, &f->m, &f->u) | ((ulong)f->in_check << 43);
}
static inline void pop_walk(const ulong *w, WalkFrame *f) {
    f->g.captures = w[0];
    f->g.quiets = w[1];
    f->g.aggressors = w[2];
    unpack_common(w[3], &f->g, &f->m, &f->u);
    f->in_check = (w[3] >> 43) & 1;
}

__kernel void perft_walk(__global const ulong *positions, __global const int *depths,
                         const uint n_jobs, __global volatile uint *job_counter,
                         __global ulong *leaf_counts, Lines lines)
{
    ulong stack[MAX_DEPTH * WALK_WORDS];
    for (;;) {
        uint job = atomic_inc(job_counter);
        if (job >= n_jobs)
            return;
        Board b;
        load_position(&b, positions + (size_t)job * POSITION_WORDS, lines);
        int depth = depths[job];
        ulong leaves = 0;
        if (depth == 0) {
            leaves = 1;
        } else {
            WalkFrame cur;
            gen_init(&cur.g, &b, false);
            cur.in_check = attacked(&b, own_king(&b));
            int ply = 0;
            for (;;) {
                if (next_move(&cur.g, &b, &cur.m)) {
                    if (!make_legal(&b, &cur.u, cur.m.from, cur.m.to, cur.m.promo, cur.m.mover,
                                    cur.m.victim, 0,
                                    needs_test(&b, cur.in_check, cur.m.from, cur.m.to, cur.m.mover)))
                        continue;
                    if (ply + 1 == depth) {
                        leaves++;
                        unmake(&b, &cur.u, cur.m.from, cur.m.to, cur.m.promo, cur.m.mover,
                               cur.m.victim);
                        continue;
                    }
                    push_walk(stack + (ply++) * WALK_WORDS, &cur);
                    gen_init(&cur.g, &b, false);
                    cur.in_check = attacked(&b, own_king(&b));
                    continue;
                }
                if (ply == 0)
                    break;
                pop_walk(stack + (--ply) * WALK_WORDS, &cur);
                unmake(&b, &cur.u, cur.m.from, cur.m.to, cur.m.promo, cur.m.mover, cur.m.victim);
            }
        }
        leaf_counts[job] = leaves;
    }
}

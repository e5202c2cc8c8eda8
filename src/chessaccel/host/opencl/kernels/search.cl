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
    int sp;         // search_jobs_split: the node's split point, -1 none yet, -2 none wanted
    uint k;         // the entry of its next legal child, from the first (sp_info[sp].w)
    uint entered;   // the lane's node count (low 32 bits) before this node was counted
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

// --- splitting long jobs on the device (search_jobs_split) ---------------------------------
// One lane is a slow processor, and a batch ends with its longest job (docs/opencl.md). In
// search_jobs_split a node whose own subtree has counted more than `split_budget` nodes (and
// whose depth is at least `min_depth`) is published when a child returns into it without a
// cutoff, at most once per value of its alpha (the budget becomes `tail_budget` once the queue
// of jobs is empty: the batch's last jobs are then split finer, each lane checking every 256
// nodes): the node's remaining legal children, in
// generation order, become entries of a global table, each with its position and the window the
// sequential search gives it now (alpha cannot change before the node's next child returns). Lanes without work take entries before new jobs and
// search them as jobs of their own (a part may publish in turn). The owner of the node goes on
// in generation order as before; at each child it uses a helper's result when there is one
// (its score and node count: the search of a position with a given depth, window and ply is
// deterministic), waits for a helper that is searching that child, or claims and searches the
// child itself. A result counts only with the alpha it was searched with (its tag); when the
// node's alpha rises, the node's entries are closed (their helpers give up) and its remaining
// children are published again with the new window. Every score, best move and node count is
// therefore the sequential search's.
#define E_EMPTY 0u      // reserved, being written
#define E_READY 1u      // waiting for a helper
#define E_TAKEN 2u      // a helper searches it
#define E_DONE 3u       // the helper's result is in e_result
#define E_OWNER 4u      // the owner searches it
#define E_DEAD 5u       // nobody will search it
#define SP_CLOSED (INF + 1)   // sp_alpha of a node that has returned (or moved on)
#define CTL_JOBS 0      // next job of the queue
#define CTL_ENTRIES 1   // entries reserved
#define CTL_SCAN 2      // entries below this are taken, claimed or dead
#define CTL_SPLITS 3    // split points made
#define CTL_DONE 4      // jobs finished
#define CTL_HELPED 5    // entries searched by helpers
#define CTL_HELPER_KNODES 8   // nodes searched by helpers (finished or given up), in 1024s
#define CTL_USED_KNODES 9     // nodes of helpers' results the owners used, in 1024s
#define CTL_IDLE 10           // lanes without work that stay
#define CTL_REPUBLISHED 11    // alpha rose at a published node: its children published again
#define CTL_WAITS 12          // an owner waited for a helper's child
#define CTL_CLAIMED 13        // an owner searched a published child itself
// A lane without work looks for work again every IDLE_TURNS turns of the loop (a turn of its
// own costs a few instructions: the lanes that work in its warp hardly wait for it), and at
// most `max_idle` lanes stay without work: the others end, so that the multiprocessors' issue
// slots go to the lanes that work (the lone lanes of the batch's tail are its critical path).
#define IDLE_TURNS 32

#if defined(cl_nv_pragma_unroll)
#define GLOBAL_FENCE() { mem_fence(CLK_GLOBAL_MEM_FENCE); asm volatile("membar.gl;" ::: "memory"); }
#else
#define GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

// The device's clock in ns where there is one to read (NVIDIA's %globaltimer), else 0: the
// benchmark's timeline of a split run (start and end of each job).
static inline ulong device_ns(void) {
#if defined(cl_nv_pragma_unroll)
    ulong t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    return 0;
#endif
}

typedef struct {
    __global ulong *times;            // per job: start and end (device_ns), when wanted
    __global volatile uint *ctl;      // CTL_* counters
    __global volatile int *sp_alpha;  // per split point: its alpha (the entries' tag) or SP_CLOSED
    __global volatile int4 *sp_info;  // per split point: (depth, beta, ply, -)
    __global volatile ulong *e_pos;   // per entry: the child's position
    __global volatile uint *e_state;  // per entry: E_*
    __global volatile uint *e_sp;     // per entry: its split point
    __global volatile ulong *e_result;// per entry: nodes << 32 | value << 16 | tag (0: none)
    uint sp_max, e_max, max_idle;
    ulong budget;
    ulong tail_budget;                // the budget once the queue of jobs is empty
    int min_depth;
} Split;

static inline ulong pack_result(ulong nodes, int value, int tag) {
    return (nodes << 32) | ((ulong)(ushort)(short)value << 16) | (ulong)(ushort)(short)tag;
}

static inline void load_position_v(Board *b, __global volatile const ulong *p, Lines lines) {
    b->lines = lines;
    b->q0 = p[0]; b->q1 = p[1]; b->q2 = p[2]; b->own = p[3];
    ulong w = p[4];
    b->castle = (uint)(w & 15u);
    b->ep = (int)((w >> 4) & 127u);
}

// Publish the node in `f` (board `b`): its remaining legal children as entries with the
// current alpha. Sets f->sp / f->k (f->sp = -2: nothing worth publishing); the split point's
// first entry is kept in sp_info[sp].w.
static inline void publish(const Split *S, Frame *f, Board *b, Values v, int ply) {
    Gen g = f->g;
    Move m;
    Undo u;
    uint count = 0;
    while (next_move(&g, b, &m))
        if (make_legal(b, &u, m.from, m.to, m.promo, m.mover, m.victim, v,
                       needs_test(b, f->in_check, m.from, m.to, m.mover))) {
            unmake(b, &u, m.from, m.to, m.promo, m.mover, m.victim);
            count++;
        }
    f->sp = -2;
    if (count < 2 || S->ctl[CTL_ENTRIES] + count > S->e_max || S->ctl[CTL_SPLITS] >= S->sp_max)
        return;
    uint base = atomic_add(&S->ctl[CTL_ENTRIES], count);
    uint sp = atomic_inc(&S->ctl[CTL_SPLITS]);
    if (base + count > S->e_max || sp >= S->sp_max) {   // lost a race for the last places
        for (uint e = base; e < min(base + count, S->e_max); e++)
            atomic_xchg(&S->e_state[e], E_DEAD);
        return;
    }
    S->sp_info[sp] = (int4)(f->depth, f->beta, ply, (int)base);
    S->sp_alpha[sp] = f->alpha;
    g = f->g;
    uint e = base;
    while (next_move(&g, b, &m))
        if (make_legal(b, &u, m.from, m.to, m.promo, m.mover, m.victim, v,
                       needs_test(b, f->in_check, m.from, m.to, m.mover))) {
            __global volatile ulong *p = S->e_pos + (size_t)e * POSITION_WORDS;
            p[0] = b->q0; p[1] = b->q1; p[2] = b->q2; p[3] = b->own;
            p[4] = (ulong)b->castle | ((ulong)b->ep << 4);
            S->e_sp[e] = sp;
            unmake(b, &u, m.from, m.to, m.promo, m.mover, m.victim);
            e++;
        }
    GLOBAL_FENCE();
    for (e = base; e < base + count; e++)
        atomic_xchg(&S->e_state[e], E_READY);
    f->sp = (int)sp;
    f->k = 0;
}

// An entry for a lane without work: the first READY one from the scan mark on; -1 if none.
static inline int take_entry(const Split *S, int *tag) {
    uint lo = S->ctl[CTL_SCAN], hi = min(S->ctl[CTL_ENTRIES], S->e_max);
    uint end = min(hi, lo + 256u), mark = lo;
    bool passing = true;
    for (uint e = lo; e < end; e++) {
        uint st = S->e_state[e];
        if (st == E_READY) {
            int a = S->sp_alpha[S->e_sp[e]];
            if (a == SP_CLOSED) {
                atomic_cmpxchg(&S->e_state[e], E_READY, E_DEAD);
                st = E_DEAD;
            } else if (atomic_cmpxchg(&S->e_state[e], E_READY, E_TAKEN) == E_READY) {
                if (passing) atomic_max(&S->ctl[CTL_SCAN], e + 1);
                *tag = a;
                return (int)e;
            } else {
                st = E_TAKEN;
            }
        }
        if (st == E_EMPTY || st == E_READY)
            passing = false;
        if (passing)
            mark = e + 1;
    }
    if (mark > lo)
        atomic_max(&S->ctl[CTL_SCAN], mark);
    return -1;
}

static inline void close_split(const Split *S, const Frame *f) {
    if (f->sp >= 0)
        S->sp_alpha[f->sp] = SP_CLOSED;
}

// The split fields in the frame's extra word: sp + 2 (24 bits), k (8 bits) and the node count
// at entry (32 bits).
#define SPLIT_WORDS 1
#define SPLIT_SP(w) ((int)((w) & 0xFFFFFFu) - 2)
static inline void push_split(ulong *w, const Frame *f) {
    w[FRAME_WORDS] = (ulong)(uint)(f->sp + 2) | ((ulong)f->k << 24) | ((ulong)f->entered << 32);
}
static inline void pop_split(const ulong *w, Frame *f) {
    ulong x = w[FRAME_WORDS];
    f->sp = SPLIT_SP(x);
    f->k = (uint)((x >> 24) & 0xFFu);
    f->entered = (uint)(x >> 32);
}

#define WORK_NONE 0
#define WORK_JOB 1
#define WORK_HELP 2

// What a search launch gives every lane: the jobs, where their results go, the tables, and
// with `help` (search_jobs_split) the shared state of the split jobs.
typedef struct {
    __global const ulong *positions;
    __global const int4 *params;
    uint n_jobs;
    ulong node_budget;               // search_jobs: a job past it is given up (0: none)
    __global volatile uint *job_counter;
    __global int *scores;
    __global uint *best_moves;
    __global ulong *node_counts;
    uint want_pv;
    __global ushort *pv_moves;
    __global uchar *pv_lengths;
    Values values;
    Lines lines;
    bool help;
    const Split *S;
    __global volatile const uint *stop;   // search_jobs: one flag per job, nonzero: give it up
} Jobs;

// One lane's state: the board, the current frame (its ancestors packed on `stack`), and the
// work in hand.
typedef struct {
    ulong *stack;
    int fw;                          // words per frame on the stack
    Board b;
    Frame cur;
    uint job;                        // the job, or with WORK_HELP the entry
    int ply, root_ply, value;
    ulong nodes;
    bool given_up;
    int work, help_sp, help_tag, wait_e;
    uint turn;
    bool idle;
    ulong budget;                    // becomes S->tail_budget once the queue is empty
    __global ushort *pv;
    __global uchar *pv_len;
    bool have_value;                 // `value` is the current node's: RETURN it
} Lane;

// What the lane does after its root has returned.
#define LANE_ENTERED 0   // it has entered the root of new work
#define LANE_LATER 1     // no work now: look again on a later turn
#define LANE_EXIT 2      // no work left: the lane ends

// Step 1. WAIT: the node just made is a published child that a helper is searching. True when
// the lane can go on (the helper's value, or the child entered here because the helper gave it
// up); false while the helper is still at it.
static inline bool wait_for_helper(Lane *L, const Jobs *J) {
    const Split *S = J->S;
    ulong r = S->e_result[L->wait_e];
    uint st = S->e_state[L->wait_e];
    if (r && (int)(short)(ushort)r == -L->cur.beta) {
        L->value = (int)(short)(ushort)(r >> 16);
        L->nodes += r >> 32;
        atomic_add(&S->ctl[CTL_USED_KNODES], (uint)(r >> 42));
        L->have_value = true;
        L->wait_e = -1;
    } else if (st == E_TAKEN || (st == E_DONE && !r)) {
        return false;
    } else {                        // the helper gave it up: search it here
        L->wait_e = -1;
        L->cur.entered = (uint)L->nodes;
        L->nodes++;
        if (J->want_pv) L->pv_len[L->ply] = 0;
        L->cur.sp = -1;
        L->have_value = enter_node(&L->cur, &L->b, J->values, L->ply, &L->value);
    }
    return true;
}

// Step 2. The root has returned: the job's result (or the part's, for its split point's owner).
static inline void finish_work(Lane *L, const Jobs *J) {
    const Split *S = J->S;
    if (J->help) close_split(S, &L->cur);
    L->cur.sp = -1;
    if (J->help && L->work == WORK_HELP)
        atomic_add(&S->ctl[CTL_HELPER_KNODES], (uint)(L->nodes >> 10));
    if (L->work == WORK_JOB) {
        J->scores[L->job] = L->given_up ? 0 : L->value;
        J->best_moves[L->job] = L->given_up ? 0u : L->cur.best_move;
        // the node count last, after a fence: on a CPU device the host reads the results in
        // place while the launch runs, and a nonzero count says the job's score and move are
        // there (hostlaunch.cpp, finished_early)
        GLOBAL_FENCE();
        ((__global volatile ulong *)J->node_counts)[L->job] = L->given_up ? 0UL : L->nodes;
        // a chained job (params.w & JOB_CHAIN: the host's inline launches, whose jobs run one
        // after another on one lane) that does not fail high ends the launch: the host wants
        // its result before it decides on the next job (a cutoff, a wider search, a re-search)
        int4 p = J->params[L->job];
        if ((p.w & JOB_CHAIN) && (L->given_up || L->value < p.z))
            atomic_max(J->job_counter, J->n_jobs);
        if (J->help) {
            atomic_inc(&S->ctl[CTL_DONE]);
            if (S->times) S->times[2 * L->job + 1] = device_ns();
        }
    } else if (J->help && L->work == WORK_HELP) {
        if (L->given_up || L->nodes > 0xFFFFFFFFUL) {
            atomic_xchg(&S->e_state[L->job], E_DEAD);
        } else {
            S->e_result[L->job] = pack_result(L->nodes, L->value, L->help_tag);
            GLOBAL_FENCE();
            atomic_xchg(&S->e_state[L->job], E_DONE);
            atomic_inc(&S->ctl[CTL_HELPED]);
        }
    }
    L->work = WORK_NONE;
    L->given_up = false;
}

// Step 3. New work: a published child of a split job (help), else the next job of the queue.
static inline void take_work(Lane *L, const Jobs *J) {
    const Split *S = J->S;
    if (J->help) {
        int tag;
        int e = take_entry(S, &tag);
        if (e >= 0) {
            int sp = (int)S->e_sp[e];
            int4 info = S->sp_info[sp];
            load_position_v(&L->b, S->e_pos + (size_t)e * POSITION_WORDS, J->lines);
            L->cur.depth = max(info.x - 1, 0); L->cur.alpha = -info.y; L->cur.beta = -tag;
            L->ply = L->root_ply = info.z + 1;
            L->work = WORK_HELP;
            L->job = (uint)e;
            L->help_sp = sp;
            L->help_tag = tag;
        }
    }
    if (L->work == WORK_NONE && (!J->help || *J->job_counter < J->n_jobs)) {
        L->job = atomic_inc(J->job_counter);
        if (L->job < J->n_jobs) {
            load_position(&L->b, J->positions + (size_t)L->job * POSITION_WORDS, J->lines);
            int4 p = J->params[L->job];
            L->cur.depth = p.x; L->cur.alpha = p.y; L->cur.beta = p.z;
            L->ply = L->root_ply = p.w & JOB_PLY_MASK;
            L->work = WORK_JOB;
            if (J->help && S->times) S->times[2 * L->job] = device_ns();
            L->pv = J->pv_moves + (size_t)L->job * PV_STRIDE * PV_STRIDE;
            L->pv_len = J->pv_lengths + (size_t)L->job * PV_STRIDE;
            if (J->want_pv) L->pv_len[0] = 0;
        }
    }
}

// Step 4. No work to take: the lane ends when every job is done (or, without `help`, at once),
// or when `max_idle` lanes already wait; else it waits to look again.
static inline int wait_for_work(Lane *L, const Jobs *J) {
    const Split *S = J->S;
    if (!J->help || S->ctl[CTL_DONE] >= J->n_jobs)
        return LANE_EXIT;
    if (!L->idle) {
        if (atomic_inc(&S->ctl[CTL_IDLE]) >= S->max_idle) {
            atomic_dec(&S->ctl[CTL_IDLE]);
            return LANE_EXIT;
        }
        L->idle = true;
    }
    L->turn = 0;
    return LANE_LATER;
}

// A job of search_jobs the host has stopped (its batch was cancelled): read when the job is
// taken and every STOP_POLL_MASK + 1 nodes; it is then given up as a job past its node budget
// is (0 nodes back), and the host never uses its result.
#define STOP_POLL_MASK 1023
static inline bool job_stopped(const Lane *L, const Jobs *J) {
    return J->stop && L->work == WORK_JOB && J->stop[L->job];
}

// Steps 2-5: the root has returned. Hand the result out, take new work and ENTER its root.
static inline int root_returned(Lane *L, const Jobs *J) {
    if (J->help && L->work == WORK_NONE && ++L->turn % IDLE_TURNS)
        return LANE_LATER;                                // idle: look again later
    finish_work(L, J);
    take_work(L, J);
    if (L->work == WORK_NONE)
        return wait_for_work(L, J);
    if (L->idle) {
        atomic_dec(&J->S->ctl[CTL_IDLE]);
        L->idle = false;
    }
    // Step 5. ENTER the root of the new work; a job stopped before it starts is given up at once
    if (job_stopped(L, J)) {
        L->given_up = true;
        L->have_value = true;
        return LANE_ENTERED;
    }
    init_eval(&L->b, J->values);
    L->nodes = 1;
    L->cur.sp = -1;
    L->cur.entered = 0;
    L->have_value = enter_node(&L->cur, &L->b, J->values, L->ply, &L->value);
    return LANE_ENTERED;
}

// Step 6. RETURN into the parent: take the child's value (best move, PV, alpha, cutoff); with
// `help`, publish the node's remaining children when its window has changed or its subtree has
// passed the budget.
static inline void return_to_parent(Lane *L, const Jobs *J) {
    const Split *S = J->S;
    Frame *cur = &L->cur;
    L->ply--;
    pop_frame(L->stack + L->ply * L->fw, cur);
    if (J->help) pop_split(L->stack + L->ply * L->fw, cur);
    unmake(&L->b, &cur->u, cur->m.from, cur->m.to, cur->m.promo, cur->m.mover, cur->m.victim);
    int score = -L->value;
    L->have_value = false;
    if (score > cur->best) {
        cur->best = score;
        cur->best_move = pack_move(cur->m.from, cur->m.to, cur->m.promo);
        if (J->want_pv) {
            __global ushort *row = L->pv + L->ply * PV_STRIDE;
            __global const ushort *child = row + PV_STRIDE;
            int n = L->pv_len[L->ply + 1];
            row[0] = (ushort)cur->best_move;
            for (int k = 0; k < n; k++)
                row[k + 1] = child[k];
            L->pv_len[L->ply] = (uchar)(n + 1);
        }
        if (score > cur->alpha) {
            cur->alpha = score;
            if (score >= cur->beta) {
                L->value = cur->best;      // cutoff: return at once
                L->have_value = true;
                if (J->help) close_split(S, cur);
            } else if (J->help && cur->sp >= 0) {
                // the window of the remaining children has changed: publish them again
                close_split(S, cur);
                atomic_inc(&S->ctl[CTL_REPUBLISHED]);
                publish(S, cur, &L->b, J->values, L->ply);
            }
        }
    }
    // a node whose own subtree has passed the budget publishes its other children
    if (J->help && !L->have_value && cur->sp == -1 && (uint)L->nodes - cur->entered > L->budget
            && cur->depth >= S->min_depth)
        publish(S, cur, &L->b, J->values, L->ply);
}

// Step 7. NEXT + TEST: the next pseudo-legal move, made; true when it is legal (the child is
// to be entered). With no move left the node's value is known (mate, stalemate, or its best).
static inline bool next_legal_move(Lane *L, const Jobs *J) {
    Frame *cur = &L->cur;
    if (!next_move(&cur->g, &L->b, &cur->m)) {
        if (!cur->legal && !cur->g.captures_only)
            L->value = cur->in_check ? -(MATE - L->ply) : 0;   // mate / stalemate
        else
            L->value = cur->best;
        L->have_value = true;
        if (J->help) close_split(J->S, cur);
        return false;
    }
    if (!make_legal(&L->b, &cur->u, cur->m.from, cur->m.to, cur->m.promo, cur->m.mover,
                    cur->m.victim, J->values,
                    needs_test(&L->b, cur->in_check, cur->m.from, cur->m.to, cur->m.mover)))
        return false;
    cur->legal = true;
    return true;
}

// Step 9 (help). The child just made is published entry `entry` of its parent's split point,
// searched with the parent's window `alpha`: true when its value is known (a helper's result)
// or a helper searches it (the lane waits, step 1); false when the lane claimed it.
static inline bool published_child(Lane *L, const Jobs *J, int entry, int alpha) {
    const Split *S = J->S;
    ulong r = S->e_result[entry];
    if (r && (int)(short)(ushort)r == alpha) {   // a helper has searched it
        L->value = (int)(short)(ushort)(r >> 16);
        L->nodes += r >> 32;
        atomic_add(&S->ctl[CTL_USED_KNODES], (uint)(r >> 42));
        L->have_value = true;
        return true;
    }
    uint st = S->e_state[entry];
    if (!(st == E_READY
          && atomic_cmpxchg(&S->e_state[entry], E_READY, E_OWNER) == E_READY)
            && (st == E_READY || st == E_TAKEN || st == E_DONE)) {
        L->wait_e = entry;                       // a helper is searching it
        atomic_inc(&S->ctl[CTL_WAITS]);
        return true;
    }
    atomic_inc(&S->ctl[CTL_CLAIMED]);
    return false;
}

// Work given up (help): the split points its nodes published are closed, so that the helpers
// searching their children give those up too.
static inline void close_stack_splits(const Lane *L, const Jobs *J) {
    if (!J->help)
        return;
    for (int q = L->root_ply; q < L->ply; q++) {
        int sp = SPLIT_SP(L->stack[q * L->fw + FRAME_WORDS]);
        if (sp >= 0) J->S->sp_alpha[sp] = SP_CLOSED;
    }
}

// Step 10 (help, every 256 nodes). A part whose split point has returned is given up (true);
// once the queue of jobs is empty the budget becomes the tail budget.
static inline bool part_given_up(Lane *L, const Jobs *J) {
    const Split *S = J->S;
    if (L->work == WORK_HELP && S->sp_alpha[L->help_sp] == SP_CLOSED) {
        // the node this part belongs to has returned: give the part up
        close_stack_splits(L, J);
        L->given_up = true;
        L->ply = L->root_ply;
        L->have_value = true;
        return true;
    }
    if (*J->job_counter >= J->n_jobs)
        L->budget = S->tail_budget;
    return false;
}

// Steps 8-11. Go down to the legal child just made: push the node, the child's window; with
// `help` a published child may be known or searched elsewhere (9), and a part may be given up
// (10); then count the child (a job past its node budget is given up) and ENTER it (11).
static inline void enter_child(Lane *L, const Jobs *J) {
    Frame *cur = &L->cur;
    // Step 8. push the node, negate the window
    int entry = -1;
    if (J->help && cur->sp >= 0)
        entry = J->S->sp_info[cur->sp].w + (int)cur->k++;
    push_frame(L->stack + L->ply * L->fw, cur);
    if (J->help) push_split(L->stack + L->ply * L->fw, cur);
    int alpha = cur->alpha;
    cur->depth = max(cur->depth - 1, 0);
    cur->alpha = -cur->beta;
    cur->beta = -alpha;
    L->ply++;
    if (J->help) {
        cur->sp = -1;
        if (entry >= 0 && published_child(L, J, entry, alpha))
            return;
        if ((L->nodes & 255) == 0 && part_given_up(L, J))
            return;
        cur->entered = (uint)L->nodes;
    }
    // Step 11. count the child and ENTER it
    L->nodes++;
    if ((J->node_budget && L->nodes > J->node_budget)       // give the job up: straight to the next one
        || ((L->nodes & STOP_POLL_MASK) == 0 && job_stopped(L, J))) {
        close_stack_splits(L, J);
        L->given_up = true;
        L->ply = L->root_ply;
        L->have_value = true;
        return;
    }
    if (J->want_pv) L->pv_len[L->ply] = 0;
    L->have_value = enter_node(cur, &L->b, J->values, L->ply, &L->value);
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
// job has at least one): the lab's host-side split searches it child by child
// (lab/hostsplit.py). With `help` (search_jobs_split), long jobs are split on the device (above).
static inline void search_body(const Jobs *J)
{
    ulong stack[MAX_PLY * (FRAME_WORDS + SPLIT_WORDS)];
    Lane L;
    L.stack = stack;
    L.fw = J->help ? FRAME_WORDS + SPLIT_WORDS : FRAME_WORDS;
    L.cur.sp = -1; L.cur.k = 0;
    L.job = 0;
    L.ply = 0; L.root_ply = 0; L.value = 0;
    L.nodes = 0;
    L.given_up = false;
    L.work = WORK_NONE; L.help_sp = 0; L.help_tag = 0; L.wait_e = -1;
    L.turn = IDLE_TURNS - 1;   // the first turn takes a job at once
    L.idle = false;
    L.budget = J->help ? J->S->budget : 0;
    L.pv = J->pv_moves;
    L.pv_len = J->pv_lengths;
    // "the root has returned": the first turn takes a job from the queue
    L.have_value = true;
    for (;;) {
        if (J->help && L.wait_e >= 0 && !wait_for_helper(&L, J))
            continue;
        while (L.have_value) {
            if (L.ply == L.root_ply) {
                int next = root_returned(&L, J);
                if (next == LANE_EXIT)
                    return;
                if (next == LANE_LATER)
                    break;
                continue;
            }
            return_to_parent(&L, J);
        }
        if (J->help && L.work == WORK_NONE)
            continue;
        if (next_legal_move(&L, J))
            enter_child(&L, J);
    }
}

__kernel void search_jobs(__global const ulong *positions,   // POSITION_WORDS per job
                          __global const int4 *params,       // (depth, alpha, beta, ply | JOB_CHAIN) per job
                          const uint n_jobs,
                          const ulong node_budget,           // 0: none
                          __global volatile uint *job_counter,
                          __global volatile const uint *stop,  // per job: nonzero stops it
                          __global int *scores,
                          __global uint *best_moves,
                          __global ulong *node_counts,
                          const uint want_pv,
                          __global ushort *pv_moves,         // PV_STRIDE^2 per job when wanted
                          __global uchar *pv_lengths,        // PV_STRIDE per job when wanted
                          Values values,                     // evaluation tables
                          Lines lines)                       // attack tables
{
    Jobs J = {positions, params, n_jobs, node_budget, job_counter, scores, best_moves,
              node_counts, want_pv, pv_moves, pv_lengths, values, lines, false, 0, stop};
    search_body(&J);
}

// The same jobs with long ones split on the device (above); ctl[CTL_JOBS] is the job queue. With
// `use_stop` the host may stop jobs as in search_jobs (the engine's launches, hostlaunch.cpp).
__kernel void search_jobs_split(__global const ulong *positions, __global const int4 *params,
                                const uint n_jobs, __global volatile uint *ctl,
                                __global int *scores, __global uint *best_moves,
                                __global ulong *node_counts,
                                __global volatile int *sp_alpha, __global volatile int4 *sp_info,
                                const uint sp_max,
                                __global volatile ulong *e_pos, __global volatile uint *e_state,
                                __global volatile uint *e_sp, __global volatile ulong *e_result,
                                const uint e_max, const ulong split_budget, const int min_depth,
                                __global ulong *times,   // 2 per job, or 0 words: no timeline
                                const uint want_times, const uint max_idle,
                                const ulong tail_budget,
                                __global volatile const uint *stop,  // per job, when use_stop
                                const uint use_stop,
                                Values values, Lines lines)
{
    Split S;
    S.tail_budget = tail_budget;
    S.times = want_times ? times : 0;
    S.max_idle = max_idle;
    S.ctl = ctl; S.sp_alpha = sp_alpha; S.sp_info = sp_info; S.e_pos = e_pos;
    S.e_state = e_state; S.e_sp = e_sp; S.e_result = e_result;
    S.sp_max = sp_max; S.e_max = e_max; S.budget = split_budget; S.min_depth = min_depth;
    Jobs J = {positions, params, n_jobs, 0, ctl + CTL_JOBS, scores, best_moves, node_counts,
              0, 0, 0, values, lines, true, &S, use_stop ? stop : 0};
    search_body(&J);
}

// The nodes of split jobs (lab/hostsplit.py): for each (position, depth, -, ply), what the
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

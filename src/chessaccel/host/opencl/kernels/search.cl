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
#define CTL_RJOBS 6      // RESERVE_SMS with prio_first: the reserved multiprocessors' queue
#define CTL_HELPER_KNODES 8   // nodes searched by helpers (finished or given up), in 1024s
#define CTL_USED_KNODES 9     // nodes of helpers' results the owners used, in 1024s
#define CTL_IDLE 10           // lanes without work that stay
#define CTL_REPUBLISHED 11    // alpha rose at a published node: its children published again
#define CTL_WAITS 12          // an owner waited for a helper's child
#define CTL_CLAIMED 13        // an owner searched a published child itself
#define CTL_HOT 14            // lanes with priority now
#define CTL_HOT_EVENTS 15     // times a lane took priority
// Priority for long work (`prio_nodes`): a lane whose job or part has counted `prio_nodes`
// nodes (checked every 256 nodes) takes priority in its warp, if fewer than `prio_max` lanes
// hold it: the other lanes of its warp (WARP_LANES consecutive work-items) finish what they hold
// and take no new job or entry while it lasts (they wait, or end with `prio_exit`), so that the
// long work runs without the divergence of 31 other jobs beside it. Only the schedule changes:
// no result depends on which lane searches what.
#define WARP_LANES 32
// A lane without work looks for work again every IDLE_TURNS turns of the loop (a turn of its
// own costs a few instructions: the lanes that work in its warp hardly wait for it), and at
// most `max_idle` lanes stay without work: the others end, so that the multiprocessors' issue
// slots go to the lanes that work (the lone lanes of the batch's tail are its critical path).
#define IDLE_TURNS 32

// PRIO_SM (with SPLIT_PRIO): priority is taken in the lane's multiprocessor (NVIDIA's %smid;
// elsewhere its work-group) instead of its warp: every other lane of the multiprocessor takes no
// new job while it lasts, so that the long work gets the multiprocessor's issue slots alone.
// IDLE_SLEEP: a lane that waits for work sleeps that many ns between looks (NVIDIA's nanosleep),
// so that it takes no issue slots from the lanes that work; IDLE_LOADS: it waits instead on that
// many dependent loads of a counter (each a trip to the L2 cache, one instruction or two issued);
// 0 and 0: it spins.
#ifndef PRIO_SM
#define PRIO_SM 0
#endif
#ifndef IDLE_SLEEP
#define IDLE_SLEEP 0
#endif
#ifndef IDLE_LOADS
#define IDLE_LOADS 0
#endif
#define IDLE_WAITS (IDLE_SLEEP || IDLE_LOADS)
// RESERVE_SMS (with SPLIT_PRIO and PRIO_SM): the lanes of the multiprocessors numbered below it
// take no job from the queue, only entries (parts of split jobs), and only RESERVE_LANES lanes of
// each of their warps run at all, so that the long jobs' parts find fast helpers from the start.
#ifndef RESERVE_SMS
#define RESERVE_SMS 0
#endif
#ifndef RESERVE_LANES
#define RESERVE_LANES 1
#endif
// RESERVE_OWN: the parts of the reserved multiprocessors' jobs go only to reserved lanes, and
// the other parts only to the other lanes (the split point's depth word carries the class).
#ifndef RESERVE_OWN
#define RESERVE_OWN 0
#endif
#define HOT_SLOTS 1024
static inline uint prio_slot(void) {
#if PRIO_SM && defined(cl_nv_pragma_unroll)
    uint sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    return sm % HOT_SLOTS;
#elif PRIO_SM
    return (uint)get_group_id(0) % HOT_SLOTS;
#else
    return (uint)get_global_id(0) / WARP_LANES;
#endif
}
static inline void idle_sleep(__global volatile uint *word) {
#if IDLE_SLEEP && defined(cl_nv_pragma_unroll)
    asm volatile("nanosleep.u32 %0;" :: "r"((uint)IDLE_SLEEP));
#endif
#if IDLE_LOADS
    uint v = 0;
    for (int i = 0; i < IDLE_LOADS; i++)
        v = word[v >> 31];        // the next address depends on the value: the loads wait in turn
#endif
}

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
    __global volatile uint *warp_hot; // per warp: its lanes that have priority
    uint sp_max, e_max, max_idle;
    ulong budget;
    ulong tail_budget;                // the budget once the queue of jobs is empty
    int min_depth;
    uint prio_nodes, prio_max, prio_exit, prio_first;
} Split;

// Priority in the lane's warp, if fewer than prio_max lanes hold it (true: taken).
static inline bool take_priority(const Split *S, uint warp) {
    if (atomic_inc(&S->ctl[CTL_HOT]) < S->prio_max) {
        atomic_inc(&S->warp_hot[warp]);
        atomic_inc(&S->ctl[CTL_HOT_EVENTS]);
        return true;
    }
    atomic_dec(&S->ctl[CTL_HOT]);
    return false;
}


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
static inline void publish(const Split *S, Frame *f, Board *b, Values v, int ply, int cls) {
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
    S->sp_info[sp] = (int4)(f->depth | (cls << 16), f->beta, ply, (int)base);
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
static inline int take_entry(const Split *S, int *tag, int cls) {
    uint lo = S->ctl[CTL_SCAN], hi = min(S->ctl[CTL_ENTRIES], S->e_max);
    uint end = min(hi, lo + 256u), mark = lo;
    bool passing = true;
    for (uint e = lo; e < end; e++) {
        uint st = S->e_state[e];
        if (RESERVE_OWN && st == E_READY && (S->sp_info[S->e_sp[e]].x >> 16) != cls) {
            passing = false;            // another class's entry: not for this lane
            continue;
        }
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

// The first jobs of the queue, spread over the warps: lanes of a warp that take jobs on the same
// turn get consecutive places of the queue (NVIDIA aggregates a warp's atomics), and neighbours
// in a job file are often siblings of one position, long or short together. The first
// get_global_size(0) places (the first wave: every lane takes one at the start), place c goes
// to job (c % WARP_LANES) * warps + c / WARP_LANES, so that job j < warps is the first job of
// warp j's first lane. A permutation: only the schedule changes.
static inline uint spread_job(uint c, uint n) {
#if SPREAD_JOBS
    uint size = (uint)get_global_size(0);
    if (size % WARP_LANES || size < 2 * WARP_LANES)
        return c;
    if (c >= size || size > n)
        return c;
    return (c % WARP_LANES) * (size / WARP_LANES) + c / WARP_LANES;
#else
    return c;
#endif
}

#define WORK_NONE 0
#define WORK_JOB 1
#define WORK_HELP 2

// One loop serves every lane whatever it is doing: each turn first RETURNs values up the stack
// as far as they go (finishing a job and starting the next one from the queue when the root
// returns), then takes the NEXT move, makes and TESTs it and ENTERs the child. Lanes of a warp
// that are in different steps thus meet again in the expensive part (make, TestCheck,
// generation) on the same turn instead of idling through each other's steps.
//
// A job starts at ply params.w (0 for the accelerator's jobs; a part of a split job starts at
// its own depth in the tree, which the MAX_PLY rule and mate scores count from). With a
// node_budget, a job that would count more nodes is given up and reported with 0 nodes (a real
// job has at least one): the host splits it into its children (lab/hostsplit.py).
// With `help` (search_jobs_split), long jobs are split on the device (above).
static inline void search_body(__global const ulong *positions, __global const int4 *params,
                               const uint n_jobs, const ulong node_budget,
                               __global volatile uint *job_counter,
                               __global int *scores, __global uint *best_moves,
                               __global ulong *node_counts, const uint want_pv,
                               __global ushort *pv_moves, __global uchar *pv_lengths,
                               Values values, Lines lines, const bool help, const Split *S)
{
    ulong stack[MAX_PLY * (FRAME_WORDS + SPLIT_WORDS)];
    const int fw = help ? FRAME_WORDS + SPLIT_WORDS : FRAME_WORDS;
    Board b;
    Frame cur;
    cur.sp = -1; cur.k = 0;
    uint job = 0;
    int ply = 0, root_ply = 0, value = 0;
    ulong nodes = 0;
    bool given_up = false;
    int work = WORK_NONE, help_sp = 0, help_tag = 0, wait_e = -1;
    uint turn = IDLE_TURNS - 1;   // the first turn takes a job at once
    bool idle = false;
    bool hot = false;                          // this lane has priority in its warp
#if SPLIT_PRIO && PRIO_SM && RESERVE_SMS
    const bool reserved = help && prio_slot() < RESERVE_SMS;
    if (reserved && get_local_id(0) % WARP_LANES >= RESERVE_LANES)
        return;
#else
    const bool reserved = false;
#endif
    ulong budget = help ? S->budget : 0;       // becomes S->tail_budget once the queue is empty
    const uint warp = prio_slot();      // the slot of warp_hot this lane's priority uses
    __global ushort *pv = pv_moves;
    __global uchar *pv_len = pv_lengths;
    // "the root has returned": the first turn takes a job from the queue
    bool have_value = true;
    for (;;) {
        if (help && wait_e >= 0) {
            // the node just made is a published child a helper is searching: its result?
            ulong r = S->e_result[wait_e];
            uint st = S->e_state[wait_e];
            if (r && (int)(short)(ushort)r == -cur.beta) {
                value = (int)(short)(ushort)(r >> 16);
                nodes += r >> 32;
                atomic_add(&S->ctl[CTL_USED_KNODES], (uint)(r >> 42));
                have_value = true;
                wait_e = -1;
            } else if (st == E_TAKEN || (st == E_DONE && !r)) {
                continue;
            } else {                        // the helper gave it up: search it here
                wait_e = -1;
                cur.entered = (uint)nodes;
                nodes++;
                if (want_pv) pv_len[ply] = 0;
                cur.sp = -1;
                have_value = enter_node(&cur, &b, values, ply, &value);
            }
        }
        // RETURN: values go up until a parent continues (or the root is done)
        while (have_value) {
            if (ply == root_ply) {
                if (help && work == WORK_NONE && ++turn % IDLE_TURNS)
                    break;                                    // idle: look again later
                if (help) close_split(S, &cur);
                cur.sp = -1;
#if SPLIT_PRIO
                if (help && hot) {
                    atomic_dec(&S->warp_hot[warp]);
                    atomic_dec(&S->ctl[CTL_HOT]);
                    hot = false;
                }
#endif
                if (help && work == WORK_HELP)
                    atomic_add(&S->ctl[CTL_HELPER_KNODES], (uint)(nodes >> 10));
                if (work == WORK_JOB) {
                    scores[job] = given_up ? 0 : value;
                    best_moves[job] = given_up ? 0u : cur.best_move;
                    node_counts[job] = given_up ? 0UL : nodes;
                    if (help) {
                        atomic_inc(&S->ctl[CTL_DONE]);
                        if (S->times) S->times[2 * job + 1] = device_ns();
                    }
                } else if (help && work == WORK_HELP) {
                    if (given_up || nodes > 0xFFFFFFFFUL) {
                        atomic_xchg(&S->e_state[job], E_DEAD);
                    } else {
                        S->e_result[job] = pack_result(nodes, value, help_tag);
                        GLOBAL_FENCE();
                        atomic_xchg(&S->e_state[job], E_DONE);
                        atomic_inc(&S->ctl[CTL_HELPED]);
                    }
                }
                work = WORK_NONE;
                given_up = false;
                // a lane of a warp where another has priority takes no new work
                const bool frozen = SPLIT_PRIO && help && (reserved || S->warp_hot[warp] != 0);
                // prio_exit 2: the lanes frozen by a priority still help (entries, no new jobs)
                if (help && (!frozen || S->prio_exit == 2 || reserved)) {
                    int tag;
                    int e = take_entry(S, &tag, (int)reserved);
                    if (e >= 0) {
                        int sp = (int)S->e_sp[e];
                        int4 info = S->sp_info[sp];
                        load_position_v(&b, S->e_pos + (size_t)e * POSITION_WORDS, lines);
                        cur.depth = max((info.x & 0xFFFF) - 1, 0); cur.alpha = -info.y; cur.beta = -tag;
                        ply = root_ply = info.z + 1;
                        work = WORK_HELP;
                        job = (uint)e;
                        help_sp = sp;
                        help_tag = tag;
                    }
                }
                bool from_queue = work == WORK_NONE && !frozen && (!help || *job_counter < n_jobs);
#if SPLIT_PRIO && PRIO_SM && RESERVE_SMS
                // with prio_first, the reserved multiprocessors take the first prio_first jobs
                // (a host's predicted long ones) from a queue of their own; the host starts the
                // other queue at prio_first
                const bool reserved_job = work == WORK_NONE && reserved
                                          && S->ctl[CTL_RJOBS] < S->prio_first;
                from_queue = from_queue || reserved_job;
#else
                const bool reserved_job = false;
#endif
                if (from_queue) {
                    job = reserved_job ? atomic_inc(&S->ctl[CTL_RJOBS])
                                       : spread_job(atomic_inc(job_counter), n_jobs);
                    if (reserved_job && job >= S->prio_first)
                        job = n_jobs;
                    if (job < n_jobs) {
                        load_position(&b, positions + (size_t)job * POSITION_WORDS, lines);
                        int4 p = params[job];
                        cur.depth = p.x; cur.alpha = p.y; cur.beta = p.z;
                        ply = root_ply = p.w;
                        work = WORK_JOB;
                        if (help && S->times) S->times[2 * job] = device_ns();
#if SPLIT_PRIO
                        if (help && !RESERVE_SMS && job < S->prio_first)
                            hot = take_priority(S, warp);
#endif
                        pv = pv_moves + (size_t)job * PV_STRIDE * PV_STRIDE;
                        pv_len = pv_lengths + (size_t)job * PV_STRIDE;
                        if (want_pv) pv_len[0] = 0;
                    }
                }
                if (work == WORK_NONE) {
                    if (!help || S->ctl[CTL_DONE] >= n_jobs)
                        return;
                    if (frozen) {
                        if (S->prio_exit == 1 && !reserved)
                            return;
#if IDLE_WAITS
                        idle_sleep(S->ctl + CTL_DONE);
                        turn = IDLE_TURNS - 1;               // sleep, then look again at once
#else
                        turn = 0;
#endif
                        break;                               // wait: look again later
                    }
                    if (!idle) {
                        if (atomic_inc(&S->ctl[CTL_IDLE]) >= S->max_idle) {
                            atomic_dec(&S->ctl[CTL_IDLE]);
                            return;
                        }
                        idle = true;
                    }
#if IDLE_WAITS
                    idle_sleep(S->ctl + CTL_DONE);
                    turn = IDLE_TURNS - 1;
#else
                    turn = 0;
#endif
                    break;                                   // idle: look again later
                }
                if (idle) {
                    atomic_dec(&S->ctl[CTL_IDLE]);
                    idle = false;
                }
                init_eval(&b, values);
                nodes = 1;
                cur.sp = -1;
                cur.entered = 0;
                have_value = enter_node(&cur, &b, values, ply, &value);
                continue;
            }
            ply--;
            pop_frame(stack + ply * fw, &cur);
            if (help) pop_split(stack + ply * fw, &cur);
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
                        if (help) close_split(S, &cur);
                    } else if (help && cur.sp >= 0) {
                        // the window of the remaining children has changed: publish them again
                        close_split(S, &cur);
                        atomic_inc(&S->ctl[CTL_REPUBLISHED]);
                        publish(S, &cur, &b, values, ply, (int)reserved);
                    }
                }
            }
            // a node whose own subtree has passed the budget publishes its other children
            if (help && !have_value && cur.sp == -1 && (uint)nodes - cur.entered > budget
                    && cur.depth >= S->min_depth)
                publish(S, &cur, &b, values, ply, (int)reserved);
        }
        if (help && work == WORK_NONE)
            continue;
        // NEXT + TEST: the next pseudo-legal move; a legal one is entered at once
        if (!next_move(&cur.g, &b, &cur.m)) {
            if (!cur.legal && !cur.g.captures_only)
                value = cur.in_check ? -(MATE - ply) : 0;   // mate / stalemate
            else
                value = cur.best;
            have_value = true;
            if (help) close_split(S, &cur);
            continue;
        }
        if (!make_legal(&b, &cur.u, cur.m.from, cur.m.to, cur.m.promo, cur.m.mover, cur.m.victim,
                        values, needs_test(&b, cur.in_check, cur.m.from, cur.m.to, cur.m.mover)))
            continue;
        cur.legal = true;
        int entry = -1;
        if (help && cur.sp >= 0)
            entry = S->sp_info[cur.sp].w + (int)cur.k++;
        push_frame(stack + ply * fw, &cur);
        if (help) push_split(stack + ply * fw, &cur);
        int alpha = cur.alpha;
        cur.depth = max(cur.depth - 1, 0);
        cur.alpha = -cur.beta;
        cur.beta = -alpha;
        ply++;
        if (help) {
            cur.sp = -1;
            if (entry >= 0) {
                ulong r = S->e_result[entry];
                if (r && (int)(short)(ushort)r == alpha) {   // a helper has searched it
                    value = (int)(short)(ushort)(r >> 16);
                    nodes += r >> 32;
                    atomic_add(&S->ctl[CTL_USED_KNODES], (uint)(r >> 42));
                    have_value = true;
                    continue;
                }
                uint st = S->e_state[entry];
                if (!(st == E_READY
                      && atomic_cmpxchg(&S->e_state[entry], E_READY, E_OWNER) == E_READY)
                        && (st == E_READY || st == E_TAKEN || st == E_DONE)) {
                    wait_e = entry;                          // a helper is searching it
                    atomic_inc(&S->ctl[CTL_WAITS]);
                    continue;
                }
                atomic_inc(&S->ctl[CTL_CLAIMED]);
            }
            if ((nodes & 255) == 0) {
                if (work == WORK_HELP && S->sp_alpha[help_sp] == SP_CLOSED) {
                    // the node this part belongs to has returned: give the part up
                    for (int q = root_ply; q < ply; q++) {
                        int sp = SPLIT_SP(stack[q * fw + FRAME_WORDS]);
                        if (sp >= 0) S->sp_alpha[sp] = SP_CLOSED;
                    }
                    given_up = true;
                    ply = root_ply;
                    have_value = true;
                    continue;
                }
                if (*job_counter >= n_jobs)
                    budget = S->tail_budget;
#if SPLIT_PRIO
                if (S->prio_nodes && !hot && nodes >= S->prio_nodes)
                    hot = take_priority(S, warp);
#endif
            }
            cur.entered = (uint)nodes;
        }
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
    search_body(positions, params, n_jobs, node_budget, job_counter, scores, best_moves,
                node_counts, want_pv, pv_moves, pv_lengths, values, lines, false, 0);
}

// The same jobs with long ones split on the device (above); ctl[CTL_JOBS] is the job queue.
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
                                __global volatile uint *warp_hot,   // per WARP_LANES work-items
                                const uint prio_nodes, const uint prio_max, const uint prio_exit,
                                const uint prio_first, const ulong tail_budget,
                                Values values, Lines lines)
{
    Split S;
    S.warp_hot = warp_hot;
    S.prio_nodes = prio_nodes; S.prio_max = prio_max; S.prio_exit = prio_exit;
    S.prio_first = prio_first;
    S.tail_budget = tail_budget;
    S.times = want_times ? times : 0;
    S.max_idle = max_idle;
    S.ctl = ctl; S.sp_alpha = sp_alpha; S.sp_info = sp_info; S.e_pos = e_pos;
    S.e_state = e_state; S.e_sp = e_sp; S.e_result = e_result;
    S.sp_max = sp_max; S.e_max = e_max; S.budget = split_budget; S.min_depth = min_depth;
    search_body(positions, params, n_jobs, 0, ctl + CTL_JOBS, scores, best_moves, node_counts,
                0, 0, 0, values, lines, true, &S);
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

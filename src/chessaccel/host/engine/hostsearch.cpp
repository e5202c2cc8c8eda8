// The host's search in compiled code: the top of the tree searched by native threads, its
// frontier jobs queued for one pump (host/engine/hostsearch.py) that packs them into the
// accelerator's launches and hands the results back. hostsearch.py says why it exists; the
// algorithm is host/engine/search.py's (HostSearch), written again here so that the search's
// threads are not held by Python's GIL: the same node, the same frontier, the same selective
// steps, the same scores across the host/job boundary (engine/scores.py). tests/test_hostsearch.py
// holds the two to each other node for node in the exact mode and to python-chess's rules.
//
// Threads: young brothers wait, at every host level (YBWC). At a host node whose children are
// host nodes, once the eldest child is searched, the younger ones are shared among the node's
// thread and up to `threads - 1` helper threads in all (a split point); a cutoff there stops
// every thread under it. All share one transposition table (lockless: each entry's key is
// stored xor its data, so a torn write reads as a miss). Each thread's frontier parents put
// their children's jobs, already in the kernels' packed form (host/opencl/layout.py: five
// words of bit-planes in the side to move's frame, four params), on one queue and wait on
// their own batch; the pump takes every queued job into one launch, so the launch holds the
// batches of every subtree in flight. With one thread it is HostSearch's search, node for node.
//
// Everything the contract defines (MATE, INF, MAX_PLY, the Move fields, the piece-square
// tables, the terms evaluation's weights) is handed over by hostsearch.py from chessaccel.contract,
// never written here.

#include "hostboard.hpp"
#include "hosteval.hpp"
#include "hostlaunch.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

using namespace hostboard;

namespace {

using Clock = std::chrono::steady_clock;

// --- what hostsearch.py hands over -------------------------------------------------------------

// The contract's numbers (hs_configure's array, in this order: hostsearch.py's _contract).
struct Contract {
    int mate, inf, max_ply, eval_max, taper_shift, phase_max, host_max_ply;
    int from_shift, to_shift, promo_shift, square_mask, promo_mask;
    int futility_host_plies, futility_margin, lmr_first, killers;
    int futility_deep_depth;    // deep_futility: reverse futility at nodes of at most this depth
    int futility_pruning_plies, futility_pruning_base, futility_pruning_step;
    int late_move_plies, late_move_base, late_move_factor;
    int null_eval_step, null_eval_most;
    int singular_table_plies, singular_margin;  // search.py's SINGULAR_* (singular)
    int job_chain;      // a job's params.w bit: an inline launch ends after it unless it fails high
    int fifty_span, fifty_limit;    // scores.py's FIFTY_SPAN and FIFTY_LIMIT (fifty_scaled)
    // timeman.py's STABLE_* (soft_percent)
    int stable_changed_percent, stable_iterations, stable_settled_percent, stable_fall_cp,
        stable_fall_percent;
    int square_mg[8][64], square_eg[8][64], phase_inc[8], phase_weight[64];
    hosteval::TermWeights terms;        // contract/evalweights.py's (hostsearch.py's _term_weights)
    // the terms evaluation's own material + piece-square values (evalweights.py's square_tables)
    int terms_square_mg[8][64], terms_square_eg[8][64];
};
static_assert(sizeof(Contract) % sizeof(int) == 0, "hs_configure's array is of ints");
Contract C;

// SearchOptions, in hostsearch.py's OPTION_FIELDS order, then the executor's speculate.
struct Options {
    int hardware_plies, tt, pvs, aspiration, killers, draws, parallel, aspiration_delta;
    int null_move, reductions, job_reductions, futility, check_extension, mate_distance, iir,
        history, futility_pruning, late_move_pruning, threads;
    int counter_moves;  // the quiet move that last refuted the opponent's move, after the killers
    int job_reduction_plies;  // the most plies a late quiet move's job is reduced by
    int null_move_eval;       // the null move a ply shallower per null_eval_step above beta
    int fifty_move_scaling;   // scores scaled down as the fifty-move counter grows (scores.py)
    int twofold_draws;        // a position seen once before the root is a draw too (repeats)
    int time_stability;       // the soft deadline scaled by how settled the search is (deepen)
    int deep_futility;        // reverse futility up to futility_deep_depth (search.py's)
    int non_pv_reductions;    // late-move reductions a ply more at null-window nodes (younger)
    int bad_captures_last;    // losing captures after the quiet moves (ordered_moves)
    int singular_extension;   // the hash move a ply deeper where no other move comes near
    int null_move_depth;      // the least depth of a node that tries the null move
    int evaluation;     // the static evaluation: EVAL_PST or EVAL_TERMS (EVALUATIONS' index)
    int speculate;      // the executor's: a null-window frontier parent sends all its jobs at once
};
constexpr int OPTION_COUNT = 32;
static_assert(sizeof(Options) == OPTION_COUNT * sizeof(int), "one int per option");

constexpr int POSITION_WORDS = 5;
constexpr int MAX_LINE = 128;
constexpr int MAX_STACK = 160;      // plies a thread's stack holds (hostboard.py's MAX_PLIES)

// --- scores across the host/job boundary (engine/scores.py) -----------------------------------

int mate_bound() { return C.mate - C.host_max_ply - C.max_ply; }

int from_job(int score, int ply) {
    int job_mate = C.mate - C.max_ply;
    if (score >= job_mate) return score - ply;
    if (score <= -job_mate) return score + ply;
    return score;
}

int to_job(int bound, int ply) {
    int threshold = C.mate - C.max_ply - ply;
    if (bound >= threshold) return std::min(bound + ply, C.inf);
    if (bound <= -threshold) return std::max(bound - ply, -C.inf);
    return bound;
}

void job_window(int alpha, int beta, int ply, int& a, int& b) {
    a = to_job(alpha, ply);
    b = to_job(beta, ply);
    if (a >= b) {
        if (a >= C.inf) a = C.inf - 1;
        else b = a + 1;
    }
}

bool is_mate(int score) { return score >= mate_bound() || score <= -mate_bound(); }

// A score of a position whose fifty-move counter stands at `halfmove`, scaled towards 0 as it
// grows (scores.py's fifty_scaled): nondecreasing in the score, mates and scores beyond
// fifty_limit as they are.
int fifty_scaled(int score, int halfmove) {
    if (halfmove <= 0 || score <= -C.fifty_limit || score >= C.fifty_limit) return score;
    int q = std::abs(score) * (C.fifty_span - std::min(halfmove, 100)) / C.fifty_span;
    return score >= 0 ? q : -q;
}

// The greatest score in [-inf, inf] that fifty_scaled takes to `bound` or below (scores.py's
// _last_scaled_to; bound >= -inf).
int last_scaled_to(int bound, int halfmove) {
    int lo = -C.inf, hi = C.inf;
    if (fifty_scaled(hi, halfmove) <= bound) return hi;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        (fifty_scaled(mid, halfmove) <= bound ? lo : hi) = mid;
    }
    return lo;
}

// The unscaled window whose results, scaled, keep the bounds of (alpha, beta) (scores.py's
// fifty_window): the greatest a scaled to alpha or below, the least b scaled to beta or above
// (one past the greatest scaled to beta - 1 or below: the scaled scores are integers and
// nondecreasing).
void fifty_window(int& alpha, int& beta, int halfmove) {
    if (halfmove <= 0) return;
    alpha = last_scaled_to(alpha, halfmove);
    beta = last_scaled_to(beta - 1, halfmove) + 1;
}

// The soft deadline's span in percent of the plan's after an iteration (timeman.py's
// soft_percent).
int soft_percent(bool changed, int settled, int fall) {
    int percent = changed ? C.stable_changed_percent
                : settled >= C.stable_iterations ? C.stable_settled_percent : 100;
    if (fall >= C.stable_fall_cp) percent = percent * C.stable_fall_percent / 100;
    return percent;
}

int mate_moves(int score) {     // 0: not a mate
    if (score >= mate_bound()) return (C.mate - score + 1) / 2;
    if (score <= -mate_bound()) return -((C.mate + score) / 2);
    return 0;
}

int to_tt(int score, int ply) {
    if (score >= mate_bound()) return score + ply;
    if (score <= -mate_bound()) return score - ply;
    return score;
}

int from_tt(int score, int ply) {
    if (score >= mate_bound()) return score - ply;
    if (score <= -mate_bound()) return score + ply;
    return score;
}

// --- the static evaluation (docs/semantics.md, section 6): the engine's Evaluation --------------
// "pst" (EVAL_PST): material and piece-square tables; "terms" (EVAL_TERMS): those and the terms
// of hosteval.hpp, summed before the taper as model/evalterms.py sums them. The host's own
// pruning decisions only (reverse futility, null move, futility pruning); jobs evaluate on the
// accelerator, with the same evaluation.

enum Evaluation { EVAL_PST = 0, EVAL_TERMS = 1 };     // contract/evalweights.py's EVALUATIONS

// Each evaluation's piece-square values (EVAL_PST's and EVAL_TERMS' tables of the contract) by
// piece code and square, signed from white's view (a black piece's the negated value of its
// mirrored square), and the phase increments by code; an empty square's all 0. Made from C by
// hs_configure: the sum over the occupied squares takes no branch on a piece's colour.
struct CodeTables {
    int mg[16][64], eg[16][64], phase[16];
};
CodeTables by_code[2];

void make_code_tables() {
    for (int evaluation = EVAL_PST; evaluation <= EVAL_TERMS; evaluation++) {
        CodeTables& out = by_code[evaluation];
        const auto& square_mg = evaluation == EVAL_TERMS ? C.terms_square_mg : C.square_mg;
        const auto& square_eg = evaluation == EVAL_TERMS ? C.terms_square_eg : C.square_eg;
        for (int code = 0; code < 16; code++) {
            int t = type_of(code), black = color_of(code) == 1;
            bool piece = t >= PAWN && t <= KING && code != EMPTY;
            out.phase[code] = piece ? C.phase_inc[t] : 0;
            for (int s = 0; s < 64; s++) {
                out.mg[code][s] = !piece ? 0 : black ? -square_mg[t][s ^ 56] : square_mg[t][s];
                out.eg[code][s] = !piece ? 0 : black ? -square_eg[t][s ^ 56] : square_eg[t][s];
            }
        }
    }
}

// Material and piece-square values of ``evaluation``'s tables, white minus black
// (model/evaluate.py's material_pst), and the game phase before its cap.
void material_pst(const Pos& p, int evaluation, int& mg, int& eg, int& phase) {
    const CodeTables& tables = by_code[evaluation];
    mg = eg = phase = 0;
    for (uint64_t x = hosteval::occupied_squares(p); x; x &= x - 1) {
        int s = __builtin_ctzll(x), code = p.sq[s] & 15;
        mg += tables.mg[code][s];
        eg += tables.eg[code][s];
        phase += tables.phase[code];
    }
}

int static_eval(const Pos& p, int evaluation) {
    int mg, eg, phase;
    material_pst(p, evaluation, mg, eg, phase);
    if (evaluation == EVAL_TERMS) hosteval::add_terms(p, C.terms, mg, eg);
    if (p.side == 1) { mg = -mg; eg = -eg; }
    int w = C.phase_weight[std::min(phase, C.phase_max)];
    int x = mg * w + eg * ((1 << C.taper_shift) - w);
    int score = x >= 0 ? x >> C.taper_shift : -((-x + (1 << C.taper_shift) - 1) >> C.taper_shift);
    return std::max(-C.eval_max, std::min(C.eval_max, score));
}

// An entry of a table that threads share without locks: the key xor the data beside the data, so
// a write torn by another thread's reads as no entry of this key, never as a wrong one.
struct LocklessEntry {
    std::atomic<uint64_t> check{0}, data{0};
    // the data stored for `key`, or 0
    uint64_t data_of(uint64_t key) const {
        uint64_t d = data.load(std::memory_order_relaxed);
        return (check.load(std::memory_order_relaxed) ^ d) == key ? d : 0;
    }
    void put(uint64_t key, uint64_t d) {
        data.store(d, std::memory_order_relaxed);
        check.store(key ^ d, std::memory_order_relaxed);
    }
};

// The static scores of positions met before, by key: every iteration visits the same nodes
// again, and the terms evaluation costs some 400 ns a call (Stockfish keeps it in its table for
// the same reason). Its entries are lockless (LocklessEntry), shared by the threads; the data
// holds the evaluation it was made with, and a full key must match, so a hit is the score
// static_eval would give. hs_configure empties it (entry by entry: a search may be running).
class EvalCache {
public:
    static constexpr size_t ENTRIES = size_t(1) << 16;
    bool probe(uint64_t key, int evaluation, int& score) const {
        uint64_t data = slots_[key & (ENTRIES - 1)].data_of(key);
        if (!data || (int)(data >> 32) != evaluation + 1) return false;
        score = (int)(uint32_t)data;
        return true;
    }
    void store(uint64_t key, int evaluation, int score) {
        slots_[key & (ENTRIES - 1)].put(key, (uint64_t)(evaluation + 1) << 32 | (uint32_t)score);
    }
    void clear() {
        for (size_t i = 0; i < ENTRIES; i++) slots_[i].put(0, 0);
    }

private:
    std::unique_ptr<LocklessEntry[]> slots_{new LocklessEntry[ENTRIES]};
};
EvalCache eval_cache;

int cached_static_eval(const Pos& p, int evaluation) {
    int score;
    if (eval_cache.probe(p.key, evaluation, score)) return score;
    score = static_eval(p, evaluation);
    eval_cache.store(p.key, evaluation, score);
    return score;
}

// --- the transposition table --------------------------------------------------------------------

enum Bound { NONE = 0, LOWER = 1, UPPER = 2, EXACT = 3 };

struct TTHit {
    uint32_t move;
    int score, depth, bound;
};

class Table {
public:
    void resize(size_t megabytes) {
        size_t entries = 1;
        while (entries * 2 * sizeof(LocklessEntry) <= megabytes << 20) entries *= 2;
        slots_.reset(new LocklessEntry[entries]);
        mask_ = entries - 1;
        clear();
    }
    // Between searches only. One memset: the C library's path for large blocks does not leave
    // the caches full of the table (an entry at a time did, and the next search ran cold).
    void clear() {
        std::memset(static_cast<void*>(slots_.get()), 0, (mask_ + 1) * sizeof(LocklessEntry));
        used_.store(0);
    }
    void new_search() { generation_ = (generation_ + 1) & 0xff; }
    bool probe(uint64_t key, TTHit& hit) const {
        uint64_t data = slots_[key & mask_].data_of(key);
        if (!data) return false;
        hit.move = data & 0xffff;
        hit.score = (int)((data >> 16) & 0xffff) - 32768;
        hit.depth = (data >> 32) & 0xff;
        hit.bound = (data >> 40) & 3;
        return true;
    }
    void store(uint64_t key, int depth, int bound, int score, uint32_t move) {
        LocklessEntry& e = slots_[key & mask_];
        uint64_t old = e.data.load(std::memory_order_relaxed);
        bool same = (e.check.load(std::memory_order_relaxed) ^ old) == key;
        int old_depth = (old >> 32) & 0xff, old_generation = (old >> 48) & 0xff;
        // keep a deeper entry of this search for another position
        if (old && !same && old_generation == generation_ && old_depth > depth + 2) return;
        if (same && !move) move = old & 0xffff;     // keep the best move an upper bound lacks
        if (!old) used_.fetch_add(1, std::memory_order_relaxed);
        uint64_t data = (uint64_t)(move & 0xffff) | (uint64_t)((score + 32768) & 0xffff) << 16
                      | (uint64_t)(depth & 0xff) << 32 | (uint64_t)bound << 40
                      | (uint64_t)generation_ << 48;
        e.put(key, data);
    }
    int hashfull() const { return (int)std::min<uint64_t>(1000, used_.load() * 1000 / (mask_ + 1)); }

private:
    std::unique_ptr<LocklessEntry[]> slots_;
    size_t mask_ = 0;
    int generation_ = 0;
    std::atomic<uint64_t> used_{0};
};

// --- jobs: the queue the pump empties -------------------------------------------------------------

// A view of n values in a batch's one block (a batch is made for every frontier parent: one
// allocation, not one per field).
template <typename T>
struct Slice {
    T* p = nullptr;
    T* data() { return p; }
    const T* data() const { return p; }
    T& operator[](size_t i) { return p[i]; }
    const T& operator[](size_t i) const { return p[i]; }
};

struct Batch {
    int n = 0;
    std::unique_ptr<uint64_t[]> block;
    Slice<uint64_t> words;              // n * POSITION_WORDS
    Slice<uint64_t> nodes;
    Slice<int64_t> placed;              // launch << 32 | index in it, once taken (-1: queued)
    Slice<int32_t> params;              // n * 4: depth, alpha, beta, 0
    Slice<int32_t> score;
    Slice<uint32_t> move;               // host move codes (0: none)
    Slice<uint8_t> black;
    Slice<uint8_t> ready;
    bool cancelled = false;
    bool lazy = false;      // inline launches: each job is run when the search waits for it
    // inline launches: jobs after which a launch ends whatever their result (the move after
    // them is a draw the host scores itself, which may end the node); empty: none
    std::vector<uint8_t> breaks;
    std::condition_variable cv;

    explicit Batch(int count) : n(count) {
        size_t c = (size_t)count;
        size_t words64 = c * (POSITION_WORDS + 2) + (c * (4 + 1 + 1) * 4 + 7) / 8 + (2 * c + 7) / 8;
        block.reset(new uint64_t[std::max<size_t>(words64, 1)]());
        uint64_t* at = block.get();
        words.p = at;
        nodes.p = at + c * POSITION_WORDS;
        placed.p = reinterpret_cast<int64_t*>(nodes.p + c);
        params.p = reinterpret_cast<int32_t*>(placed.p + c);
        score.p = params.p + 4 * c;
        move.p = reinterpret_cast<uint32_t*>(score.p + c);
        black.p = reinterpret_cast<uint8_t*>(move.p + c);
        ready.p = black.p + c;
        std::fill(placed.p, placed.p + c, -1);
    }
};

struct Aborted {};

// The squares whose piece code has bit `bit` set, as a bitboard (square s is bit s).
inline uint64_t code_bits(const uint8_t* sq, int bit) {
#ifdef __SSE2__
    uint64_t out = 0;
    for (int chunk = 0; chunk < 4; chunk++) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sq + 16 * chunk));
        // the bit moved to each byte's top, where movemask reads it
        __m128i top = _mm_slli_epi16(v, 7 - bit);
        out |= (uint64_t)(uint16_t)_mm_movemask_epi8(top) << (16 * chunk);
    }
    return out;
#else
    uint64_t out = 0;
    for (int s = 0; s < 64; s++) out |= (uint64_t)(sq[s] >> bit & 1) << s;
    return out;
#endif
}

// A packed position (layout.py's pack_positions) of a host position: bit-planes of the piece
// type and the side to move's pieces, in the side to move's frame (black's: ranks mirrored,
// which reverses the bitboard's bytes).
void pack(const Pos& p, uint64_t* out) {
    uint64_t t0 = code_bits(p.sq, 0), t1 = code_bits(p.sq, 1), t2 = code_bits(p.sq, 2);
    uint64_t black = code_bits(p.sq, 3), occupied = t0 | t1 | t2;
    uint64_t own = p.side ? black : occupied & ~black;
    if (p.side) {
        t0 = __builtin_bswap64(t0);
        t1 = __builtin_bswap64(t1);
        t2 = __builtin_bswap64(t2);
        own = __builtin_bswap64(own);
    }
    int flip = p.side ? 56 : 0;
    // castling in the side to move's frame: own K 1, own Q 2, enemy K 4, enemy Q 8
    int us = p.side, them = us ^ 1;
    int rights = ((p.castling >> (2 * us)) & 3) | ((p.castling >> (2 * them)) & 3) << 2;
    uint64_t ep = p.ep == NO_EP ? NO_EP : (uint64_t)(p.ep ^ flip);
    out[0] = t0;
    out[1] = t1;
    out[2] = t2;
    out[3] = own;
    out[4] = (uint64_t)rights | ep << 4;
}

// A packed Move the kernel wrote in the frame of the side that played it -> host move code.
uint32_t unpack_move(uint32_t packed, bool black) {
    if (!packed) return 0;
    int flip = black ? 56 : 0;
    int f = ((packed >> C.from_shift) & C.square_mask) ^ flip;
    int t = ((packed >> C.to_shift) & C.square_mask) ^ flip;
    int promo = (packed >> C.promo_shift) & C.promo_mask;
    return f | t << 6 | promo << 12;
}

struct Info {
    int32_t depth, seldepth, score, bound, pv_length, hashfull;
    uint64_t host_nodes, accelerator_nodes, speculative_nodes, jobs;
    double seconds;
    uint32_t pv[MAX_LINE];
};

class Search;

using Line = std::vector<uint32_t>;

struct Scored {
    int score;
    uint32_t move;
    Line pv;
};

// A host node whose younger children are shared among threads (YBWC). Guarded by its mutex:
// the window's alpha as it rises, the best so far, the next child to hand out.
struct Split {
    Split* parent;                  // the split point the node itself lies under
    std::atomic<bool> cut{false};   // a child failed high: every thread under here stops
    std::mutex m;
    std::vector<uint32_t> moves;
    size_t next = 0;
    int ply, depth, alpha, beta;
    bool reducible;
    Scored best;
};

// Forward pruning at a node (search.py's _selective and _prune): after the first `late` quiet
// moves (late >= 0), or after the first move when futile, a quiet move that is not a killer and
// gives no check is not searched; futility's pruned moves are taken to score `value` at most.
struct Prune {
    int late = -1;
    bool futile = false;
    int value = 0;
    bool active() const { return late >= 0 || futile; }
};

// --- one search thread ---------------------------------------------------------------------------

class Worker {
public:
    explicit Worker(Search& search) : s_(search) {}
    Worker(const Worker& parent, int ply, Split* split);   // a helper at a split point
    ~Worker();
    void run();
    void help(Split& split);

private:
    void check();
    void deepen();
    int iteration(int depth, int previous, Line& pv, int& bound);
    int node(int ply, int depth, int alpha, int beta, Line& pv, bool null_ok = true);
    int host_static(const Pos& p) const;
    bool selective(int ply, int& depth, int alpha, int beta, uint32_t tt_move, bool null_ok,
                   int& cut, bool& reducible, Prune& prune);
    bool prune_moves(int ply, uint32_t* moves, int n, const Prune& prune);
    int null_search(int ply, int depth, int beta, int stat);
    int reduction(int depth, int index, uint32_t move, int ply);
    Scored expand(int ply, int depth, int alpha, int beta, const uint32_t* moves, int n,
                  bool reducible, int extension = 0);
    int singular(int ply, int depth, int beta, const uint32_t* moves, int n, bool reducible,
                 const TTHit& hit);
    Scored split(int ply, int depth, int alpha, int beta, const uint32_t* moves, int n,
                 bool reducible, Scored best);
    Scored frontier(int ply, int depth, int alpha, int beta, uint32_t* moves, int n,
                    bool reducible);
    Scored brothers(int ply, int job_depth, int alpha, int beta, const uint32_t* moves, int n,
                    Scored best, int first_index);
    int lone_job(int child_ply, int job_depth, const Pos& child, int alpha, int beta, Line& tail);
    int single(int ply, int job_depth, uint32_t move, int alpha, int beta, Line& tail);
    int take(const Batch& batch, int i, int child_ply, int job_depth, int halfmove, Line& tail);
    void window(int alpha, int beta, int child_ply, int halfmove, int& a, int& b) const;
    int wait(std::shared_ptr<Batch>& batch, int i);
    void cancel(std::shared_ptr<Batch>& batch);
    void push(int ply, uint32_t move);
    void push_null(int ply);
    void pop() { keys_.pop_back(); }
    bool repeats(int at, int halfmoves) const;
    bool drawn_here(int ply) const;
    bool child_is_draw(int ply, uint32_t move);
    int order(int ply, uint32_t tt_move, uint32_t* out);
    void remember(int ply, uint32_t move, int depth);
    void note_root(int ply, int score, uint32_t move, const Line& pv);
    bool better(int ply, Scored& best, int& alpha, int beta, int score, uint32_t move,
                const Line& tail);
    uint32_t counter_move(int ply) const;
    bool is_killer(int ply, uint32_t move) const {
        return ply < C.host_max_ply && (killers_[ply][0] == move || killers_[ply][1] == move);
    }
    int younger(int ply, int depth, int index, uint32_t move, int alpha, int beta,
                bool reducible, Line& tail);
    void share(Split& split);
    bool below_cut() const {
        for (const Split* sp = split_; sp; sp = sp->parent)
            if (sp->cut.load(std::memory_order_relaxed)) return true;
        return false;
    }

    void run_inline(Batch& batch, int i);

    Search& s_;
    int inline_slot_ = -1;          // the launcher's slot this thread runs its inline jobs on
    Split* split_ = nullptr;        // the innermost split point this thread works under
    Worker* owner_ = this;          // the main search's worker (root reports go there)
    Pos stack_[MAX_STACK + 2];
    std::vector<uint64_t> keys_;
    std::vector<std::array<uint32_t, 2>> killers_;
    std::vector<int> history_;
    std::vector<uint32_t> counters_;    // by side to move, the opponent's move's from and to
    uint32_t moved_[MAX_STACK + 2] = {};  // the move that made each ply's position (0: none, null)
    int iteration_depth_ = 0;
    int root_alpha_ = 0;
    bool have_root_best_ = false;
    Scored root_best_{0, 0, {}};

    friend class Search;
};

// A split point's cutoff (not the user's stop or a limit): the thread gives up its child.
struct Cut {};

// --- the whole search: threads, the queue, the table, the limits ------------------------------

class Search {
public:
    Table table;
    Options opt{};
    Pos root{};
    std::vector<uint64_t> history;      // the game's keys before the root, oldest first
    std::vector<uint32_t> root_moves;   // searchmoves (empty: all)

    // limits
    int depth_limit = 0, mate_limit = 0;
    uint64_t node_limit = 0;
    Clock::time_point deadline, soft_deadline, started;
    bool has_deadline = false, has_soft = false;

    std::atomic<bool> stop{false};        // the user's stop, a limit, or an error
    std::atomic<int> running{0};
    std::atomic<int> helpers{0};          // helper threads at split points now
    std::atomic<uint64_t> host_nodes{0}, accel_nodes{0}, jobs{0}, splits{0};
    std::atomic<int> seldepth{0};
    std::string error;

    // the queue
    std::mutex m;
    std::condition_variable queue_cv;   // the pump's: jobs queued, a launch ended, the search over
    std::condition_variable end_cv;     // hs_wait's: the search over
    std::deque<std::pair<std::shared_ptr<Batch>, int>> queue;
    std::vector<std::pair<std::shared_ptr<Batch>, int>> tickets_;
    std::vector<uint32_t> free_tickets;
    uint64_t device_nodes = 0;          // every job result delivered, used or not
    uint64_t launched_jobs = 0;
    std::vector<int64_t> stops;         // launch << 32 | index of cancelled jobs in flight

    // results of the main search
    std::mutex info_m;
    std::vector<Info> infos;            // not yet polled
    int result_depth = 0, result_score = 0, result_bound = EXACT;
    std::vector<uint32_t> result_pv;
    bool aborted = false;

    std::unique_ptr<Worker> main;
    // The main search's thread: made at the first search and kept, woken for each (a thread
    // made per search cost more than a short search's work). Under m: go (a search to run),
    // searching (one runs or is about to), quit (hs_free).
    std::thread thread;
    std::condition_variable go_cv;
    bool go = false, searching = false, quit = false;

    // native launches (hostlaunch.hpp; hs_set_launcher), else none: the Python pump takes jobs
    hostlaunch::Launcher* launcher = nullptr;
    std::thread pump;
    std::atomic<bool> pumping{false};
    std::atomic<uint64_t> completions{0};  // launches ended (the device's callbacks)
    uint64_t launches = 0, launch_ns = 0;   // under m
    uint64_t early_jobs = 0;    // under m: jobs handed back before their launch ended
    int poll_us = 500;      // the pump's look at launches in flight when no callback has come

    void start() {
        stop = false;
        aborted = false;
        error.clear();
        result_depth = 0;
        result_score = 0;
        result_pv.clear();
        infos.clear();
        device_nodes = launched_jobs = 0;
        host_nodes = accel_nodes = jobs = splits = 0;
        seldepth = 0;
        started = Clock::now();
        if (opt.tt) table.new_search();
        launches = launch_ns = early_jobs = 0;
        main.reset(new Worker(*this));
        running = 1;
        inline_launches = launcher && launcher->synchronous();
        if (inline_launches) {
            // no pump: the searching threads run their jobs; this thread gives up the jobs
            // running at a stop or the deadline
            std::vector<int> order = launcher->inline_order();
            inline_free.assign(order.rbegin(), order.rend());
            start_pump(&Search::run_watch);
        } else if (launcher && !launcher->instant()) {
            launcher->set_on_complete([this] {
                {
                    std::lock_guard<std::mutex> lock(m);
                    completions++;
                }
                queue_cv.notify_all();
            });
            start_pump(&Search::run_pump);
        }
        {
            std::lock_guard<std::mutex> lock(m);
            go = searching = true;
        }
        if (thread.joinable())
            go_cv.notify_one();
        else
            thread = std::thread([this] { serve(); });
    }

    // The main search's thread: each search it is woken for, until hs_free.
    void serve() {
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(m);
                go_cv.wait(lock, [this] { return go || quit; });
                if (quit) return;
                go = false;
            }
            main->run();
            running = 0;
            std::lock_guard<std::mutex> lock(m);
            searching = false;
            queue_cv.notify_all();
            end_cv.notify_all();
        }
    }

    // Wait for the search (its main thread back to waiting, the pump ended).
    void join() {
        {
            std::unique_lock<std::mutex> lock(m);
            end_cv.wait(lock, [this] { return !searching; });
        }
        if (pump.joinable()) pump.join();
    }

    ~Search() {
        stop = true;
        join();
        // a launch's callback may come late: it must not reach this search once it is gone
        if (launcher) launcher->set_on_complete(nullptr);
        {
            std::lock_guard<std::mutex> lock(m);
            quit = true;
        }
        go_cv.notify_one();
        if (thread.joinable()) thread.join();
    }

    void run_pump();
    void run_watch();
    // The pump's thread (run_pump, or run_watch for inline launches), `pumping` until it ends.
    void start_pump(void (Search::*body)()) {
        pumping = true;
        pump = std::thread([this, body] {
            (this->*body)();
            pumping = false;
            std::lock_guard<std::mutex> lock(m);
            end_cv.notify_all();
        });
    }

    // inline launches (the launcher's devices are synchronous; set at each start): the slots
    // no searching thread holds (the next to take last)
    bool inline_launches = false;
    std::vector<int> inline_free;
    int take_inline_slot() {
        std::lock_guard<std::mutex> lock(m);
        if (inline_free.empty()) return -1;
        int slot = inline_free.back();
        inline_free.pop_back();
        return slot;
    }
    void give_inline_slot(int slot) {
        std::lock_guard<std::mutex> lock(m);
        inline_free.push_back(slot);
    }

    // Queued jobs (cancelled batches' dropped) into the arrays, up to max, for launch number
    // `launch`; the caller holds m. black may be null.
    int take_locked(uint64_t* positions, int32_t* params, uint32_t* tickets, uint8_t* black,
                    int max, int launch) {
        int n = 0;
        while (n < max && live_locked()) {
            auto entry = std::move(queue.front());
            queue.pop_front();
            Batch& b = *entry.first;
            int i = entry.second;
            b.placed[i] = (int64_t)launch << 32 | n;
            std::memcpy(positions + n * POSITION_WORDS, &b.words[i * POSITION_WORDS], POSITION_WORDS * 8);
            std::memcpy(params + n * 4, &b.params[i * 4], 16);
            if (black) black[n] = b.black[i];
            uint32_t ticket;
            if (!free_tickets.empty()) {
                ticket = free_tickets.back();
                free_tickets.pop_back();
                tickets_[ticket] = std::move(entry);
            } else {
                ticket = (uint32_t)tickets_.size();
                tickets_.push_back(std::move(entry));
            }
            tickets[n++] = ticket;
        }
        launched_jobs += n;
        return n;
    }

    bool live_locked() {
        while (!queue.empty() && queue.front().first->cancelled) queue.pop_front();
        return !queue.empty();
    }

    // The results of taken jobs (packed best moves as the kernel wrote them); the caller holds m.
    // `skip`: jobs already handed back (finished early), or null.
    void complete_locked(const uint32_t* tickets, const int32_t* scores, const uint32_t* moves,
                         const uint64_t* nodes, int n, const char* skip = nullptr) {
        for (int k = 0; k < n; k++) {
            if (skip && skip[k]) continue;
            auto entry = std::move(tickets_[tickets[k]]);
            free_tickets.push_back(tickets[k]);
            device_nodes += nodes[k];
            Batch& b = *entry.first;
            int i = entry.second;
            if (b.cancelled) continue;
            b.score[i] = scores[k];
            b.move[i] = unpack_move(moves[k], b.black[i]);
            b.nodes[i] = nodes[k];
            __atomic_store_n(&b.ready[i], 1, __ATOMIC_RELEASE);    // read without m by wait()
            b.cv.notify_all();
        }
    }

    uint64_t group(int which) const {   // 0 host nodes, 1 accelerator nodes, 2 jobs
        return (which == 0 ? host_nodes : which == 1 ? accel_nodes : jobs).load(std::memory_order_relaxed);
    }

    void reach(int ply) {
        int seen = seldepth.load(std::memory_order_relaxed);
        while (ply > seen && !seldepth.compare_exchange_weak(seen, ply)) {}
    }

    double seconds() const {
        return std::chrono::duration<double>(Clock::now() - started).count();
    }

    std::shared_ptr<Batch> submit(std::shared_ptr<Batch> batch) {
        if (inline_launches) {     // run when waited for (Worker::wait), chained
            batch->lazy = true;
            for (int i = 0; i < batch->n; i++)
                if (batch->breaks.empty() || !batch->breaks[i]) batch->params[i * 4 + 3] |= C.job_chain;
            return batch;
        }
        if (launcher && launcher->instant()) {     // answered here and now: no queue, no pump
            thread_local std::vector<uint32_t> packed;
            packed.resize(batch->n);
            launcher->run_instant(batch->words.data(), batch->n, batch->score.data(),
                                  packed.data(), batch->nodes.data());
            uint64_t total = 0;
            for (int i = 0; i < batch->n; i++) {
                batch->move[i] = unpack_move(packed[i], batch->black[i]);
                batch->ready[i] = 1;
                total += batch->nodes[i];
            }
            std::lock_guard<std::mutex> lock(m);
            device_nodes += total;
            launched_jobs += batch->n;
            launches++;
            return batch;
        }
        std::lock_guard<std::mutex> lock(m);
        for (int i = 0; i < batch->n; i++) queue.emplace_back(batch, i);
        queue_cv.notify_one();
        return batch;
    }

    void fail(const char* message) {
        {
            std::lock_guard<std::mutex> lock(m);
            if (error.empty()) error = message;
        }
        stop = true;
    }

    void post_info(Info info) {     // the counts as they stand when the iteration ends
        info.host_nodes = group(0);
        info.accelerator_nodes = group(1);
        info.jobs = group(2);
        info.hashfull = opt.tt ? table.hashfull() : 0;
        info.seconds = seconds();
        {
            std::lock_guard<std::mutex> lock(m);
            info.speculative_nodes = device_nodes > info.accelerator_nodes
                ? device_nodes - info.accelerator_nodes : 0;
        }
        std::lock_guard<std::mutex> lock(info_m);
        infos.push_back(info);
    }
};

// Inline launches: give up the jobs running when the search is stopped or its deadline passes.
void Search::run_watch() {
    std::unique_lock<std::mutex> lock(m);
    while (running.load()) {
        bool over = stop.load() || (has_deadline && Clock::now() >= deadline);
        if (over) launcher->stop_inline();
        queue_cv.wait_for(lock, std::chrono::microseconds(over ? 200 : 1000));
    }
}

// The native pump (a launcher is set): the Python pump's loop (hostsearch.py) without Python.
// It fills a free slot with every queued job, starts it, sets the stop flags of jobs whose
// batch was cancelled, hands finished launches' results back, and once the search's threads
// have ended, stops and waits out what is still in flight.
void Search::run_pump() {
    hostlaunch::Launcher& L = *launcher;
    struct Flight {
        int slot;
        uint32_t number;
        std::vector<uint32_t> tickets;
        Clock::time_point started;
        std::vector<char> early;    // jobs handed back before the launch ended
    };
    std::vector<Flight> flights;
    std::vector<char> busy(L.slots(), 0);
    std::vector<uint32_t> taken(L.capacity());
    std::vector<int> finished(L.capacity());
    std::vector<int64_t> stopping;
    std::string error;
    uint32_t number = 0;
    uint64_t seen = completions.load();
    for (;;) {
        int slot = L.free_slot(busy), n = 0;
        bool ended;
        {
            std::unique_lock<std::mutex> lock(m);
            auto ready = [&] {
                return (slot >= 0 && live_locked()) || !running.load() ||
                       completions.load() != seen || !stops.empty();
            };
            if (!ready())   // the timeout only bounds a completion whose callback never comes
                queue_cv.wait_for(lock, std::chrono::microseconds(flights.empty() ? 10000 : poll_us),
                                  ready);
            seen = completions.load();
            ended = !running.load();
            if (!ended && slot >= 0) {
                hostlaunch::Inputs in = L.inputs(slot);
                n = take_locked(in.positions, in.params, taken.data(), nullptr, L.capacity(),
                                (int)number);
            }
            stopping.swap(stops);
            stops.clear();
        }
        if (ended) {        // nothing in flight is needed any more
            for (auto& f : flights) L.stop(f.slot, 0, (int)f.tickets.size());
            for (auto& f : flights) L.release(f.slot);
            return;
        }
        if (n > 0) {
            if (L.start(slot, n, error)) {
                busy[slot] = 1;
                flights.push_back({slot, number, std::vector<uint32_t>(taken.begin(), taken.begin() + n),
                                   Clock::now(), std::vector<char>(n, 0)});
                std::lock_guard<std::mutex> lock(m);
                launches++;
            } else {
                L.release(slot);
                fail(error.c_str());    // the search's threads stop; their jobs are not waited for
            }
            number++;
        }
        if (!stopping.empty()) {    // runs of neighbours in one launch, one stop each
            std::sort(stopping.begin(), stopping.end());
            for (size_t a = 0; a < stopping.size();) {
                size_t b = a + 1;
                while (b < stopping.size() && stopping[b] == stopping[b - 1] + 1) b++;
                uint32_t launch = (uint32_t)(stopping[a] >> 32);
                int first = (int)(stopping[a] & 0xFFFFFFFF);
                for (auto& f : flights)
                    if (f.number == launch) L.stop(f.slot, first, first + (int)(b - a));
                a = b;
            }
        }
        for (size_t k = 0; k < flights.size();) {
            Flight& f = flights[k];
            int status = L.poll(f.slot, error);
            if (status == 0) {
                // a job that has finished is handed back now: its result may end its batch
                // (a cutoff) and stop the jobs behind it before they are searched
                int count = L.finished_early(f.slot, finished.data(), (int)finished.size());
                if (count > 0) {
                    hostlaunch::Outputs out = L.outputs(f.slot);
                    std::lock_guard<std::mutex> lock(m);
                    early_jobs += count;
                    for (int c = 0; c < count; c++) {
                        int i = finished[c];
                        f.early[i] = 1;
                        complete_locked(&f.tickets[i], out.scores + i, out.moves + i,
                                        out.nodes + i, 1);
                    }
                }
                k++;
                continue;
            }
            if (status > 0) {
                hostlaunch::Outputs out = L.outputs(f.slot);
                std::lock_guard<std::mutex> lock(m);
                complete_locked(f.tickets.data(), out.scores, out.moves, out.nodes,
                                (int)f.tickets.size(), f.early.data());
                launch_ns += (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
                    Clock::now() - f.started).count();
            } else {
                fail(error.c_str());
            }
            L.release(f.slot);
            busy[f.slot] = 0;
            flights.erase(flights.begin() + k);
        }
    }
}

void Worker::check() {
    Search& s = s_;
    if (s.stop.load(std::memory_order_relaxed)) throw Aborted();
    if (split_ && below_cut()) throw Cut();
    if (s.has_deadline && Clock::now() >= s.deadline) {
        s.stop = true;
        throw Aborted();
    }
    if (s.node_limit && s.group(0) + s.group(1) >= s.node_limit) {
        s.stop = true;
        throw Aborted();
    }
}

void Worker::run() {
    stack_[0] = s_.root;
    keys_ = s_.history;
    keys_.push_back(s_.root.key);
    killers_.assign(C.host_max_ply, std::array<uint32_t, 2>{0, 0});
    history_.assign(2 * 64 * 64, 0);
    counters_.assign(2 * 64 * 64, 0);
    try {
        deepen();
    } catch (Aborted&) {
        s_.aborted = true;
    } catch (const std::exception& error) {     // out of memory, say: reported, not a crash
        s_.fail(error.what());
        s_.aborted = true;
    }
    if (s_.aborted && have_root_best_ && !root_best_.pv.empty()) {
        // a move this iteration proved better than the last iteration's
        s_.result_score = root_best_.score;
        s_.result_pv = root_best_.pv;
    }
}

void Worker::deepen() {
    Search& s = s_;
    int previous = 0;
    bool have_previous = false;
    int last = s.depth_limit ? s.depth_limit : 64;
    Clock::time_point soft = s.soft_deadline;
    uint32_t best = 0;
    int settled = 0;
    for (int depth = 1; depth <= last; depth++) {
        if (depth > 1 && s.has_soft && Clock::now() >= soft) break;
        Line pv;
        int bound = EXACT;
        int score = iteration(depth, have_previous ? previous : INT32_MIN, pv, bound);
        if (s.opt.time_stability && s.has_soft && !pv.empty()) {
            bool changed = best && pv[0] != best;
            settled = changed ? 0 : settled + 1;
            best = pv[0];
            int fall = have_previous ? previous - score : 0;
            soft = s.started + (s.soft_deadline - s.started) * soft_percent(changed, settled, fall) / 100;
        }
        previous = score;
        have_previous = true;
        s.result_score = score;
        s.result_depth = depth;
        if (!pv.empty()) s.result_pv = pv;
        Info info{};
        info.depth = depth;
        info.seldepth = std::max(s.seldepth.load(), depth);
        info.score = score;
        info.bound = EXACT;
        info.pv_length = (int)std::min<size_t>(pv.size(), MAX_LINE);
        std::copy(pv.begin(), pv.begin() + info.pv_length, info.pv);
        s.post_info(info);
        if (s.mate_limit && mate_moves(score) > 0 && mate_moves(score) <= s.mate_limit) break;
        if (!s.depth_limit && score >= mate_bound() && 2 * mate_moves(score) + 1 <= depth) break;
    }
}

int Worker::iteration(int depth, int previous, Line& pv, int& bound) {
    Search& s = s_;
    const Options& o = s.opt;
    iteration_depth_ = depth;
    int alpha = -C.inf, beta = C.inf, delta = 0;
    if (o.aspiration && depth >= 3 && previous != INT32_MIN && !is_mate(previous)) {
        delta = o.aspiration_delta;
        alpha = std::max(previous - delta, -C.inf);
        beta = std::min(previous + delta, C.inf);
    }
    have_root_best_ = false;
    for (;;) {
        root_alpha_ = alpha;
        pv.clear();
        int score = node(0, depth, alpha, beta, pv);
        if (delta && score <= alpha && alpha > -C.inf) bound = UPPER;
        else if (delta && score >= beta && beta < C.inf) bound = LOWER;
        else { bound = EXACT; return score; }
        {
            Info info{};
            info.depth = depth;
            info.seldepth = std::max(s.seldepth.load(), depth);
            info.score = score;
            info.bound = bound;
            info.pv_length = (int)std::min<size_t>(pv.size(), MAX_LINE);
            std::copy(pv.begin(), pv.begin() + info.pv_length, info.pv);
            s.post_info(info);
        }
        delta *= 2;
        if (delta > 8 * o.aspiration_delta) { alpha = -C.inf; beta = C.inf; }
        else if (bound == UPPER) alpha = std::max(score - delta, -C.inf);
        else beta = std::min(score + delta, C.inf);
    }
}

void Worker::push(int ply, uint32_t move) {
    Pos& c = stack_[ply + 1];
    make(stack_[ply], move, c);
    keys_.push_back(c.key);
    moved_[ply + 1] = move;
}

void Worker::push_null(int ply) {
    make_null(stack_[ply], stack_[ply + 1]);
    keys_.push_back(stack_[ply + 1].key);
    moved_[ply + 1] = 0;
}

// keys_[at] repeats an earlier position (an even number of plies back, within its `halfmoves`
// reversible plies) as a draw: one after the root (the search's own cycle), or one seen twice
// (a threefold repetition). A position seen once, before the root, is not a draw: the game
// goes on unless the opponent repeats it too, which the search sees a move later
// (search.py's _repeats; twofold_draws: it is a draw too).
bool Worker::repeats(int at, int halfmoves) const {
    uint64_t key = keys_[at];
    int root = (int)s_.history.size();      // keys_[root] is the root's
    int seen = 0;
    for (int back = 4; back <= std::min(halfmoves, at); back += 2) {
        if (keys_[at - back] != key) continue;
        if (at - back > root || s_.opt.twofold_draws || ++seen == 2) return true;
    }
    return false;
}

// The position just pushed (ply) is a draw: repetition, fifty moves, dead material.
bool Worker::drawn_here(int ply) const {
    const Pos& p = stack_[ply];
    int halfmoves = (int)p.halfmove;
    if (halfmoves >= 4 && repeats((int)keys_.size() - 1, halfmoves)) return true;
    return fifty_moves(p) || insufficient_material(p);
}

// A child that is a draw by repetition or the fifty-move rule (search.py's _child_is_draw).
bool Worker::child_is_draw(int ply, uint32_t move) {
    const Pos& p = stack_[ply];
    int halfmoves = (int)p.halfmove + 1;
    if (halfmoves < 4 || !s_.opt.draws || is_zeroing(p, move)) return false;
    push(ply, move);
    bool draw = repeats((int)keys_.size() - 1, halfmoves) || fifty_moves(stack_[ply + 1]);
    pop();
    return draw;
}

// The quiet move that last refuted the move that made this ply's position (0: none, at the root,
// after a null move, or with the option off).
uint32_t Worker::counter_move(int ply) const {
    if (!s_.opt.counter_moves || ply == 0 || !moved_[ply]) return 0;
    return counters_[stack_[ply].side * 4096 + (moved_[ply] & 4095)];
}

int Worker::order(int ply, uint32_t tt_move, uint32_t* out) {
    const Options& o = s_.opt;
    uint32_t k1 = 0, k2 = 0;
    if (o.killers && ply < C.host_max_ply) { k1 = killers_[ply][0]; k2 = killers_[ply][1]; }
    int n = ordered_moves(stack_[ply], tt_move, o.tt, k1, k2, out, o.bad_captures_last);
    if (ply == 0 && !s_.root_moves.empty()) {
        int kept = 0;
        for (int i = 0; i < n; i++)
            if (std::find(s_.root_moves.begin(), s_.root_moves.end(), out[i]) != s_.root_moves.end())
                out[kept++] = out[i];
        if (kept) n = kept;
    }
    if ((o.history || o.counter_moves) && ply < C.host_max_ply && n > 1) {
        const Pos& p = stack_[ply];
        int start = 1;      // the first quiet move after the first move, the captures, killers
        while (start < n && (is_killer(ply, out[start]) || (out[start] >> 12) || is_capture(p, out[start])))
            start++;
        int end = n;        // the quiet moves end where the losing captures begin
        if (o.bad_captures_last)
            while (end > start && is_capture(p, out[end - 1])) end--;
        uint32_t counter = counter_move(ply);
        if (counter) {      // the counter move first of the quiet moves, the others in order
            uint32_t* at = std::find(out + start, out + end, counter);
            if (at != out + end) {
                std::rotate(out + start, at, at + 1);
                start++;
            }
        }
        if (o.history) {    // the rest by their history, the most cutoffs first (stable)
            const int* h = &history_[p.side * 4096];
            std::stable_sort(out + start, out + end, [h](uint32_t a, uint32_t b) {
                return h[a & 4095] > h[b & 4095];
            });
        }
    }
    return n;
}

void Worker::remember(int ply, uint32_t move, int depth) {
    const Pos& p = stack_[ply];
    if (!move || ply >= C.host_max_ply || (move >> 12) || is_capture(p, move)) return;
    const Options& o = s_.opt;
    if (o.counter_moves && ply > 0 && moved_[ply])
        counters_[p.side * 4096 + (moved_[ply] & 4095)] = move;
    if (o.history) {
        int at = p.side * 4096 + (move & 4095);
        history_[at] += depth * depth;
        if (history_[at] > 1 << 24)
            for (int& v : history_) v /= 2;
    }
    if (!o.killers) return;
    auto& k = killers_[ply];
    if (k[0] == move) return;
    k[1] = k[0];
    k[0] = move;
}

void Worker::note_root(int ply, int score, uint32_t move, const Line& pv) {
    if (ply == 0 && score > root_alpha_) {
        have_root_best_ = true;
        root_best_ = {score, move, pv};
    }
}

// A child's score against the best so far: a better one becomes the best (its move, then the
// child's PV) and may raise alpha; true when it fails high (beta reached).
bool Worker::better(int ply, Scored& best, int& alpha, int beta, int score, uint32_t move,
                    const Line& tail) {
    if (score <= best.score) return false;
    best.score = score;
    best.move = move;
    best.pv.assign(1, move);
    best.pv.insert(best.pv.end(), tail.begin(), tail.end());
    note_root(ply, score, move, best.pv);
    if (score <= alpha) return false;
    alpha = score;
    return score >= beta;
}

int Worker::node(int ply, int depth, int alpha, int beta, Line& pv, bool null_ok) {
    s_.host_nodes.fetch_add(1, std::memory_order_relaxed);
    check();
    s_.reach(ply);
    const Options& o = s_.opt;
    pv.clear();
    if (ply && o.mate_distance) {
        alpha = std::max(alpha, -(C.mate - ply));
        beta = std::min(beta, C.mate - ply - 1);
        if (alpha >= beta) return alpha;
    }
    uint64_t key = keys_.back();
    uint32_t tt_move = 0;
    TTHit hit{};
    bool have_hit = false;
    if (o.tt) {
        if ((have_hit = s_.table.probe(key, hit))) {
            tt_move = hit.move;
            if (ply > 0 && hit.depth >= depth) {
                int score = from_tt(hit.score, ply);
                if (hit.bound == EXACT || (hit.bound == LOWER && score >= beta)
                        || (hit.bound == UPPER && score <= alpha)) {
                    if (tt_move) pv.push_back(tt_move);
                    return score;
                }
            }
        }
    }
    int alpha0 = alpha;
    bool reducible = false;
    Prune prune;
    if (ply && (o.null_move || o.reductions || o.job_reductions || o.futility
                || o.check_extension || o.mate_distance || o.iir || o.history
                || o.futility_pruning || o.late_move_pruning || o.counter_moves)) {
        int cut;
        if (selective(ply, depth, alpha, beta, tt_move, null_ok, cut, reducible, prune)) return cut;
    }
    uint32_t moves[MAX_MOVES];
    int n = order(ply, tt_move, moves);
    if (!n) return in_check(stack_[ply]) ? -(C.mate - ply) : 0;
    // pruned moves become 0 in `moves`, before any job is made (search.py's _prune)
    bool futility_pruned = prune.active() && prune_moves(ply, moves, n, prune);
    int extension = 0;
    if (ply && o.singular_extension && have_hit && moves[0] == tt_move
            && depth / 2 - 1 > o.hardware_plies) {
        extension = singular(ply, depth, beta, moves, n, reducible, hit);
        if (extension < 0) return beta;     // multi-cut (no table entry, as a pruning cut)
    }
    Scored best = depth - 1 <= o.hardware_plies
        ? frontier(ply, depth, alpha, beta, moves, n, reducible)
        : expand(ply, depth, alpha, beta, moves, n, reducible, extension);
    // fail-soft past futility-pruned moves: each scores at most the static score plus the
    // margin (at most alpha: the node still fails low)
    if (futility_pruned && best.score < prune.value) best.score = prune.value;
    if (best.score >= beta) remember(ply, best.move, depth);
    if (o.tt) {
        int bound = best.score >= beta ? LOWER : best.score <= alpha0 ? UPPER : EXACT;
        s_.table.store(key, depth, bound, to_tt(best.score, ply), bound != UPPER ? best.move : 0);
    }
    pv = std::move(best.pv);
    return best.score;
}

// The singular extension's test (search.py's _singular) at a node whose first move is its table
// entry's: 1 when no other move, searched depth / 2 plies deep, reaches the entry's score less
// singular_margin a ply of depth; -1 when that bound is at or above beta and one reaches it (the
// node fails high: multi-cut); else 0.
int Worker::singular(int ply, int depth, int beta, const uint32_t* moves, int n, bool reducible,
                     const TTHit& hit) {
    if (hit.bound == UPPER || hit.depth < depth - C.singular_table_plies
            || ply >= 2 * iteration_depth_)
        return 0;
    int score = from_tt(hit.score, ply);
    if (!(-mate_bound() < score && score < mate_bound())) return 0;
    int bound = score - C.singular_margin * depth;
    Scored others = expand(ply, depth / 2, bound - 1, bound, moves + 1, n - 1, reducible);
    if (others.score < bound) return 1;
    return bound >= beta ? -1 : 0;
}

// The static score the selective steps read: the search's evaluation, scaled by the fifty-move
// counter as the jobs' scores are.
int Worker::host_static(const Pos& p) const {
    int stat = cached_static_eval(p, s_.opt.evaluation);
    return s_.opt.fifty_move_scaling ? fifty_scaled(stat, (int)p.halfmove) : stat;
}

bool Worker::selective(int ply, int& depth, int alpha, int beta, uint32_t tt_move, bool null_ok,
                       int& cut, bool& reducible, Prune& prune) {
    const Options& o = s_.opt;
    const Pos& p = stack_[ply];
    reducible = false;
    if (in_check(p)) {
        if (o.check_extension && ply < 2 * iteration_depth_) depth += 1;
        return false;
    }
    bool null_window = alpha + 1 == beta && -mate_bound() < beta && beta < mate_bound();
    int stat = 0;
    bool have_stat = false;
    if (null_window) {
        int near = o.hardware_plies + C.futility_host_plies;
        int most = o.deep_futility ? std::max(near, C.futility_deep_depth) : near;
        bool futile_depth = o.futility && depth <= most;
        bool null_depth = o.null_move && null_ok && depth >= o.null_move_depth;
        if (futile_depth || null_depth) {
            stat = host_static(p);
            have_stat = true;
            if (futile_depth && stat - C.futility_margin * depth >= beta) {
                cut = stat;
                return true;
            }
            if (null_depth && stat >= beta && has_pieces(p)) {
                int score = null_search(ply, depth, beta, stat);
                if (score >= beta) {
                    cut = score >= mate_bound() ? beta : score;
                    return true;
                }
            }
        }
    }
    if (o.iir && !tt_move && depth >= o.hardware_plies + 4) depth -= 1;
    if (null_window && (o.futility_pruning || o.late_move_pruning)) {
        int above = depth - o.hardware_plies;   // plies above the frontier, 1 at its parents
        if (o.late_move_pruning && above <= C.late_move_plies)
            prune.late = C.late_move_base + C.late_move_factor * above * above;
        if (o.futility_pruning && above <= C.futility_pruning_plies) {
            if (!have_stat) stat = host_static(p);
            int value = stat + C.futility_pruning_base + C.futility_pruning_step * above;
            if (value <= alpha) {
                prune.futile = true;
                prune.value = value;
            }
        }
    }
    reducible = true;
    return false;
}

// Forward pruning of a node's moves in order (search.py's _prune): a quiet move after the first
// (not the hash move), not a killer, giving no check, becomes 0 where the node is futile or
// after the first `late` quiet moves. True when futility pruned a move.
bool Worker::prune_moves(int ply, uint32_t* moves, int n, const Prune& prune) {
    const Pos& p = stack_[ply];
    int quiets = 0;
    bool pruned = false;
    for (int i = 0; i < n; i++) {
        uint32_t move = moves[i];
        if ((move >> 12) || is_capture(p, move)) continue;
        if (i && (prune.futile || (prune.late >= 0 && quiets >= prune.late))
                && !is_killer(ply, move) && !gives_check(p, move)) {
            moves[i] = 0;
            if (prune.futile) pruned = true;
        }
        quiets++;
    }
    return pruned;
}

int Worker::null_search(int ply, int depth, int beta, int stat) {
    int reduced = depth - 4 - depth / 6;
    if (s_.opt.null_move_eval)  // stat >= beta here: the division floors as Python's
        reduced -= std::min((stat - beta) / C.null_eval_step, C.null_eval_most);
    reduced = std::max(reduced, 0);
    int child_ply = ply + 1;
    push_null(ply);
    int score;
    try {
        if (reduced > s_.opt.hardware_plies) {
            Line tail;
            score = -node(child_ply, reduced, -beta, -beta + 1, tail, false);
        } else {
            Line tail;
            score = lone_job(child_ply, reduced, stack_[child_ply], -beta, -beta + 1, tail);
        }
    } catch (...) {
        pop();
        throw;
    }
    pop();
    return score;
}

int Worker::reduction(int depth, int index, uint32_t move, int ply) {
    if (index < C.lmr_first || (move >> 12) || is_killer(ply, move)) return 0;
    const Pos& p = stack_[ply];
    if (is_capture(p, move) || gives_check(p, move)) return 0;
    return std::max(1, (int)(0.75 + std::log((double)depth) * std::log((double)index) / 2.25));
}

// One child of a host node whose children are host nodes, searched with PVS (the eldest with
// the whole window, the others first with a null window at alpha) after its late-move
// reduction, if any: its score from the node's view and its PV.
int Worker::younger(int ply, int depth, int index, uint32_t move, int alpha, int beta,
                    bool reducible, Line& tail) {
    const Options& o = s_.opt;
    int least = std::max(1, o.hardware_plies);
    int red = 0;
    if (reducible && o.reductions && index >= C.lmr_first && depth - 1 > least) {
        red = reduction(depth, index, move, ply);
        if (red && o.non_pv_reductions && alpha + 1 == beta) red += 1;
        red = std::min(red, depth - 1 - least);
    }
    push(ply, move);
    int score;
    try {
        if (o.draws && drawn_here(ply + 1)) {
            s_.host_nodes.fetch_add(1, std::memory_order_relaxed);
            score = 0;
            tail.clear();
        } else if (red) {
            score = -node(ply + 1, depth - 1 - red, -alpha - 1, -alpha, tail);
            if (score > alpha) {
                score = -node(ply + 1, depth - 1, -alpha - 1, -alpha, tail);
                if (alpha < score && score < beta)
                    score = -node(ply + 1, depth - 1, -beta, -alpha, tail);
            }
        } else if (index == 0 || !o.pvs) {
            score = -node(ply + 1, depth - 1, -beta, -alpha, tail);
        } else {
            score = -node(ply + 1, depth - 1, -alpha - 1, -alpha, tail);
            if (alpha < score && score < beta)
                score = -node(ply + 1, depth - 1, -beta, -alpha, tail);
        }
    } catch (...) {
        pop();
        throw;
    }
    pop();
    return score;
}

Worker::~Worker() {
    if (inline_slot_ >= 0) s_.give_inline_slot(inline_slot_);
}

// An inline launch (a synchronous device: Search::submit): job i of the batch and the chained
// jobs after it, run now in this thread on its own slot, one after another. The kernel ends the
// launch after the first job that does not fail high (JOB_CHAIN), the one the search must see
// before it decides on the next, so the jobs that run are those it would run one at a time
// (a frontier parent whose moves all fail high, an ALL node, is one launch, not one a move).
void Worker::run_inline(Batch& batch, int i) {
    check();
    if (inline_slot_ < 0) inline_slot_ = s_.take_inline_slot();
    if (inline_slot_ < 0) {
        s_.fail("more searching threads than the device's slots for inline launches");
        throw Aborted();
    }
    int end = i + 1;        // through the first job without the chain bit, at most a launch's worth
    int most = std::max(1, s_.launcher->capacity());
    while (end < batch.n && end - i < most && (batch.params[(end - 1) * 4 + 3] & C.job_chain)) end++;
    int n = end - i;
    thread_local std::vector<int32_t> scores;
    thread_local std::vector<uint32_t> packed;
    thread_local std::vector<uint64_t> nodes;
    scores.resize(n);
    packed.resize(n);
    nodes.resize(n);
    std::string error;
    if (!s_.launcher->run_inline(inline_slot_, &batch.words[i * POSITION_WORDS], &batch.params[i * 4],
                                 n, scores.data(), packed.data(), nodes.data(), error)) {
        s_.fail(error.c_str());
        throw Aborted();
    }
    check();    // a job given up for a stop or the deadline has no result
    uint64_t total = 0;
    int ran = 0;
    for (int k = 0; k < n && nodes[k]; k++, ran++) {    // a job run has counted its root
        batch.score[i + k] = scores[k];
        batch.move[i + k] = unpack_move(packed[k], batch.black[i + k]);
        batch.nodes[i + k] = nodes[k];
        total += nodes[k];
        __atomic_store_n(&batch.ready[i + k], 1, __ATOMIC_RELEASE);
    }
    if (!ran) {
        s_.fail("an inline launch ran none of its jobs");
        throw Aborted();
    }
    std::lock_guard<std::mutex> lock(s_.m);
    s_.device_nodes += total;
    s_.launched_jobs += ran;
    s_.launches++;
}

Worker::Worker(const Worker& parent, int ply, Split* split)
    : s_(parent.s_), split_(split), owner_(parent.owner_), keys_(parent.keys_),
      killers_(parent.killers_), history_(parent.history_), counters_(parent.counters_),
      iteration_depth_(parent.iteration_depth_), root_alpha_(parent.root_alpha_) {
    std::copy(parent.stack_, parent.stack_ + ply + 1, stack_);
    std::copy(parent.moved_, parent.moved_ + ply + 1, moved_);
}

// Children of a host node searched one after another; once the eldest is searched, the
// younger ones are shared with helper threads while the thread budget allows (YBWC).
Scored Worker::expand(int ply, int depth, int alpha, int beta, const uint32_t* moves, int n,
                      bool reducible, int extension) {
    const Options& o = s_.opt;
    Scored best{-C.inf, 0, {}};
    Line tail;
    for (int index = 0; index < n; index++) {
        if (index == 1 && n > 2 && o.threads > 1
                && s_.helpers.load(std::memory_order_relaxed) < o.threads - 1)
            return split(ply, depth, alpha, beta, moves, n, reducible, std::move(best));
        uint32_t move = moves[index];
        if (!move) continue;        // pruned
        int score = younger(ply, index ? depth : depth + extension, index, move, alpha, beta,
                            reducible, tail);
        if (better(ply, best, alpha, beta, score, move, tail)) break;
    }
    return best;
}

// The younger children of a node (moves[1..n), the eldest's result in `best`) shared among
// this thread and helpers started for them, each taking the next child until none is left or
// one fails high (the split's cut stops the others where they stand).
Scored Worker::split(int ply, int depth, int alpha, int beta, const uint32_t* moves, int n,
                     bool reducible, Scored best) {
    const Options& o = s_.opt;
    Split sp;
    sp.parent = split_;
    sp.moves.assign(moves + 1, moves + n);
    sp.ply = ply;
    sp.depth = depth;
    sp.alpha = alpha;
    sp.beta = beta;
    sp.reducible = reducible;
    sp.best = std::move(best);
    s_.splits.fetch_add(1, std::memory_order_relaxed);
    // helpers are made here, from this thread's state at the node, before it moves on
    std::vector<std::unique_ptr<Worker>> helpers;
    for (int k = 0; k < n - 2; k++) {
        if (s_.helpers.fetch_add(1) >= o.threads - 1) {
            s_.helpers.fetch_sub(1);
            break;
        }
        helpers.emplace_back(new Worker(*this, ply, &sp));
    }
    std::vector<std::thread> threads;
    for (auto& helper : helpers) {
        try {
            threads.emplace_back([this, &helper, &sp] {
                helper->help(sp);
                s_.helpers.fetch_sub(1);
            });
        } catch (const std::system_error&) {    // no thread to be had: this one does the work
            s_.helpers.fetch_sub(1);
        }
    }
    Split* outer = split_;
    split_ = &sp;
    auto finish = [&] {
        split_ = outer;
        for (auto& t : threads) t.join();
    };
    try {
        share(sp);
    } catch (...) {
        sp.cut = true;          // the helpers stop too
        finish();
        throw;
    }
    finish();
    // a helper's child given up for a stop or an outer cutoff: the result is not whole
    if (s_.stop.load()) throw Aborted();
    if (split_ && below_cut()) throw Cut();
    return std::move(sp.best);
}

void Worker::help(Split& sp) {
    try {
        share(sp);
    } catch (Aborted&) {
    } catch (Cut&) {
    }
}

void Worker::share(Split& sp) {
    Line tail;
    for (;;) {
        int index, alpha;
        uint32_t move;
        {
            std::lock_guard<std::mutex> lock(sp.m);
            if (sp.cut.load() || sp.next >= sp.moves.size()) return;
            index = (int)sp.next + 1;
            move = sp.moves[sp.next++];
            alpha = sp.alpha;
        }
        if (!move) continue;        // pruned
        int score;
        try {
            score = younger(sp.ply, sp.depth, index, move, alpha, sp.beta, sp.reducible, tail);
        } catch (Cut&) {
            if (sp.cut.load()) return;      // this split's cutoff; an outer one goes on up
            throw;
        }
        std::lock_guard<std::mutex> lock(sp.m);
        if (owner_->better(sp.ply, sp.best, sp.alpha, sp.beta, score, move, tail)) {
            sp.cut = true;
            return;
        }
    }
}

int Worker::wait(std::shared_ptr<Batch>& batch, int i) {
    // answered already (always, with the instant launcher): no lock
    if (__atomic_load_n(&batch->ready[i], __ATOMIC_ACQUIRE)) return i;
    if (batch->lazy) {
        run_inline(*batch, i);
        return i;
    }
    std::unique_lock<std::mutex> lock(s_.m);
    while (!batch->ready[i]) {
        lock.unlock();
        check();
        lock.lock();
        if (batch->ready[i]) break;
        // woken by hs_complete; the timeout only bounds how late a stop or deadline is seen
        batch->cv.wait_for(lock, std::chrono::milliseconds(10));
    }
    return i;
}

// Give up what is left of a batch: queued jobs are dropped, jobs in flight are told to stop.
void Worker::cancel(std::shared_ptr<Batch>& batch) {
    std::lock_guard<std::mutex> lock(s_.m);
    batch->cancelled = true;
    for (int i = 0; i < batch->n; i++)
        if (!batch->ready[i] && batch->placed[i] >= 0) s_.stops.push_back(batch->placed[i]);
}

// The job-frame window (a, b) of the child-frame window (alpha, beta) of a job rooted at
// child_ply, whose position's fifty-move counter is `halfmove`.
void Worker::window(int alpha, int beta, int child_ply, int halfmove, int& a, int& b) const {
    if (s_.opt.fifty_move_scaling) fifty_window(alpha, beta, halfmove);
    job_window(alpha, beta, child_ply, a, b);
}

// Account for a used job result; its parent-frame score and the PV tail it gives.
int Worker::take(const Batch& batch, int i, int child_ply, int job_depth, int halfmove,
                 Line& tail) {
    s_.accel_nodes.fetch_add(batch.nodes[i], std::memory_order_relaxed);
    s_.jobs.fetch_add(1, std::memory_order_relaxed);
    tail.clear();
    if (batch.move[i]) tail.push_back(batch.move[i]);
    int reach = child_ply + std::max(job_depth, (int)tail.size());
    s_.reach(reach);
    int score = from_job(batch.score[i], child_ply);
    return -(s_.opt.fifty_move_scaling ? fifty_scaled(score, halfmove) : score);
}

// One job alone, with the child-frame window (alpha, beta): its parent-frame score.
int Worker::lone_job(int child_ply, int job_depth, const Pos& child, int alpha, int beta,
                     Line& tail) {
    int a, b;
    window(alpha, beta, child_ply, (int)child.halfmove, a, b);
    auto batch = std::make_shared<Batch>(1);
    pack(child, batch->words.data());
    batch->params[0] = job_depth;
    batch->params[1] = a;
    batch->params[2] = b;
    batch->black[0] = child.side;
    s_.submit(batch);
    try {
        wait(batch, 0);
    } catch (...) {
        cancel(batch);
        throw;
    }
    return take(*batch, 0, child_ply, job_depth, (int)child.halfmove, tail);
}

int Worker::single(int ply, int job_depth, uint32_t move, int alpha, int beta, Line& tail) {
    Pos child;
    make_board(stack_[ply], move, child);
    return lone_job(ply + 1, job_depth, child, -beta, -alpha, tail);
}

Scored Worker::frontier(int ply, int depth, int alpha, int beta, uint32_t* moves, int n,
                                bool reducible) {
    const Options& o = s_.opt;
    int job_depth = depth - 1;
    Scored nothing{-C.inf, 0, {}};
    // a null window: the eldest cannot narrow it, so every job may go out at once; inline
    // launches run them in order and end at the first that does not fail high, so nothing
    // runs that one job at a time would not, in one launch where that took two
    if (o.parallel && (o.speculate || s_.inline_launches) && alpha + 1 >= beta)
        return brothers(ply, job_depth, alpha, beta, moves, n, nothing,
                        reducible && o.job_reductions ? 0 : -1);
    uint32_t first = moves[0];
    Line tail;
    int score;
    if (stack_[ply].halfmove >= 3 && child_is_draw(ply, first)) {
        s_.host_nodes.fetch_add(1, std::memory_order_relaxed);
        score = 0;
    } else {
        score = single(ply, job_depth, first, alpha, beta, tail);
    }
    Scored eldest{score, first, {first}};
    eldest.pv.insert(eldest.pv.end(), tail.begin(), tail.end());
    note_root(ply, score, first, eldest.pv);
    if (score > alpha) alpha = score;
    if (alpha >= beta || n == 1) return eldest;
    if (!o.parallel) {      // one job at a time, each with the window the ones before left
        Scored best = eldest;
        for (int k = 1; k < n; k++) {
            uint32_t move = moves[k];
            if (!move) continue;    // pruned
            if (child_is_draw(ply, move)) {
                s_.host_nodes.fetch_add(1, std::memory_order_relaxed);
                score = 0;
                tail.clear();
            } else {
                score = single(ply, job_depth, move, alpha, beta, tail);
            }
            if (better(ply, best, alpha, beta, score, move, tail)) break;
        }
        return best;
    }
    return brothers(ply, job_depth, alpha, beta, moves + 1, n - 1, eldest,
                    reducible && o.job_reductions ? 1 : -1);
}

// Every move's job in one batch with the window as it stands (a null window at alpha under
// PVS), taken in move order; a null-window result between alpha and beta is searched again
// alone with the window as it then stands (sequential PVS); a late quiet move's job a ply
// shallower (first_index >= 0) that fails high is searched again at full depth.
Scored Worker::brothers(int ply, int job_depth, int alpha, int beta, const uint32_t* moves,
                                int n, Scored best, int first_index) {
    const Options& o = s_.opt;
    int child_ply = ply + 1;
    bool null = o.pvs && alpha + 1 < beta;
    int win_alpha = alpha, win_beta = null ? alpha + 1 : beta;
    bool may_draw = o.draws && stack_[ply].halfmove + 1 >= 4;
    std::vector<int> slot(n);
    std::vector<int> depths, halfmoves;
    int live = 0;
    // slot -1: a draw (no job, scored 0); -2: pruned (no job, no score)
    for (int k = 0; k < n; k++)
        slot[k] = !moves[k] ? -2 : may_draw && child_is_draw(ply, moves[k]) ? -1 : live++;
    auto batch = std::make_shared<Batch>(live);
    depths.assign(live, job_depth);
    halfmoves.assign(live, 0);
    if (may_draw && s_.inline_launches) {   // an inline launch ends before a draw the host scores
        int last = -1;
        for (int k = 0; k < n; k++) {
            if (slot[k] >= 0) last = slot[k];
            else if (slot[k] == -1 && last >= 0) {
                if (batch->breaks.empty()) batch->breaks.assign(live, 0);
                batch->breaks[last] = 1;
            }
        }
    }
    bool reduce = first_index >= 0 && job_depth > 0 && !null && alpha + 1 == beta;
    for (int k = 0; k < n; k++) {
        int i = slot[k];
        if (i < 0) continue;
        Pos child;
        make_board(stack_[ply], moves[k], child);
        if (reduce) {
            int red = reduction(job_depth + 1, first_index + k, moves[k], ply);
            if (red) depths[i] = job_depth - std::min({red, o.job_reduction_plies, job_depth});
        }
        pack(child, &batch->words[i * POSITION_WORDS]);
        halfmoves[i] = (int)child.halfmove;
        int ja, jb;
        window(-win_beta, -win_alpha, child_ply, halfmoves[i], ja, jb);
        batch->params[i * 4] = depths[i];
        batch->params[i * 4 + 1] = ja;
        batch->params[i * 4 + 2] = jb;
        batch->black[i] = child.side;
    }
    if (live) s_.submit(batch);
    Line tail;
    try {
        for (int k = 0; k < n; k++) {
            uint32_t move = moves[k];
            int i = slot[k], score;
            if (i == -2) continue;
            if (i < 0) {
                s_.host_nodes.fetch_add(1, std::memory_order_relaxed);
                score = 0;
                tail.clear();
            } else {
                wait(batch, i);
                score = take(*batch, i, child_ply, depths[i], halfmoves[i], tail);
                bool reduced_high = depths[i] != job_depth && score > win_alpha;
                bool only_bound = null && win_alpha < score && score < beta;
                if (reduced_high || only_bound)
                    score = single(ply, job_depth, move, alpha, beta, tail);
            }
            if (better(ply, best, alpha, beta, score, move, tail)) break;
        }
    } catch (...) {
        cancel(batch);
        throw;
    }
    cancel(batch);      // what is still queued or running was speculation
    return best;
}

}  // namespace

// --- the interface hostsearch.py calls (ctypes, the GIL released) -------------------------------

extern "C" {

int hs_option_count() { return OPTION_COUNT; }

// The static evaluation of a position (hs_configure first), for tests/test_hosteval.py.
int hs_static_eval(const Pos* p, int evaluation) { return static_eval(*p, evaluation); }

// The terms evaluation's terms of a position, in contract/evalweights.py's TERMS order, each as
// (mg, eg) from white's view: out holds 2 * (hosteval::TERM_COUNT + 1) numbers. Returns the
// number of terms.
int hs_eval_terms(const Pos* p, int32_t* out) {
    int mg, eg, phase;
    material_pst(*p, EVAL_TERMS, mg, eg, phase);
    out[0] = mg;
    out[1] = eg;
    int terms[hosteval::TERM_COUNT][2];
    hosteval::term_values(*p, C.terms, terms);
    for (int t = 0; t < hosteval::TERM_COUNT; t++) {
        out[2 + 2 * t] = terms[t][0];
        out[3 + 2 * t] = terms[t][1];
    }
    return hosteval::TERM_COUNT + 1;
}
int hs_info_size() { return (int)sizeof(Info); }

// The contract's numbers and tables: ints in hostsearch.py's CONTRACT_FIELDS order.
int hs_configure(const int32_t* values, int n) {
    if (n != (int)(sizeof(Contract) / sizeof(int))) return (int)(sizeof(Contract) / sizeof(int));
    std::memcpy(&C, values, sizeof(Contract));
    make_code_tables();
    eval_cache.clear();
    return 0;
}

void* hs_new(int hash_mb) {
    auto* s = new Search();
    s->table.resize((size_t)std::max(1, hash_mb));
    return s;
}

void hs_free(void* h) {
    auto* s = static_cast<Search*>(h);
    s->stop = true;
    s->join();
    delete s;
}

void hs_resize(void* h, int hash_mb) { static_cast<Search*>(h)->table.resize((size_t)std::max(1, hash_mb)); }
void hs_clear(void* h) { static_cast<Search*>(h)->table.clear(); }
int hs_hashfull(void* h) { return static_cast<Search*>(h)->table.hashfull(); }

// The root (a hostboard Pos, complete with kings and key), the game's earlier keys (oldest
// first), the options and the root moves to search (n_moves 0: all).
void hs_set_root(void* h, const Pos* root, const uint64_t* keys, int n_keys, const int32_t* options,
                 const uint32_t* moves, int n_moves) {
    auto* s = static_cast<Search*>(h);
    s->root = *root;
    s->history.assign(keys, keys + n_keys);
    std::memcpy(&s->opt, options, sizeof(Options));
    s->root_moves.assign(moves, moves + n_moves);
}

// Start the search's threads; limits: depth (0 none), nodes (0 none), mate in moves (0 none),
// the deadline and the soft deadline in seconds from now (< 0: none).
void hs_start(void* h, int depth, uint64_t nodes, int mate, double deadline, double soft) {
    auto* s = static_cast<Search*>(h);
    s->join();
    s->depth_limit = depth;
    s->node_limit = nodes;
    s->mate_limit = mate;
    auto now = Clock::now();
    s->has_deadline = deadline >= 0;
    s->has_soft = soft >= 0;
    s->deadline = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, deadline)));
    s->soft_deadline = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, soft)));
    s->start();
}

void hs_stop(void* h) { static_cast<Search*>(h)->stop = true; }

// A backend failure: the search stops and reports it.
void hs_fail(void* h, const char* message) { static_cast<Search*>(h)->fail(message); }

int hs_running(void* h) { return static_cast<Search*>(h)->running.load(); }

// Up to `max` queued jobs into the arrays (positions: POSITION_WORDS words each; params: 4
// ints each; tickets: what hs_complete takes back), waiting up to wait_us for the first; the
// pump's number for the launch they go into (hs_stops names jobs by it).
// Returns the count, or -1 once the search has ended and nothing is queued.
int hs_take(void* h, uint64_t* positions, int32_t* params, uint32_t* tickets, uint8_t* black,
            int max, int wait_us, int launch) {
    auto* s = static_cast<Search*>(h);
    std::unique_lock<std::mutex> lock(s->m);
    if (!s->live_locked() && wait_us > 0 && s->running.load())
        s->queue_cv.wait_for(lock, std::chrono::microseconds(wait_us),
                             [&] { return s->live_locked() || !s->running.load(); });
    int n = s->take_locked(positions, params, tickets, black, max, launch);
    if (!n && !s->running.load()) return -1;
    return n;
}

// Jobs in flight whose batches were cancelled since the last call (launch << 32 | index), up
// to max: the pump sets their stop flags.
int hs_stops(void* h, int64_t* out, int max) {
    auto* s = static_cast<Search*>(h);
    std::lock_guard<std::mutex> lock(s->m);
    int n = (int)std::min<size_t>(max, s->stops.size());
    std::copy(s->stops.end() - n, s->stops.end(), out);
    s->stops.resize(s->stops.size() - n);
    return n;
}

// The results of taken jobs: scores, the packed best moves as the kernel wrote them, nodes.
void hs_complete(void* h, const uint32_t* tickets, const int32_t* scores, const uint32_t* moves,
                 const uint64_t* nodes, int n) {
    auto* s = static_cast<Search*>(h);
    std::lock_guard<std::mutex> lock(s->m);
    s->complete_locked(tickets, scores, moves, nodes, n);
}

// Native launches for the searches to come (hostlaunch.cpp's hl_*_new; null: the Python pump
// takes the jobs), and how often the pump looks at launches in flight besides the device's
// completion callbacks (microseconds). Set between searches only.
void hs_set_launcher(void* h, void* launcher, int poll_us) {
    auto* s = static_cast<Search*>(h);
    s->join();
    if (s->launcher) s->launcher->set_on_complete(nullptr);
    s->launcher = static_cast<hostlaunch::Launcher*>(launcher);
    s->poll_us = std::max(1, poll_us);
}

// Wait up to wait_us for the search (its threads and the native pump) to end: 1 while it runs.
int hs_wait(void* h, int wait_us) {
    auto* s = static_cast<Search*>(h);
    std::unique_lock<std::mutex> lock(s->m);
    auto over = [s] { return !s->running.load() && !s->pumping.load(); };
    if (!over()) s->end_cv.wait_for(lock, std::chrono::microseconds(wait_us), over);
    return over() ? 0 : 1;
}

// The native launches of the last search: launches, jobs in them, nanoseconds in flight.
void hs_launch_stats(void* h, uint64_t* out) {
    auto* s = static_cast<Search*>(h);
    std::lock_guard<std::mutex> lock(s->m);
    out[0] = s->launches;
    out[1] = s->launched_jobs;
    out[2] = s->launch_ns;
    out[3] = s->early_jobs;
}

// Iteration reports not yet read (the main thread's), up to max.
int hs_infos(void* h, Info* out, int max) {
    auto* s = static_cast<Search*>(h);
    std::lock_guard<std::mutex> lock(s->info_m);
    int n = (int)std::min<size_t>(max, s->infos.size());
    for (int i = 0; i < n; i++) out[i] = s->infos[i];
    s->infos.erase(s->infos.begin(), s->infos.begin() + n);
    return n;
}

// Wait for every thread and describe the search: depth, score, PV (up to MAX_LINE), counts.
// Returns the error text's length (0: none), the text in `error` (room for 200 bytes).
int hs_result(void* h, Info* out, char* error) {
    auto* s = static_cast<Search*>(h);
    s->stop = true;
    s->join();
    Info info{};
    info.depth = s->result_depth;
    info.score = s->result_score;
    info.bound = s->aborted ? 1 : 0;        // here: whether a limit or stop ended it
    info.pv_length = (int)std::min<size_t>(s->result_pv.size(), MAX_LINE);
    std::copy(s->result_pv.begin(), s->result_pv.begin() + info.pv_length, info.pv);
    info.seldepth = std::max(s->seldepth.load(), s->result_depth);
    info.host_nodes = s->group(0);
    info.accelerator_nodes = s->group(1);
    info.jobs = s->group(2);
    {
        std::lock_guard<std::mutex> lock(s->m);
        info.speculative_nodes = s->device_nodes > info.accelerator_nodes
            ? s->device_nodes - info.accelerator_nodes : 0;
    }
    info.hashfull = s->opt.tt ? s->table.hashfull() : 0;
    info.seconds = s->seconds();
    *out = info;
    size_t length = std::min<size_t>(s->error.size(), 199);
    std::memcpy(error, s->error.data(), length);
    error[length] = 0;
    return (int)length;
}

}  // extern "C"

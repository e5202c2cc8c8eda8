// Native launches: how the compiled host search (hostsearch.cpp) runs its packed jobs without
// Python in the loop. hostlaunch.cpp implements two kinds:
//
// - OpenCL: the kernels' search_jobs launched through the OpenCL C API on the context, device
//   and program pyopencl opened (host/opencl: the same program, the same evaluation tables),
//   with the buffers and command queues of each slot made once and reused. One or several
//   devices of one platform; a launch goes whole to the device with the fewest in flight.
//   With a split budget (hl_opencl_split) the launches run search_jobs_split instead: lanes
//   beyond the jobs wait to search the children of the jobs' long nodes (docs/opencl.md,
//   "Splitting long jobs on the device"), the same results sooner where a launch's longest
//   job is its tail.
// - Instant: every job answered at once with its material balance (the dispatch benchmark's
//   accelerator, lab/dispatch.py's InstantBackend), in the thread that submits it.
//
// The search's pump thread (hostsearch.cpp) owns the slots' bookkeeping: it fills a free slot's
// input arrays, starts it, asks whether it is done, reads its results and frees it.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hostlaunch {

constexpr int POSITION_WORDS = 5;

struct Inputs {
    uint64_t* positions;    // capacity * POSITION_WORDS
    int32_t* params;        // capacity * 4: depth, alpha, beta, 0
};

struct Outputs {
    const int32_t* scores;
    const uint32_t* moves;  // packed, in the frame of the job's side to move
    const uint64_t* nodes;
};

class Launcher {
public:
    virtual ~Launcher() = default;
    // Answers every launch at once in the caller's thread (no pump, no slots).
    virtual bool instant() const { return false; }
    virtual void run_instant(const uint64_t* positions, int n, int32_t* scores, uint32_t* moves,
                             uint64_t* nodes) {}
    // A device that runs a launch in the thread that queues it, at once (PoCL's `basic`
    // devices, one core each): the searching thread runs its jobs itself, one at a time as it
    // needs them, on a slot of its own (inline_order, run_inline), with no pump and no
    // speculation; a stop or a deadline reaches a running job through stop_inline.
    virtual bool synchronous() const { return false; }
    // The slots searching threads take for their inline jobs, in the order to take them (the
    // devices in turn, so that threads run on different cores).
    virtual std::vector<int> inline_order() const { return {}; }
    // Run slot's n jobs now, in this thread; false and `error` on a device failure.
    virtual bool run_inline(int slot, const uint64_t* positions, const int32_t* params, int n,
                            int32_t* scores, uint32_t* moves, uint64_t* nodes,
                            std::string& error) {
        error = "this launcher has no inline launches";
        return false;
    }
    // Give up the jobs every inline slot runs now (another thread's stop or deadline).
    virtual void stop_inline() {}
    virtual int slots() const = 0;          // launches in flight at most
    virtual int capacity() const = 0;       // jobs one launch holds at most
    // A slot not in `busy` to start the next launch in (-1: none).
    virtual int free_slot(const std::vector<char>& busy) const = 0;
    virtual Inputs inputs(int slot) = 0;    // the free slot's arrays to fill
    // Start slot's launch of its first n jobs; false and `error` on a device failure.
    virtual bool start(int slot, int n, std::string& error) = 0;
    // 1: done, its outputs readable; 0: running; -1: failed (`error`).
    virtual int poll(int slot, std::string& error) = 0;
    virtual Outputs outputs(int slot) = 0;
    // Jobs of the slot's launch in flight that have finished since the last call (their
    // indices into `out`, at most `max`; their outputs are readable), where the host can see a
    // job's results before its launch ends (a CPU device: the kernel writes into the host's own
    // arrays; a GPU: the results are copied while the kernel runs, every so often). Never a job
    // that was given up. 0 where it cannot tell.
    virtual int finished_early(int slot, int* out, int max) { return 0; }
    // Jobs first..end-1 of the slot's launch in flight are given up where they stand.
    virtual void stop(int slot, int first, int end) = 0;
    // Wait until the slot's launch (and its stops) are over, its results dropped: the slot is
    // free again.
    virtual void release(int slot) = 0;
    // Who to wake when a launch ends (the search's pump), so the pump need not poll; empty:
    // nobody. The device's threads call back whenever they like, a launch's callback may come
    // after its event says complete, even after the search that started it has ended: set and
    // called under one lock, so that once this returns the old callback is never called again.
    void set_on_complete(std::function<void()> callback) {
        std::lock_guard<std::mutex> lock(callback_mutex_);
        on_complete_ = std::move(callback);
    }

    // Called by the device's callbacks: wake the pump; then, as a callback's last step, say
    // that it has returned.
    void complete() {
        std::lock_guard<std::mutex> lock(callback_mutex_);
        if (on_complete_) on_complete_();
    }
    void callback_returned() { callbacks_pending_.fetch_sub(1); }

protected:
    // The device's callbacks registered and not yet returned: a launcher is not freed under
    // them (a callback touches its slot and its launcher).
    void callback_registered() { callbacks_pending_.fetch_add(1); }
    // Wait until every callback registered has returned, or `limit` has passed: false then.
    bool callbacks_over(std::chrono::milliseconds limit) const {
        auto give_up = std::chrono::steady_clock::now() + limit;
        while (callbacks_pending_.load() > 0) {
            if (std::chrono::steady_clock::now() > give_up) return false;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return true;
    }

private:
    std::mutex callback_mutex_;
    std::function<void()> on_complete_;
    std::atomic<int> callbacks_pending_{0};
};

}  // namespace hostlaunch

// SearchCore (hdl/search.py) compiled by Verilator, driven job by job from stdin.
//
// The job stream is what sim/rtl_search.py writes, one job per line:
//     <job hex> <trace 0|1> <abort_after cycles, -1 for none>
// where <job hex> is the packed SearchJob, most significant digit first. For each job the
// harness raises start for one cycle, ticks until busy falls (raising abort after abort_after
// cycles when asked) and prints one line:
//     <result hex> <abort latency, -1 for none> <ticks> [<ply>:<move> ...]
// with the packed SearchResult and, when traced, the ply and packed move of every node entered
// (the cycles trace_valid is high). The expectations live on the Python side.
//
// Built with -DINPUT_LATCH (the RTL build, sim/rtl_search.py), the model is the core behind
// sim/buildtools.py's LatchedInputs: job, start and abort reach it through registers clocked by
// latch_clk, which apply_inputs() pulses after the harness changes them. The core then sees
// them at the same clock edge as the bare core would, and Verilator no longer evaluates the
// logic behind them on every eval() (its ico region), which was a third of the run time.
// Without it (the gate-level netlist, sim/gatelevel.py) the ports are the core's own.

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "Vsearchcore.h"
#include "verilated.h"

namespace {

// THREADS: the core's interleaved threads (SearchCore's ``threads``; hdl/interleave.py). With two,
// each thread has its own start, abort, busy and result (Amaranth's start__0, start__1, ...,
// which Verilator spells start___05F0: it escapes a double underscore), the threads share job,
// and the harness keeps both busy, taking the jobs in order as threads come free, one start at
// a time with the job held for the two cycles after it (the core's contract); the answer lines stay
// in job order.
#ifndef THREADS
#define THREADS 1
#endif

#if THREADS == 1
// Verilator renames a port named after a C library function ("abort").
#define PORT(name, t) (core->name)
#define ABORT_PORT(t) (core->__SYM__abort)
#define TRACE_THREAD 0
#else
#define PORT(name, t) (*((t) ? &core->name##___05F1 : &core->name##___05F0))
#define ABORT_PORT(t) PORT(abort, t)
#define TRACE_THREAD (core->trace_thread)
#endif

constexpr int kResetCycles = 2;
constexpr int kWordBits = 32;
constexpr int kHexDigitsPerWord = kWordBits / 4;
// A job that runs longer than this is reported as hung (the Python side then fails the test).
constexpr uint64_t kMaxCyclesPerJob = 400000000ULL;

Vsearchcore* core;

// After the harness changed job, start or abort: make the core see them from the next edge on.
void apply_inputs() {
#ifdef INPUT_LATCH
    core->latch_clk = 1;
    core->eval();
    core->latch_clk = 0;
#endif
    core->eval();
}

void tick() {
    core->clk = 1;
    core->eval();
    core->clk = 0;
    core->eval();
}

template <typename Wide>
void set_wide(Wide& port, int words, const std::string& hex) {
    for (int w = 0; w < words; ++w) {
        int end = static_cast<int>(hex.size()) - w * kHexDigitsPerWord;
        int begin = end - kHexDigitsPerWord;
        if (begin < 0) begin = 0;
        port[w] = end > 0 ? static_cast<uint32_t>(std::stoul(hex.substr(begin, end - begin), nullptr, 16)) : 0;
    }
}

template <typename Wide>
std::string wide_hex(const Wide& port, int words) {
    std::string out;
    char digits[kHexDigitsPerWord + 1];
    for (int w = words - 1; w >= 0; --w) {
        std::snprintf(digits, sizeof digits, "%08x", static_cast<uint32_t>(port[w]));
        out += digits;
    }
    return out;
}

constexpr int words_of(int bits) { return (bits + kWordBits - 1) / kWordBits; }

}  // namespace

// One thread's job in progress.
struct Running {
    bool active = false;
    bool fresh = false;          // start raised this cycle (its tick is not counted)
    size_t index = 0;            // the job's line
    bool trace = false;
    long long abort_after = -1;
    long long abort_latency = -1;
    uint64_t cycles = 0;
    std::ostringstream walk;
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    core = new Vsearchcore;
    core->clk = 0;
    core->rst = 1;
    for (int t = 0; t < THREADS; ++t) {
        PORT(start, t) = 0;
        ABORT_PORT(t) = 0;
    }
    apply_inputs();
    for (int i = 0; i < kResetCycles; ++i) tick();
    core->rst = 0;
    const int job_words = words_of(JOB_BITS);
    const int result_words = words_of(RESULT_BITS);

    struct Job {
        std::string hex;
        int trace = 0;
        long long abort_after = -1;
    };
    std::vector<Job> jobs;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::istringstream fields(line);
        Job job;
        fields >> job.hex >> job.trace >> job.abort_after;
        jobs.push_back(job);
    }

    std::vector<std::string> answers(jobs.size());
    std::vector<bool> answered(jobs.size(), false);
    size_t next_job = 0, next_answer = 0;
    Running running[THREADS];
    // cycles since the last start: the shared job port holds a job for three cycles
    int since_start = 3;
    for (;;) {
        bool changed = false, any = false;
        for (int t = 0; t < THREADS; ++t) {
            Running& run = running[t];
            if (!run.active && next_job < jobs.size() && (THREADS == 1 || since_start >= 3)) {
                const Job& job = jobs[next_job];
                set_wide(core->job, job_words, job.hex);
                since_start = 0;
                PORT(start, t) = 1;
                run.active = run.fresh = true;
                run.index = next_job++;
                run.trace = job.trace != 0;
                run.abort_after = job.abort_after;
                run.abort_latency = -1;
                run.cycles = 0;
                run.walk.str("");
                changed = true;
            }
            if (!run.active) continue;
            any = true;
            if (!run.fresh && run.abort_after >= 0
                && static_cast<long long>(run.cycles) == run.abort_after) {
                ABORT_PORT(t) = 1;
                run.abort_latency = 0;
                changed = true;
            }
        }
        if (!any) break;
        if (changed) apply_inputs();
        if (core->trace_valid) {
            Running& run = running[TRACE_THREAD];
            if (run.active && !run.fresh && run.trace) {
                run.walk << ' ' << static_cast<unsigned>(core->trace_ply) << ':'
                         << static_cast<unsigned>(core->trace_move);
            }
        }
        tick();
        ++since_start;
        changed = false;
        for (int t = 0; t < THREADS; ++t) {
            Running& run = running[t];
            if (!run.active) continue;
            if (run.fresh) {
                PORT(start, t) = 0;
                run.fresh = false;
                changed = true;
            } else {
                ++run.cycles;
                if (run.abort_latency >= 0) ++run.abort_latency;
            }
        }
        if (changed) apply_inputs();
        changed = false;
        for (int t = 0; t < THREADS; ++t) {
            Running& run = running[t];
            if (!run.active || (PORT(busy, t) && run.cycles < kMaxCyclesPerJob)) continue;
            std::ostringstream answer;
            answer << wide_hex(PORT(result, t), result_words) << ' ' << run.abort_latency << ' '
                   << run.cycles << run.walk.str();
            answers[run.index] = answer.str();
            answered[run.index] = true;
            run.active = false;
            if (ABORT_PORT(t)) {
                ABORT_PORT(t) = 0;
                changed = true;
            }
        }
        if (changed) apply_inputs();
        while (next_answer < jobs.size() && answered[next_answer]) {
            std::cout << answers[next_answer++] << '\n' << std::flush;
        }
    }
    core->final();
    delete core;
    return 0;
}

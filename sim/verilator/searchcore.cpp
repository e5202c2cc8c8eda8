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

// Verilator renames a port named after a C library function ("abort").
#define ABORT_PORT __SYM__abort

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

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    core = new Vsearchcore;
    core->clk = 0;
    core->rst = 1;
    core->start = 0;
    core->ABORT_PORT = 0;
    apply_inputs();
    for (int i = 0; i < kResetCycles; ++i) tick();
    core->rst = 0;
    const int job_words = words_of(JOB_BITS);
    const int result_words = words_of(RESULT_BITS);

    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::istringstream fields(line);
        std::string job_hex;
        int trace = 0;
        long long abort_after = -1;
        fields >> job_hex >> trace >> abort_after;
        set_wide(core->job, job_words, job_hex);
        core->start = 1;
        apply_inputs();
        tick();
        core->start = 0;
        apply_inputs();
        uint64_t cycles = 0;
        long long abort_latency = -1;
        std::ostringstream walk;
        while (core->busy && cycles < kMaxCyclesPerJob) {
            if (abort_after >= 0 && static_cast<long long>(cycles) == abort_after) {
                core->ABORT_PORT = 1;
                abort_latency = 0;
                apply_inputs();
            }
            if (trace && core->trace_valid) {
                walk << ' ' << static_cast<unsigned>(core->trace_ply) << ':'
                     << static_cast<unsigned>(core->trace_move);
            }
            tick();
            ++cycles;
            if (abort_latency >= 0) ++abort_latency;
        }
        core->ABORT_PORT = 0;
        apply_inputs();
        std::cout << wide_hex(core->result, result_words) << ' ' << abort_latency << ' '
                  << cycles << walk.str() << '\n' << std::flush;
    }
    core->final();
    delete core;
    return 0;
}

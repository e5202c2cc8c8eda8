// The simulated board: hdl/boardtop.py compiled by Verilator, its UART pins bridged to a
// pseudo-terminal, so that any serial program can talk to it as to a real board.
//
// The harness is the other end of the serial cable, at the bit level: it serialises the bytes a
// client writes to the pty onto uart_rx (8N1, CLOCKS_PER_BIT cycles per bit, the divisor the
// design was built with) and deserialises uart_tx, sampling mid-bit, back into the pty. The
// board's own UART, link and cores run unchanged.
//
// While nothing happens (no byte to send or being received, every LED off: no frame in the
// link, no core busy) the harness sleeps in poll() instead of ticking, so an idle board costs
// no CPU. Simulated time stands still while it sleeps; the board cannot tell.
//
// Usage: boardsim [--stats FILE]
// Prints "PTY <path>" on stdout once the pty is ready. SIGINT/SIGTERM end it; the statistics
// (cycles simulated, wall seconds spent ticking, CPU seconds of the whole process) are then
// written to FILE as JSON.

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

#include "Vboardtop.h"
#include "verilated.h"

#ifndef CLOCKS_PER_BIT
#error "build with -DCLOCKS_PER_BIT=<the design's divisor>"
#endif

namespace {

constexpr int kDataBits = 8;
constexpr int kFrameBits = 1 + kDataBits + 1;
constexpr int kResetCycles = 8;
// Cycles of a quiet line after which the harness may sleep: a few byte times, so that a reply
// the dispatcher is about to start is never cut off by a nap.
constexpr long kQuietCycles = 4L * kFrameBits * CLOCKS_PER_BIT;
constexpr int kPollMillis = 20;
constexpr int kBurstsPerRead = 64;

volatile std::sig_atomic_t stop_requested = 0;
void on_signal(int) { stop_requested = 1; }

// Bytes from the pty onto uart_rx.
struct LineDriver {
    std::deque<unsigned char> queue;
    int bit = -1;        // bit of the current frame on the line, -1 when idle
    int timer = 0;
    unsigned frame = 0;  // start bit, data LSB first, stop bit
    bool idle() const { return bit < 0 && queue.empty(); }
    int level() {
        if (bit < 0) {
            if (queue.empty()) return 1;
            frame = (1u << (kFrameBits - 1)) | (unsigned(queue.front()) << 1);
            queue.pop_front();
            bit = 0;
            timer = 0;
        }
        int value = (frame >> bit) & 1;
        if (++timer == CLOCKS_PER_BIT) {
            timer = 0;
            if (++bit == kFrameBits) bit = -1;
        }
        return value;
    }
};

// uart_tx into bytes for the pty, sampling each bit in its middle like a host UART.
struct LineSampler {
    int bit = -1;        // -1: waiting for a start bit
    int timer = 0;
    unsigned value = 0;
    bool busy() const { return bit >= 0; }
    // returns a byte (0..255) when one is complete, -1 otherwise
    int sample(int level) {
        if (bit < 0) {
            if (level == 0) { bit = 0; timer = CLOCKS_PER_BIT / 2; value = 0; }
            return -1;
        }
        if (--timer > 0) return -1;
        timer = CLOCKS_PER_BIT;
        if (bit == 0) {
            if (level != 0) { bit = -1; return -1; }   // a glitch, not a start bit
        } else if (bit <= kDataBits) {
            value |= unsigned(level) << (bit - 1);
        } else {
            bit = -1;
            return level ? int(value) : -1;          // stop bit low: framing error, dropped
        }
        ++bit;
        return -1;
    }
};

bool write_all(int fd, const unsigned char* data, size_t size) {
    while (size) {
        ssize_t n = write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) { usleep(100); continue; }
            return false;
        }
        data += n;
        size -= size_t(n);
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const char* stats_path = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--stats") == 0 && i + 1 < argc) stats_path = argv[++i];
        else if (argv[i][0] == '+') continue;   // Verilator plusargs
        else { std::fprintf(stderr, "boardsim: unknown argument %s\n", argv[i]); return 2; }
    }
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        std::perror("boardsim: cannot open a pseudo-terminal");
        return 1;
    }
    std::string slave_path = ptsname(master);
    // Keep one slave descriptor open: the pty then survives clients that come and go, and raw
    // mode set here (no echo, no line editing, 8-bit clean) stays in force.
    int slave = open(slave_path.c_str(), O_RDWR | O_NOCTTY);
    termios mode{};
    if (slave < 0 || tcgetattr(slave, &mode) != 0) {
        std::perror("boardsim: cannot set up the pseudo-terminal");
        return 1;
    }
    cfmakeraw(&mode);
    tcsetattr(slave, TCSANOW, &mode);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    Verilated::commandArgs(argc, argv);
    Vboardtop top;
    top.uart_rx = 1;
    top.rst = 1;
    for (int i = 0; i < kResetCycles; ++i) {
        top.clk = 0; top.eval();
        top.clk = 1; top.eval();
    }
    top.rst = 0;

    std::printf("PTY %s\n", slave_path.c_str());
    std::fflush(stdout);

    LineDriver driver;
    LineSampler sampler;
    unsigned long long cycles = 0;
    long quiet = 0;
    double ticking_seconds = 0.0;
    unsigned char buffer[4096];
    unsigned char out[256];
    size_t out_size = 0;

    int bursts_since_read = 0;
    while (!stop_requested) {
        // While a core computes, look at the pty only now and then: a read is a system call.
        if (driver.idle() && (++bursts_since_read >= kBurstsPerRead || top.led == 0)) {
            bursts_since_read = 0;
            ssize_t n = read(master, buffer, sizeof buffer);
            if (n > 0) driver.queue.insert(driver.queue.end(), buffer, buffer + n);
        }
        if (driver.idle() && !sampler.busy() && top.led == 0 && top.uart_tx == 1
                && quiet >= kQuietCycles) {
            pollfd wait{master, POLLIN, 0};
            poll(&wait, 1, kPollMillis);
            continue;
        }
        // Tick in bursts of a bit time; the pty is read between bursts only when needed.
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < CLOCKS_PER_BIT; ++i) {
            top.uart_rx = driver.level();
            top.clk = 0; top.eval();
            top.clk = 1; top.eval();
            ++cycles;
            int byte = sampler.sample(top.uart_tx);
            if (byte >= 0) out[out_size++] = (unsigned char)byte;
            if (out_size == sizeof out) {
                if (!write_all(master, out, out_size)) stop_requested = 1;
                out_size = 0;
            }
            bool active = !driver.idle() || sampler.busy() || top.led != 0 || top.uart_tx == 0;
            quiet = active ? 0 : quiet + 1;
        }
        if (out_size && (!sampler.busy() || out_size > 64)) {
            if (!write_all(master, out, out_size)) break;
            out_size = 0;
        }
        ticking_seconds += std::chrono::duration<double>(
            std::chrono::steady_clock::now() - start).count();
    }
    if (stats_path) {
        // CPU time, not wall time: the machine running the simulation may be shared.
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        double cpu_seconds = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6
                             + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
        FILE* f = std::fopen(stats_path, "w");
        if (f) {
            std::fprintf(f, "{\"cycles\": %llu, \"ticking_seconds\": %.6f, "
                         "\"cpu_seconds\": %.6f}\n", cycles, ticking_seconds, cpu_seconds);
            std::fclose(f);
        }
    }
    top.final();
    close(slave);
    close(master);
    return 0;
}

// Native launches (hostlaunch.hpp says what and why): the OpenCL launcher over the C API of
// the OpenCL library pyopencl loaded (opened here by its path: hostsearch.py finds it), and
// the instant launcher of the dispatch benchmark.
//
// The OpenCL objects pyopencl made (context, devices, the built program, the evaluation and
// attack tables) are borrowed by their handles and retained while a launcher lives; everything
// a launch needs besides (a command queue, buffers, a kernel object with its arguments set)
// is made once per slot. On a CPU device (PoCL) the slots' buffers are the host's own arrays
// (USE_HOST_PTR: PoCL runs the kernel on them in place, as backend.py's control buffers rely
// on), so a launch is one enqueued kernel and a stop flag is a store; on a GPU a launch is the
// jobs' upload, the counter's and flags' reset and the kernel in the slot's in-order queue, the
// results' read queued once the kernel has ended (gpu_poll), and a stop or a read of the jobs
// finished so far (gpu_finished_early) is a copy on the device's control queue.

#include "hostlaunch.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace hostlaunch {
namespace {

// --- the OpenCL C API, declared here (no headers needed to build the package) ----------------

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef struct _cl_context* cl_context;
typedef struct _cl_device_id* cl_device_id;
typedef struct _cl_command_queue* cl_command_queue;
typedef struct _cl_mem* cl_mem;
typedef struct _cl_program* cl_program;
typedef struct _cl_kernel* cl_kernel;
typedef struct _cl_event* cl_event;

constexpr cl_bitfield MEM_READ_WRITE = 1, MEM_WRITE_ONLY = 2, MEM_READ_ONLY = 4,
                      MEM_USE_HOST_PTR = 8;
constexpr cl_int COMPLETE = 0;
constexpr cl_uint EVENT_COMMAND_EXECUTION_STATUS = 0x11D3;

struct Api {
    cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_bitfield, cl_int*);
    cl_mem (*CreateBuffer)(cl_context, cl_bitfield, size_t, void*, cl_int*);
    cl_kernel (*CreateKernel)(cl_program, const char*, cl_int*);
    cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void*);
    cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void*,
                                 cl_uint, const cl_event*, cl_event*);
    cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void*, cl_uint,
                                const cl_event*, cl_event*);
    cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*,
                                   const size_t*, const size_t*, cl_uint, const cl_event*,
                                   cl_event*);
    cl_int (*Flush)(cl_command_queue);
    cl_int (*Finish)(cl_command_queue);
    cl_int (*SetEventCallback)(cl_event, cl_int, void (*)(cl_event, cl_int, void*), void*);
    cl_int (*GetEventInfo)(cl_event, cl_uint, size_t, void*, size_t*);
    cl_int (*WaitForEvents)(cl_uint, const cl_event*);
    cl_int (*ReleaseEvent)(cl_event);
    cl_int (*ReleaseMemObject)(cl_mem);
    cl_int (*ReleaseKernel)(cl_kernel);
    cl_int (*ReleaseCommandQueue)(cl_command_queue);
    cl_int (*RetainContext)(cl_context);
    cl_int (*ReleaseContext)(cl_context);
    cl_int (*RetainProgram)(cl_program);
    cl_int (*ReleaseProgram)(cl_program);
    cl_int (*RetainMemObject)(cl_mem);
};

Api api;
bool api_loaded = false;

const char* code_name(cl_int code) {
    switch (code) {
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -30: return "CL_INVALID_VALUE";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -48: return "CL_INVALID_KERNEL";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -58: return "CL_INVALID_EVENT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -9999: return "the device's driver failed (NVIDIA -9999)";
    default: return "an OpenCL error";
    }
}

struct Failure {
    std::string text;
};

void check(cl_int code, const char* call, const std::string& device) {
    if (code != 0)
        throw Failure{device + ": " + call + " failed: " + code_name(code) + " (" +
                      std::to_string(code) + ")"};
}

void* aligned(size_t bytes) {
    size_t size = std::max<size_t>(4096, (bytes + 4095) / 4096 * 4096);
    void* p = std::aligned_alloc(4096, size);
    if (!p) throw Failure{"out of host memory for a launch's buffers"};
    std::memset(p, 0, size);
    return p;
}

struct Device;

// search_jobs_split's control words (search.cl's CTL_*) and the room of a slot's split table:
// entries (a published child each, 56 bytes) and split points (a published node each).
constexpr int CTL_WORDS = 16, CTL_JOBS = 0, CTL_ENTRIES = 1, CTL_SPLITS = 3, CTL_HELPED = 5;
constexpr uint32_t SPLIT_ENTRIES = 1u << 16, SPLIT_POINTS = SPLIT_ENTRIES / 8;

struct Slot {
    Launcher* owner = nullptr;
    Device* device = nullptr;
    int index = 0;                  // the launcher's number of the slot
    cl_command_queue queue = nullptr;
    cl_kernel kernel = nullptr;
    cl_mem positions = nullptr, params = nullptr, counter = nullptr, stops = nullptr,
           scores = nullptr, moves = nullptr, nodes = nullptr, pv_moves = nullptr,
           pv_lengths = nullptr;
    uint64_t* host_positions = nullptr;
    int32_t* host_params = nullptr;
    uint32_t* host_counter = nullptr;
    volatile uint32_t* host_stops = nullptr;
    int32_t* host_scores = nullptr;
    uint32_t* host_moves = nullptr;
    uint64_t* host_nodes = nullptr;
    // search_jobs_split (made at the first split launch): its kernel, control words, split
    // points and entries, and how many entries the last split launch used (cleared before
    // the next one: a stale entry's state or result would be taken for a new one's)
    cl_kernel split_kernel = nullptr;
    cl_mem ctl = nullptr, sp_alpha = nullptr, sp_info = nullptr, e_pos = nullptr,
           e_state = nullptr, e_sp = nullptr, e_result = nullptr, times = nullptr;
    uint32_t* host_ctl = nullptr;
    uint32_t used_entries = 0;
    bool split_launch = false;      // the launch in flight is a split one
    cl_event done = nullptr;        // the launch's last command queued so far
    // GPU: the results are read only once the kernel has ended (`reading`): NVIDIA's driver
    // runs the copies of all queues in the order they were queued, so a read queued behind
    // the kernel would hold back every stop flag and early read of the others until it ends
    bool reading = false;
    std::vector<cl_event> stop_events;
    // set by the callbacks of the events they watch (a callback of an older event, which may
    // come late, is not taken for the current one's)
    std::atomic<int> finished{0};   // the kernel has ended
    std::atomic<int> read_end{0};   // GPU: the reads queued after it have ended
    std::atomic<cl_event> kernel_event{nullptr}, read_event{nullptr}, early_event{nullptr};
    int n = 0;
    std::vector<char> reported;     // jobs handed back by finished_early
    int unreported = 0;             // ... and the first job not handed back yet
    // GPU: the results read while the launch runs (finished_early), on the device's control
    // queue; `early_status` is set by the read's callback, which also wakes the pump
    int32_t* early_scores = nullptr;
    uint32_t* early_moves = nullptr;
    uint64_t* early_nodes = nullptr;
    cl_event early_read = nullptr;
    std::atomic<int> early_status{1};
    std::chrono::steady_clock::time_point early_last;
};

struct Device {
    std::string name;
    cl_context context;
    cl_device_id id;
    cl_program program;
    cl_mem eval_values, line_values;
    size_t local, workers;
    bool gpu;
    bool synchronous = false;   // runs a launch in the thread that queues it (PoCL's basic)
    cl_command_queue control = nullptr;     // a GPU's stop flags
    int in_flight = 0;
};

void on_event(cl_event event, cl_int, void* data);
void on_early_read(cl_event event, cl_int status, void* data);
void on_read_end(cl_event event, cl_int, void* data);

class OpenCLLauncher : public Launcher {
public:
    OpenCLLauncher(int slots_per_device, int capacity)
        : per_device_(slots_per_device), capacity_(capacity),
          zeros_(std::max<size_t>(capacity, SPLIT_ENTRIES), 0) {}

    ~OpenCLLauncher() override {
        for (auto& slot : slots_) release(slot->index);
        // a launch's callbacks may come after its events say complete: they touch the slots
        if (!callbacks_over(std::chrono::seconds(10))) {
            // a driver that never called back: leave the slots (and the buffers its threads
            // may still write) to the process rather than free them under it
            for (auto& slot : slots_) slot.release();
            return;
        }
        for (auto& slot : slots_) {
            for (cl_mem mem : {slot->positions, slot->params, slot->counter, slot->stops,
                               slot->scores, slot->moves, slot->nodes, slot->pv_moves,
                               slot->pv_lengths, slot->ctl, slot->sp_alpha, slot->sp_info,
                               slot->e_pos, slot->e_state, slot->e_sp, slot->e_result,
                               slot->times})
                if (mem) api.ReleaseMemObject(mem);
            if (slot->kernel) api.ReleaseKernel(slot->kernel);
            if (slot->split_kernel) api.ReleaseKernel(slot->split_kernel);
            if (slot->queue) api.ReleaseCommandQueue(slot->queue);
            for (void* p : {(void*)slot->host_positions, (void*)slot->host_params,
                            (void*)slot->host_counter, (void*)slot->host_stops,
                            (void*)slot->host_scores, (void*)slot->host_moves,
                            (void*)slot->host_nodes, (void*)slot->host_ctl,
                            (void*)slot->early_scores, (void*)slot->early_moves,
                            (void*)slot->early_nodes})
                std::free(p);
        }
        for (auto& d : devices_) {
            if (d->control) api.ReleaseCommandQueue(d->control);
            api.ReleaseMemObject(d->eval_values);
            api.ReleaseMemObject(d->line_values);
            api.ReleaseProgram(d->program);
            api.ReleaseContext(d->context);
        }
    }

    void add(std::unique_ptr<Device> d) {
        api.RetainContext(d->context);
        api.RetainProgram(d->program);
        api.RetainMemObject(d->eval_values);
        api.RetainMemObject(d->line_values);
        Device* device = d.get();
        devices_.push_back(std::move(d));
        cl_int err = 0;
        if (device->gpu) {
            device->control = api.CreateCommandQueue(device->context, device->id, 0, &err);
            check(err, "clCreateCommandQueue", device->name);
        }
        for (int k = 0; k < per_device_; k++) make_slot(device);
    }

    int slots() const override { return (int)slots_.size(); }
    int capacity() const override { return capacity_; }

    bool synchronous() const override {
        if (devices_.empty() || split_budget_ > 0) return false;
        for (auto& d : devices_)
            if (!d->synchronous) return false;
        return true;
    }

    // Slot k of each device in turn (add made each device's slots one after the other).
    std::vector<int> inline_order() const override {
        std::vector<int> order;
        for (int k = 0; k < per_device_; k++)
            for (size_t d = 0; d < devices_.size(); d++) order.push_back((int)d * per_device_ + k);
        return order;
    }

    bool run_inline(int k, const uint64_t* positions, const int32_t* params, int n,
                    int32_t* scores, uint32_t* moves, uint64_t* nodes,
                    std::string& error) override {
        Slot& s = *slots_[k];
        Device& d = *s.device;
        try {
            std::memcpy(s.host_positions, positions, 8 * POSITION_WORDS * (size_t)n);
            std::memcpy(s.host_params, params, 16 * (size_t)n);
            *s.host_counter = 0;
            std::memset(s.host_nodes, 0, 8 * (size_t)n);
            for (int i = 0; i < n; i++) s.host_stops[i] = 0;
            __atomic_store_n(&s.n, n, __ATOMIC_RELEASE);    // stop_inline's range
            cl_uint jobs = (cl_uint)n;
            check(api.SetKernelArg(s.kernel, 2, sizeof jobs, &jobs), "clSetKernelArg", d.name);
            size_t workers = std::max<size_t>(1, std::min<size_t>(n, d.workers));
            size_t global = (workers + d.local - 1) / d.local * d.local;
            check(api.EnqueueNDRangeKernel(s.queue, s.kernel, 1, nullptr, &global, &d.local, 0,
                                           nullptr, nullptr), "clEnqueueNDRangeKernel", d.name);
            check(api.Finish(s.queue), "clFinish", d.name);
        } catch (Failure& f) {
            error = f.text;
            return false;
        }
        std::memcpy(scores, s.host_scores, 4 * (size_t)n);
        std::memcpy(moves, s.host_moves, 4 * (size_t)n);
        std::memcpy(nodes, s.host_nodes, 8 * (size_t)n);
        return true;
    }

    void stop_inline() override {
        for (auto& slot : slots_) {
            int n = __atomic_load_n(&slot->n, __ATOMIC_ACQUIRE);
            for (int i = 0; i < n; i++) slot->host_stops[i] = 1;
        }
    }

    // The free slot of the device with the fewest launches in flight, or -1.
    int free_slot(const std::vector<char>& busy) const override {
        int best = -1;
        for (auto& slot : slots_) {
            if (busy[slot->index]) continue;
            if (best < 0 || slot->device->in_flight < slots_[best]->device->in_flight)
                best = slot->index;
        }
        return best;
    }

    Inputs inputs(int k) override { return {slots_[k]->host_positions, slots_[k]->host_params}; }

    // Later launches split a job's node once its subtree has counted `budget` nodes (0: no
    // split; nodes of at least `min_depth` plies), on `lanes` lanes a launch (0: the device's
    // workers), however few its jobs.
    void set_split(uint64_t budget, int min_depth, int lanes) {
        split_budget_ = budget;
        split_min_depth_ = min_depth;
        split_lanes_ = lanes;
    }

    // A GPU launch's finished jobs are read every `us` microseconds while it runs (0: never).
    void set_early_reads(int us) { early_read_us_ = std::max(0, us); }

    // Split launches ended so far, the nodes they published and the children helpers searched;
    // a GPU's reads of finished jobs while their launches ran, and the jobs they handed back.
    void stats(uint64_t* out) const {
        for (int i = 0; i < 3; i++) out[i] = split_stats_[i];
        out[3] = early_reads_;
        out[4] = early_jobs_;
    }

    bool start(int k, int n, std::string& error) override {
        Slot& s = *slots_[k];
        Device& d = *s.device;
        try {
            s.n = n;
            s.kernel_event = nullptr;   // before the flag: an older event's callback may come
            s.finished = 0;
            s.reported.assign(n, 0);
            s.unreported = 0;
            s.split_launch = split_budget_ > 0;
            cl_kernel kernel = s.kernel;
            cl_uint jobs = (cl_uint)n;
            *s.host_counter = 0;
            for (int i = 0; i < n; i++) s.host_stops[i] = 0;
            size_t workers = std::max<size_t>(1, std::min<size_t>(n, d.workers));
            if (s.split_launch) {
                kernel = prepare_split(s, n, workers);
            } else {
                check(api.SetKernelArg(kernel, 2, sizeof jobs, &jobs), "clSetKernelArg", d.name);
            }
            size_t global = (workers + d.local - 1) / d.local * d.local;
            cl_event event = nullptr;
            if (d.gpu) {
                check(api.EnqueueWriteBuffer(s.queue, s.positions, 0, 0, 8 * POSITION_WORDS * n,
                                             s.host_positions, 0, nullptr, nullptr),
                      "clEnqueueWriteBuffer", d.name);
                check(api.EnqueueWriteBuffer(s.queue, s.params, 0, 0, 16 * n, s.host_params, 0,
                                             nullptr, nullptr), "clEnqueueWriteBuffer", d.name);
                check(api.EnqueueWriteBuffer(s.queue, s.counter, 0, 0, 4, s.host_counter, 0,
                                             nullptr, nullptr), "clEnqueueWriteBuffer", d.name);
                check(api.EnqueueWriteBuffer(s.queue, s.stops, 0, 0, 4 * n,
                                             (const void*)s.host_stops, 0, nullptr, nullptr),
                      "clEnqueueWriteBuffer", d.name);
                s.early_last = std::chrono::steady_clock::now();
                check(api.EnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &global, &d.local,
                                               0, nullptr, &event),
                      "clEnqueueNDRangeKernel", d.name);
                s.reading = false;      // the results are read when it ends (poll)
            } else {
                // a job's nonzero node count says it has finished (finished_early)
                std::memset(s.host_nodes, 0, 8 * (size_t)n);
                check(api.EnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &global, &d.local,
                                               0, nullptr, &event),
                      "clEnqueueNDRangeKernel", d.name);
            }
            s.done = event;
            d.in_flight++;
            s.kernel_event = event;
            check(watch(event, on_event, s), "clSetEventCallback", d.name);
            check(api.Flush(s.queue), "clFlush", d.name);
        } catch (Failure& f) {
            error = f.text;
            return false;
        }
        return true;
    }

    int poll(int k, std::string& error) override {
        Slot& s = *slots_[k];
        if (!s.done) return 1;
        if (s.device->gpu) return gpu_poll(s, error);
        cl_int status = 1;
        cl_int err = api.GetEventInfo(s.done, EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                      &status, nullptr);
        if (err != 0 || status < 0) {
            error = s.device->name + ": a search launch failed: " +
                    code_name(err != 0 ? err : status) + " (" +
                    std::to_string(err != 0 ? err : status) + ")";
            return -1;
        }
        return status == COMPLETE ? 1 : 0;
    }

    // On a CPU device the kernel writes each job's score and move, then (after a fence) its
    // node count, into the host's arrays as the job ends; lanes take jobs in order from the
    // counter, so only jobs below it can have finished.
    int finished_early(int k, int* out, int max) override {
        Slot& s = *slots_[k];
        if (!s.done) return 0;
        if (s.device->gpu) return gpu_finished_early(s, out, max);
        // search_jobs_split's job queue is its first control word
        uint32_t* counter = s.split_launch ? s.host_ctl + CTL_JOBS : s.host_counter;
        int taken = (int)std::min<uint32_t>(__atomic_load_n(counter, __ATOMIC_ACQUIRE),
                                            (uint32_t)s.n);
        int count = 0;
        for (int i = s.unreported; i < taken && count < max; i++) {
            if (s.reported[i] || !__atomic_load_n(&s.host_nodes[i], __ATOMIC_ACQUIRE)) continue;
            s.reported[i] = 1;
            out[count++] = i;
        }
        while (s.unreported < s.n && s.reported[s.unreported]) s.unreported++;
        return count;
    }

    Outputs outputs(int k) override {
        Slot& s = *slots_[k];
        return {s.host_scores, s.host_moves, s.host_nodes};
    }

    void stop(int k, int first, int end) override {
        Slot& s = *slots_[k];
        first = std::max(first, 0);
        end = std::min(end, s.n);
        if (!s.done || end <= first) return;
        if (!s.device->gpu) {
            for (int i = first; i < end; i++) s.host_stops[i] = 1;
            return;
        }
        cl_event event = nullptr;
        if (api.EnqueueWriteBuffer(s.device->control, s.stops, 0, 4 * first, 4 * (end - first),
                                   ones_.data(), 0, nullptr, &event) == 0) {
            s.stop_events.push_back(event);
            api.Flush(s.device->control);
        }   // a stop that cannot be sent only costs the device time
    }

    void release(int k) override {
        Slot& s = *slots_[k];
        if (s.done) {
            api.WaitForEvents(1, &s.done);
            api.ReleaseEvent(s.done);
            s.done = nullptr;
            s.device->in_flight--;
            bool unread = s.device->gpu && !s.reading;
            if (unread)     // given up before its reads: clear its counts
                api.EnqueueWriteBuffer(s.queue, s.nodes, 1, 0, 8 * (size_t)s.n, zeros_.data(), 0,
                                       nullptr, nullptr);
            s.reading = false;
            if (s.split_launch) {
                // its control words unread: every entry may have been used
                s.used_entries = unread ? SPLIT_ENTRIES
                                        : std::min<uint32_t>(s.host_ctl[CTL_ENTRIES], SPLIT_ENTRIES);
                split_stats_[0]++;
                if (!unread) {
                    split_stats_[1] += s.host_ctl[CTL_SPLITS];
                    split_stats_[2] += s.host_ctl[CTL_HELPED];
                }
            }
        }
        if (s.early_read) {     // an early read must not land in the slot's next launch either
            api.WaitForEvents(1, &s.early_read);
            api.ReleaseEvent(s.early_read);
            s.early_read = nullptr;
        }
        if (!s.stop_events.empty()) {
            // a stop still queued must not land in the slot's next launch
            api.WaitForEvents((cl_uint)s.stop_events.size(), s.stop_events.data());
            for (cl_event e : s.stop_events) api.ReleaseEvent(e);
            s.stop_events.clear();
        }
    }

private:
    // Call `callback` (with the slot) when `event` completes, counted until it has returned;
    // clSetEventCallback's status.
    cl_int watch(cl_event event, void (*callback)(cl_event, cl_int, void*), Slot& s) {
        callback_registered();
        cl_int err = api.SetEventCallback(event, COMPLETE, callback, &s);
        if (err != 0) callback_returned();
        return err;
    }

    // A GPU launch: its kernel, then (queued once the kernel has ended) the reads of its
    // results and the clearing of its node counts for the next launch.
    int gpu_poll(Slot& s, std::string& error) {
        Device& d = *s.device;
        cl_int status = 1;
        // each phase's own callback flag: the kernel's may come after its event says complete
        if ((s.reading ? s.read_end : s.finished).load(std::memory_order_acquire))
            status = COMPLETE;
        else if (api.GetEventInfo(s.done, EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                  nullptr) != 0)
            status = -1;
        if (status < 0) {
            error = d.name + ": a search launch failed: " + code_name(status) + " (" +
                    std::to_string(status) + ")";
            return -1;
        }
        if (status != COMPLETE) return 0;
        if (s.reading) return 1;
        // the kernel has ended: read the results (an early read still queued lands first)
        int n = s.n;
        cl_event event = nullptr;
        try {
            if (s.split_launch)     // how many entries to clear before the next one
                check(api.EnqueueReadBuffer(s.queue, s.ctl, 0, 0, 4 * CTL_WORDS, s.host_ctl, 0,
                                            nullptr, nullptr), "clEnqueueReadBuffer", d.name);
            check(api.EnqueueReadBuffer(s.queue, s.scores, 0, 0, 4 * n, s.host_scores, 0,
                                        nullptr, nullptr), "clEnqueueReadBuffer", d.name);
            check(api.EnqueueReadBuffer(s.queue, s.moves, 0, 0, 4 * n, s.host_moves, 0, nullptr,
                                        nullptr), "clEnqueueReadBuffer", d.name);
            check(api.EnqueueReadBuffer(s.queue, s.nodes, 0, 0, 8 * n, s.host_nodes, 0, nullptr,
                                        nullptr), "clEnqueueReadBuffer", d.name);
            // the node counts cleared for the next launch: a nonzero count read while a launch
            // runs says its job has finished (finished_early)
            check(api.EnqueueWriteBuffer(s.queue, s.nodes, 0, 0, 8 * (size_t)n, zeros_.data(), 0,
                                         nullptr, &event), "clEnqueueWriteBuffer", d.name);
            api.ReleaseEvent(s.done);
            s.done = event;
            s.reading = true;
            s.read_event = nullptr;
            s.read_end = 0;
            s.read_event = event;
            check(watch(event, on_read_end, s), "clSetEventCallback", d.name);
            check(api.Flush(s.queue), "clFlush", d.name);
        } catch (Failure& f) {
            error = f.text;
            return -1;
        }
        return 0;
    }

    // On a GPU the results cannot be read in place: every early_read_us_ (hl_opencl_early_reads)
    // while the launch runs the slot's node counts, then its scores and moves, are copied on
    // the control queue (an in-order queue: the counts are read before the scores and moves;
    // the kernel writes a job's count last, after a fence), and a job whose count is nonzero
    // has finished.
    int gpu_finished_early(Slot& s, int* out, int max) {
        Device& d = *s.device;
        int count = 0;
        if (s.early_read) {
            int status = s.early_status.load(std::memory_order_acquire);
            if (status > COMPLETE) return 0;        // still reading
            api.ReleaseEvent(s.early_read);
            s.early_read = nullptr;
            early_reads_++;
            for (int i = s.unreported; status == COMPLETE && i < s.n && count < max; i++) {
                if (s.reported[i] || !s.early_nodes[i]) continue;
                // the same values the launch's own read brings back
                s.host_scores[i] = s.early_scores[i];
                s.host_moves[i] = s.early_moves[i];
                s.host_nodes[i] = s.early_nodes[i];
                s.reported[i] = 1;
                out[count++] = i;
            }
            early_jobs_ += count;
            while (s.unreported < s.n && s.reported[s.unreported]) s.unreported++;
        }
        auto now = std::chrono::steady_clock::now();
        if (!early_read_us_ || s.reading || now - s.early_last < std::chrono::microseconds(early_read_us_) ||
            s.unreported >= s.n)
            return count;
        s.early_last = now;
        if (!s.early_scores) {
            s.early_scores = (int32_t*)aligned(4 * (size_t)capacity_);
            s.early_moves = (uint32_t*)aligned(4 * (size_t)capacity_);
            s.early_nodes = (uint64_t*)aligned(8 * (size_t)capacity_);
        }
        int first = s.unreported, span = s.n - first;
        // a read that cannot be queued only loses the early results
        if (api.EnqueueReadBuffer(d.control, s.nodes, 0, 8 * (size_t)first, 8 * (size_t)span,
                                  s.early_nodes + first, 0, nullptr, nullptr) == 0 &&
            api.EnqueueReadBuffer(d.control, s.scores, 0, 4 * (size_t)first, 4 * (size_t)span,
                                  s.early_scores + first, 0, nullptr, nullptr) == 0 &&
            api.EnqueueReadBuffer(d.control, s.moves, 0, 4 * (size_t)first, 4 * (size_t)span,
                                  s.early_moves + first, 0, nullptr, &s.early_read) == 0) {
            s.early_event = nullptr;
            s.early_status.store(1, std::memory_order_release);
            s.early_event = s.early_read;
            if (watch(s.early_read, on_early_read, s) != 0)
                s.early_status.store(-1, std::memory_order_release);
            api.Flush(d.control);
        }
        return count;
    }

    // The split kernel's arguments for a launch of n jobs (its buffers made at the first one),
    // the last launch's entries cleared; `workers` becomes the launch's lanes.
    cl_kernel prepare_split(Slot& s, int n, size_t& workers) {
        Device& d = *s.device;
        if (!s.split_kernel) make_split(s);
        std::memset(s.host_ctl, 0, 4 * CTL_WORDS);
        if (d.gpu)
            check(api.EnqueueWriteBuffer(s.queue, s.ctl, 0, 0, 4 * CTL_WORDS, s.host_ctl, 0,
                                         nullptr, nullptr), "clEnqueueWriteBuffer", d.name);
        if (s.used_entries) {
            check(api.EnqueueWriteBuffer(s.queue, s.e_state, 0, 0, 4 * (size_t)s.used_entries,
                                         zeros_.data(), 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer", d.name);
            check(api.EnqueueWriteBuffer(s.queue, s.e_result, 0, 0, 8 * (size_t)s.used_entries,
                                         zeros_.data(), 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer", d.name);
            s.used_entries = 0;
        }
        workers = std::max<size_t>(workers, split_lanes_ > 0 ? (size_t)split_lanes_ : d.workers);
        cl_uint jobs = (cl_uint)n, idle = (cl_uint)workers;
        cl_ulong budget = split_budget_;
        cl_int min_depth = split_min_depth_;
        cl_kernel k = s.split_kernel;
        check(api.SetKernelArg(k, 2, sizeof jobs, &jobs), "clSetKernelArg", d.name);
        check(api.SetKernelArg(k, 15, sizeof budget, &budget), "clSetKernelArg", d.name);
        check(api.SetKernelArg(k, 16, sizeof min_depth, &min_depth), "clSetKernelArg", d.name);
        check(api.SetKernelArg(k, 19, sizeof idle, &idle), "clSetKernelArg", d.name);
        check(api.SetKernelArg(k, 20, sizeof budget, &budget), "clSetKernelArg", d.name);
        return k;
    }

    void make_split(Slot& s) {
        Device& d = *s.device;
        cl_int err = 0;
        s.split_kernel = api.CreateKernel(d.program, "search_jobs_split", &err);
        check(err, "clCreateKernel(search_jobs_split)", d.name);
        s.host_ctl = (uint32_t*)aligned(4 * CTL_WORDS);
        auto buffer = [&](size_t bytes) {
            cl_mem mem = api.CreateBuffer(d.context, MEM_READ_WRITE, bytes, nullptr, &err);
            check(err, "clCreateBuffer", d.name);
            return mem;
        };
        // on a CPU device the control words are the host's (finished_early reads the queue)
        s.ctl = d.gpu ? buffer(4 * CTL_WORDS)
                      : api.CreateBuffer(d.context, MEM_READ_WRITE | MEM_USE_HOST_PTR, 4096,
                                         s.host_ctl, &err);
        check(err, "clCreateBuffer", d.name);
        s.sp_alpha = buffer(4 * SPLIT_POINTS);
        s.sp_info = buffer(16 * SPLIT_POINTS);
        s.e_pos = buffer(8 * POSITION_WORDS * SPLIT_ENTRIES);
        s.e_state = buffer(4 * SPLIT_ENTRIES);
        s.e_sp = buffer(4 * SPLIT_ENTRIES);
        s.e_result = buffer(8 * SPLIT_ENTRIES);
        s.times = buffer(8);
        s.used_entries = SPLIT_ENTRIES;     // a new buffer's contents are undefined: clear all
        cl_uint sp_max = SPLIT_POINTS, e_max = SPLIT_ENTRIES, no = 0, yes = 1;
        cl_int min_depth = 0;
        cl_ulong budget = 0;
        const void* args[25] = {&s.positions, &s.params, &no, &s.ctl, &s.scores, &s.moves,
                                &s.nodes, &s.sp_alpha, &s.sp_info, &sp_max, &s.e_pos,
                                &s.e_state, &s.e_sp, &s.e_result, &e_max, &budget, &min_depth,
                                &s.times, &no, &no, &budget, &s.stops, &yes, &d.eval_values,
                                &d.line_values};
        const size_t mem = sizeof(cl_mem);
        const size_t sizes[25] = {mem, mem, sizeof no, mem, mem, mem, mem, mem, mem,
                                  sizeof sp_max, mem, mem, mem, mem, sizeof e_max,
                                  sizeof budget, sizeof min_depth, mem, sizeof no, sizeof no,
                                  sizeof budget, mem, sizeof yes, mem, mem};
        for (cl_uint a = 0; a < 25; a++)
            check(api.SetKernelArg(s.split_kernel, a, sizes[a], args[a]), "clSetKernelArg",
                  d.name);
    }

    void make_slot(Device* d) {
        auto slot = std::make_unique<Slot>();
        Slot& s = *slot;
        s.owner = this;
        s.device = d;
        s.index = (int)slots_.size();
        slots_.push_back(std::move(slot));
        cl_int err = 0;
        s.queue = api.CreateCommandQueue(d->context, d->id, 0, &err);
        check(err, "clCreateCommandQueue", d->name);
        s.kernel = api.CreateKernel(d->program, "search_jobs", &err);
        check(err, "clCreateKernel(search_jobs)", d->name);
        size_t cap = capacity_;
        s.host_positions = (uint64_t*)aligned(8 * POSITION_WORDS * cap);
        s.host_params = (int32_t*)aligned(16 * cap);
        s.host_counter = (uint32_t*)aligned(4);
        s.host_stops = (volatile uint32_t*)aligned(4 * cap);
        s.host_scores = (int32_t*)aligned(4 * cap);
        s.host_moves = (uint32_t*)aligned(4 * cap);
        s.host_nodes = (uint64_t*)aligned(8 * cap);
        auto buffer = [&](cl_bitfield flags, size_t bytes, void* host) {
            cl_mem mem = d->gpu ? api.CreateBuffer(d->context, flags, bytes, nullptr, &err)
                                : api.CreateBuffer(d->context, MEM_READ_WRITE | MEM_USE_HOST_PTR,
                                                   std::max<size_t>(4096, (bytes + 4095) / 4096 * 4096),
                                                   host, &err);
            check(err, "clCreateBuffer", d->name);
            return mem;
        };
        s.positions = buffer(MEM_READ_ONLY, 8 * POSITION_WORDS * cap, s.host_positions);
        s.params = buffer(MEM_READ_ONLY, 16 * cap, s.host_params);
        s.counter = buffer(MEM_READ_WRITE, 4, s.host_counter);
        s.stops = buffer(MEM_READ_WRITE, 4 * cap, (void*)s.host_stops);
        s.scores = buffer(MEM_WRITE_ONLY, 4 * cap, s.host_scores);
        s.moves = buffer(MEM_WRITE_ONLY, 4 * cap, s.host_moves);
        s.nodes = buffer(MEM_WRITE_ONLY, 8 * cap, s.host_nodes);
        if (d->gpu)     // zero between launches (each launch clears its own at its end)
            check(api.EnqueueWriteBuffer(s.queue, s.nodes, 1, 0, 8 * cap, zeros_.data(), 0,
                                         nullptr, nullptr), "clEnqueueWriteBuffer", d->name);
        s.pv_moves = api.CreateBuffer(d->context, MEM_READ_WRITE, 8, nullptr, &err);
        check(err, "clCreateBuffer", d->name);
        s.pv_lengths = api.CreateBuffer(d->context, MEM_READ_WRITE, 8, nullptr, &err);
        check(err, "clCreateBuffer", d->name);
        cl_ulong budget = 0;
        cl_uint jobs = 0, want_pv = 0;
        const void* args[14] = {&s.positions, &s.params, &jobs, &budget, &s.counter, &s.stops,
                                &s.scores, &s.moves, &s.nodes, &want_pv, &s.pv_moves,
                                &s.pv_lengths, &d->eval_values, &d->line_values};
        const size_t sizes[14] = {sizeof(cl_mem), sizeof(cl_mem), sizeof jobs, sizeof budget,
                                  sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                                  sizeof(cl_mem), sizeof want_pv, sizeof(cl_mem), sizeof(cl_mem),
                                  sizeof(cl_mem), sizeof(cl_mem)};
        for (cl_uint a = 0; a < 14; a++)
            check(api.SetKernelArg(s.kernel, a, sizes[a], args[a]), "clSetKernelArg", d->name);
        if ((int)ones_.size() < capacity_) ones_.assign(capacity_, 1);
    }

    int per_device_, capacity_;
    uint64_t split_budget_ = 0;
    int split_min_depth_ = 1, split_lanes_ = 0;
    int early_read_us_ = 0;
    uint64_t early_reads_ = 0, early_jobs_ = 0;
    // what node counts and split entries are cleared with: made once, as the writes that read
    // it run after the call that queues them returns
    std::vector<uint64_t> zeros_;
    uint64_t split_stats_[3] = {0, 0, 0};
    std::vector<std::unique_ptr<Device>> devices_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::vector<uint32_t> ones_;
};

void on_event(cl_event event, cl_int, void* data) {
    Slot* s = static_cast<Slot*>(data);
    Launcher* owner = s->owner;
    if (s->kernel_event.load() == event) {
        s->finished = 1;
        owner->complete();
    }
    owner->callback_returned();     // the last touch: the slot may be freed from here on
}

void on_read_end(cl_event event, cl_int, void* data) {
    Slot* s = static_cast<Slot*>(data);
    Launcher* owner = s->owner;
    if (s->read_event.load() == event) {
        s->read_end = 1;
        owner->complete();
    }
    owner->callback_returned();
}

void on_early_read(cl_event event, cl_int status, void* data) {
    Slot* s = static_cast<Slot*>(data);
    Launcher* owner = s->owner;
    if (s->early_event.load() == event) {
        s->early_status.store(status < 0 ? status : COMPLETE, std::memory_order_release);
        owner->complete();      // the pump looks at once
    }
    owner->callback_returned();
}

// --- the instant launcher ------------------------------------------------------------------------

// Each packed position's material balance for its side to move (the values of piece types 1-7).
// Built twice where the compiler can (x86-64): with the popcnt instruction, which the baseline
// x86-64 lacks, and without; the loader picks the one the processor runs.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("popcnt", "default")))
#endif
void balances(const int32_t* values, const uint64_t* positions, int n, int32_t* scores) {
    for (int i = 0; i < n; i++) {
        const uint64_t* p = positions + i * POSITION_WORDS;
        int balance = 0;
        for (int t = 1; t < 8; t++) {
            uint64_t of_type = (t & 1 ? p[0] : ~p[0]) & (t & 2 ? p[1] : ~p[1]) &
                               (t & 4 ? p[2] : ~p[2]);
            balance += values[t] * (__builtin_popcountll(of_type & p[3])
                                    - __builtin_popcountll(of_type & ~p[3]));
        }
        scores[i] = balance;
    }
}

class InstantLauncher : public Launcher {
public:
    explicit InstantLauncher(const int32_t* type_values) {
        std::memcpy(values_, type_values, sizeof values_);
    }
    bool instant() const override { return true; }
    void run_instant(const uint64_t* positions, int n, int32_t* scores, uint32_t* moves,
                     uint64_t* nodes) override {
        balances(values_, positions, n, scores);
        for (int i = 0; i < n; i++) {
            moves[i] = 0;
            nodes[i] = 1;
        }
    }
    int slots() const override { return 0; }
    int capacity() const override { return 0; }
    int free_slot(const std::vector<char>&) const override { return -1; }
    Inputs inputs(int) override { return {nullptr, nullptr}; }
    bool start(int, int, std::string& error) override {
        error = "the instant launcher answers in the caller's thread";
        return false;
    }
    int poll(int, std::string&) override { return 1; }
    Outputs outputs(int) override { return {nullptr, nullptr, nullptr}; }
    void stop(int, int, int) override {}
    void release(int) override {}

private:
    int32_t values_[8];
};

void copy_error(const std::string& text, char* error) {
    size_t length = std::min<size_t>(text.size(), 199);
    std::memcpy(error, text.data(), length);
    error[length] = 0;
}

template <typename F>
bool load(void* lib, const char* name, F& into) {
    into = reinterpret_cast<F>(dlsym(lib, name));
    return into != nullptr;
}

}  // namespace
}  // namespace hostlaunch

using namespace hostlaunch;

// --- the interface hostsearch.py calls (ctypes) -------------------------------------------------

extern "C" {

// Open the OpenCL library at `path` (the one pyopencl loaded). 0, or -1 and the reason in
// `error` (room for 200 bytes).
int hl_opencl_load(const char* path, char* error) {
    if (api_loaded) return 0;
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        copy_error(std::string("cannot open the OpenCL library: ") + dlerror(), error);
        return -1;
    }
    Api a{};
#define CL_LOAD(field) if (!load(lib, "cl" #field, a.field)) { \
        copy_error("the OpenCL library has no cl" #field, error); return -1; }
    CL_LOAD(CreateCommandQueue) CL_LOAD(CreateBuffer) CL_LOAD(CreateKernel)
    CL_LOAD(SetKernelArg) CL_LOAD(EnqueueWriteBuffer) CL_LOAD(EnqueueReadBuffer)
    CL_LOAD(EnqueueNDRangeKernel) CL_LOAD(Flush) CL_LOAD(Finish) CL_LOAD(SetEventCallback)
    CL_LOAD(GetEventInfo) CL_LOAD(WaitForEvents) CL_LOAD(ReleaseEvent) CL_LOAD(ReleaseMemObject)
    CL_LOAD(ReleaseKernel) CL_LOAD(ReleaseCommandQueue) CL_LOAD(RetainContext)
    CL_LOAD(ReleaseContext) CL_LOAD(RetainProgram) CL_LOAD(ReleaseProgram)
    CL_LOAD(RetainMemObject)
#undef CL_LOAD
    api = a;
    api_loaded = true;
    return 0;
}

void* hl_opencl_new(int slots_per_device, int capacity) {
    return new OpenCLLauncher(std::max(1, slots_per_device), std::max(1, capacity));
}

// One device of the launcher: pyopencl's handles (int_ptr) of its context, device, built
// program and evaluation and attack tables; the work-group size and the lanes it keeps busy;
// whether it runs a launch in the thread that queues it (PoCL's basic device: inline launches).
// 0, or -1 and the reason in `error`.
int hl_opencl_add(void* launcher, intptr_t context, intptr_t device, intptr_t program,
                  intptr_t eval_values, intptr_t line_values, int local, int workers, int gpu,
                  int synchronous, const char* name, char* error) {
    auto d = std::make_unique<Device>();
    d->name = name;
    d->context = reinterpret_cast<cl_context>(context);
    d->id = reinterpret_cast<cl_device_id>(device);
    d->program = reinterpret_cast<cl_program>(program);
    d->eval_values = reinterpret_cast<cl_mem>(eval_values);
    d->line_values = reinterpret_cast<cl_mem>(line_values);
    d->local = (size_t)std::max(1, local);
    d->workers = (size_t)std::max(1, workers);
    d->gpu = gpu != 0;
    d->synchronous = synchronous != 0 && !d->gpu;
    try {
        static_cast<OpenCLLauncher*>(launcher)->add(std::move(d));
    } catch (Failure& f) {
        copy_error(f.text, error);
        return -1;
    }
    return 0;
}

// Later launches of an OpenCL launcher split long jobs on the device (set_split above).
void hl_opencl_split(void* launcher, uint64_t budget, int min_depth, int lanes) {
    static_cast<OpenCLLauncher*>(launcher)->set_split(budget, min_depth, lanes);
}

// A GPU launch's finished jobs are read every `us` microseconds while it runs (0: never).
void hl_opencl_early_reads(void* launcher, int us) {
    static_cast<OpenCLLauncher*>(launcher)->set_early_reads(us);
}

// out[5]: split launches ended, nodes published, children searched by helpers; a GPU's reads of
// finished jobs while their launches ran, and the jobs they handed back (so far).
void hl_opencl_stats(void* launcher, uint64_t* out) {
    static_cast<OpenCLLauncher*>(launcher)->stats(out);
}

// type_values: the material value of each piece type 0..7 (0 for none).
void* hl_instant_new(const int32_t* type_values) { return new InstantLauncher(type_values); }

void hl_free(void* launcher) { delete static_cast<Launcher*>(launcher); }

}  // extern "C"

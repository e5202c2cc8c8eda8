"""The OpenCL backend: the search contract on any OpenCL device, node for node.

- ``moves``: the contract's generator, make and TestCheck in a kernel (``list_moves``).
- ``search`` / ``search_many``: one leaf job per work-item (``search_jobs``); thousands of jobs
  go in one launch, work-items taking the next job from a shared counter. ``start_search``
  enqueues a launch and returns at once (a ``SearchLaunch``: ``done``, ``results``, ``stop``),
  so that the engine's executor prepares the next launch while one runs; the buffers of a
  launch are kept and reused (grow-only), and its results come back in one wait.
- ``perft``: the host expands the tree breadth-first near the root (a count pass, a prefix sum,
  a write pass per ply, on the device) until the frontier fills the device, then every frontier
  position is finished depth-first by one work-item. Two counting modes: ``bulk`` counts the
  legal moves of the last ply without making them; ``make`` makes every leaf with the
  contract's generator and TestCheck, as the accelerator does.

docs/opencl.md describes the mapping, the memory layout and the measured limits.
"""

import dataclasses
import threading
import time

import numpy as np

from chessaccel.contract.defs import MAX_DEPTH, MAX_PLY
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS
from chessaccel.host.backends.base import (Backend, BackendError, Capabilities, JobResult,
                                           PerftResult, first_line)
from chessaccel.model.search import SearchError, job_problem
from .device import OpenCLError, device_count, open_device
from .layout import MAX_MOVES, POSITION_WORDS, decode_moves, evaluation_overrides, pack_positions

__all__ = ["OpenCLBackend", "SearchLaunch", "COUNT_MODES", "SPLIT_BUDGET"]

#: Perft counting modes: bulk-count the last ply, or make every leaf (the hardware's way).
COUNT_MODES = ("bulk", "make")
#: Nodes a job may count before it is split (run_search_split on the device; lab/hostsplit.py on
#: the host): docs/opencl.md, "Splitting long jobs".
SPLIT_BUDGET = 100_000
#: Lanes per compute unit that stay without work to help (run_search_split): none was best
#: on the H100 (docs/opencl.md): lanes that finish their work take the parts as they come.
SPLIT_IDLE = 0
#: Deepest remainder the bulk leaf kernel finishes per work-item (perft_below).
_BULK_LEAF_MAX = 3
#: PERFT_LEAF's bit of the fused leaf (perft.cl, perft_fused_N): the last breadth-first ply
#: written as parent indices (4 bytes) and moves (2) rather than positions
FUSED_LEAF = 128
FUSED_CHILD_BYTES = 6
#: What a raised expansion error flag means (a child list's length against its count)
EXPANSION_DISAGREES = "perft expansion: the move count and the move list disagree (a kernel bug)"
#: PERFT_LEAF's bit of the queued levels (perft.cl, scan_totals): each level of the expansion
#: enqueued without a wait on the host between its passes (the prefix sum's group totals summed
#: on the device, the expansion's error flag read once at the end); one read a level, its
#: number of children, which sizes the next launch.
QUEUED_LEVELS = 8192
#: PERFT_LEAF's bit of expand_moves' children gathered in local memory and written by the whole
#: work-group (perft.cl), and the work-group size it is launched with (its local buffer holds the
#: children of that many parents when they have 64 moves each on average, or fewer)
STAGED_CHILDREN = 16384
STAGED_LOCAL_SIZE = 64
#: PERFT_LEAF's bit of the top levels expanded in one launch by one work-group, one position a
#: lane (perft.cl, expand_top; with the expansion's kernels from the perft program and the queued
#: levels' error flag), and the most work-items its group may have (perft.cl's TOP_MAX_LANES)
TOP_LEVELS = 131072
TOP_LEVELS_WITH = 2048 | QUEUED_LEVELS
TOP_MAX_LANES = 1024
#: PERFT_LEAF's bit of `expand` in several lanes a position (perft.cl) where the level is smaller
#: than the device's lanes (compute units x SPLIT_LANES_PER_UNIT): 2, 4 or 8 lanes, each making
#: every second, fourth or eighth child, so that more of the device works on a small level
SPLIT_EXPAND = 262144
SPLIT_LANES_PER_UNIT = 2048
SPLIT_MOST = 8
#: Work-group size of the bulk perft and expansion kernels on a GPU: measured on the H100 against
#: 64 when the attack tables were in local memory (256 work-items shared one copy), with the
#: magic tables on the H200 against 128 and 512, and 512 since the fused leaf of 2026-11-30
#: (PERFT_LEAF 185): as fast on the start position, 1-2 % faster on Kiwipete, whose positions
#: differ more (its lanes are sorted over more positions; docs/opencl.md, "Beside perft_gpu").
PERFT_LOCAL_SIZE = 512
#: The least room (jobs) a search launch's pooled buffers are made with; they grow by powers of
#: two and never shrink.
_SEARCH_MIN_CAPACITY = 64
#: Bytes a launch's one upload or read-back may carry beyond what its jobs use (the room of
#: larger launches kept in the pooled buffers) before it is split into one copy per field.
_COPY_SLACK = 64 << 10


def _check_job(board, depth, alpha=0, beta=1, perft=False):
    """Refuse what the accelerator refuses, in the model's words (model.search.job_problem)."""
    if isinstance(depth, np.integer):
        depth = int(depth)
    problem = job_problem(board, depth, int(alpha), int(beta), perft)
    if problem:
        raise SearchError(problem)


def _check_kings(board):
    # the kernels find each side's king in its bit-plane: a job needs exactly one of each
    _check_job(board, 0, perft=True)


def _aligned_zeros(n, dtype, align=4096):
    """A zeroed array whose data starts on an ``align``-byte boundary: PoCL uses a
    USE_HOST_PTR buffer's own memory only when it is aligned (else it copies it)."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.zeros(n * itemsize + align, dtype=np.uint8)
    skip = -raw.ctypes.data % align
    return raw[skip:skip + n * itemsize].view(dtype)


class _SearchSlot:
    """The pooled buffers of one search launch (OpenCLBackend._fit_slot): device buffers for
    ``capacity`` jobs, the host arrays its results are read into, its stop flags."""

    def __init__(self):
        self.capacity = 0
        self.pv_capacity = 0
        self.buffers = {}
        self.offsets = {}           # field -> (byte offset in its buffer, bytes, dtype, per job)
        self.inputs = self.outputs = self.control = None    # the host arrays of the buffers
        self.events = None          # the launch's copy events, alive until it ends
        self.ones = np.ones(0, dtype=np.uint32)
        self.host_flags = False
        self.stop_events = []       # the stops written through the control queue (a GPU)
        self.shape = None
        self.queue = None           # the slot's own command queue


class SearchLaunch:
    """One launch of search_jobs in flight (``OpenCLBackend.start_search``, ``start_packed``).

    ``done()``: whether it has finished (results read back included). ``results()``: wait for it and
    return its JobResults in the jobs' order; ``arrays()``: the same as (scores, packed best
    moves, nodes) arrays, not decoded (the buffers serve the next launch once either is read).
    ``stop(start, end)``: jobs start..end-1 are given up where they stand (polled every 1,024
    nodes and when a job is taken): their results are not real, and the caller discards them.
    ``black`` (whether each job's side to move is black) is needed only to decode moves.
    """

    def __init__(self, backend, slot, n, black, event):
        self._backend = backend
        self._slot = slot
        self._n = n
        self._black = black
        self._event = event
        self._arrays = None
        self._results = None
        self._error = None
        self._lock = threading.Lock()       # stop (a search thread) against results (another)
        self.started = time.perf_counter()

    def __len__(self):
        return self._n

    def done(self):
        if self._event is None or self._arrays is not None:
            return True
        return self._event.command_execution_status <= 0    # COMPLETE (0) or an error (< 0)

    def stop(self, start, end):
        with self._lock:
            if self._arrays is None and self._event is not None:
                self._backend._stop_jobs(self._slot, max(0, start), min(end, self._n))

    def arrays(self):
        """Wait for the launch: copies of its (scores, packed best moves, nodes) arrays in the
        jobs' order (what the compiled host search takes back as they are)."""
        return self._read()

    def results(self):
        """Wait for the launch: its JobResults (no PV: ``[best_move]``)."""
        scores, moves, nodes = self._read()
        with self._lock:
            if self._results is None:
                best = decode_moves(moves, self._black)
                scores, nodes = scores.tolist(), nodes.tolist()
                self._results = [JobResult(scores[i], best[i], [best[i]] if best[i] else [],
                                           nodes[i]) for i in range(self._n)]
            return self._results

    def _read(self):
        with self._lock:
            if self._arrays is not None:
                return self._arrays
            if self._error is not None:
                raise self._error
            event = self._event
        backend, slot, n = self._backend, self._slot, self._n
        try:
            if event is not None:
                backend._guard("search", event.wait)    # unlocked: stop() may come meanwhile
        except Exception as error:
            with self._lock:
                self._error = error
            raise
        with self._lock:
            if self._arrays is not None:
                return self._arrays
            if event is None:       # an empty launch
                self._arrays = (np.zeros(0, np.int32), np.zeros(0, np.uint32),
                                np.zeros(0, np.uint64))
                return self._arrays
            try:
                for stop in slot.stop_events:
                    # a stop still queued must not land in the slot's next launch
                    backend._guard("stop", stop.wait)
                arrays = (backend._view(slot, "scores", n).copy(),
                          backend._view(slot, "moves", n).copy(),
                          backend._view(slot, "nodes", n).copy())
            except Exception as error:
                self._error = error
                raise
            finally:
                slot.events = None
                slot.stop_events = []
                self._event = None
                backend._give_slot(slot)
            self._arrays = arrays
            local, global_size = slot.shape or (0, 0)
            backend.last_run = {"kernel": "search_jobs", "jobs": n, "work_items": global_size,
                                "local_size": local, "nodes": int(arrays[2].sum()),
                                "seconds": time.perf_counter() - self.started}
            return arrays


class OpenCLBackend(Backend):
    """``opencl`` or ``opencl:PLATFORM-SUBSTRING``. The device is opened (and the program
    built or loaded from the cache) on first use, so a missing device is a run-time failure
    (exit 1), not bad input.

    Tunables (the benchmark sweeps them): ``local_size`` (work-group size on a GPU),
    ``perft_local_size`` (that of the bulk perft and expansion kernels; default ``local_size``
    when given, else PERFT_LOCAL_SIZE on a GPU), ``threads_per_unit`` (work-items per compute
    unit for the job-queue kernels),
    ``bulk_leaf_depth`` (plies finished per work-item in bulk perft), ``frontier_target``
    (frontier size per compute unit at which breadth-first expansion stops).
    """

    count_modes = COUNT_MODES
    #: a batch is one kernel launch (not declared parallel, so the search sends it no
    #: speculative brothers: docs/journal/opencl.md, "Leaf search on the H100"), started asynchronously
    #: (start_search); ``launch_jobs`` comes from the device once it is open (``open``):
    #: compute units x lanes per unit
    capabilities = Capabilities(batch=True, async_launches=True)
    #: every evaluation of the contract ("terms" is a program of its own, built with
    #: EVAL_TERMS = 1)
    evaluations = EVALUATIONS

    @classmethod
    def usage(cls, scheme):
        return f"{scheme}[:PLATFORM[:INDEX|I,J,...|all]]"

    @classmethod
    def from_spec(cls, spec, *, accelerators=None, log=None, evaluation=DEFAULT_EVALUATION):
        """``opencl``: the first GPU (else CPU) of any platform; ``opencl:PLATFORM``: the first
        device of the platform whose name or vendor holds PLATFORM; ``opencl:PLATFORM:INDEX``:
        its device INDEX (0, 1, ...); ``opencl:PLATFORM:0,1`` or ``opencl:PLATFORM:all``:
        several devices as one backend (devices.py). ``evaluation``: the static evaluation the
        kernels are built with."""
        if spec.argument is None:
            return cls(evaluation=evaluation)
        platform, colon, index = spec.argument.partition(":")
        if not platform.strip():
            raise BackendError("opencl backend needs a platform name after the colon: "
                               "--backend opencl:NVIDIA or opencl:Portable")
        if not colon:
            return cls(platform, evaluation=evaluation)
        if index == "all" or "," in index:
            from .devices import OpenCLDevices
            indices = None if index == "all" else index.split(",")
            if indices is not None and not all(i.isdigit() for i in indices):
                raise BackendError(f"opencl device indices must be numbers 0, 1, ..., got "
                                   f"{index!r} (--backend opencl:NVIDIA:0,1 or opencl:NVIDIA:all)")
            return OpenCLDevices(platform, indices and [int(i) for i in indices],
                                 evaluation=evaluation)
        if not index.isdigit():
            raise BackendError(f"opencl device index must be a number 0, 1, ..., got {index!r} "
                               f"(--backend opencl:NVIDIA:1, opencl:NVIDIA:0,1 or "
                               f"opencl:NVIDIA:all)")
        return cls(platform, device_index=int(index), evaluation=evaluation)

    def __init__(self, platform=None, *, device_index=None, local_size=None,
                 threads_per_unit=None, bulk_leaf_depth=2, make_leaf_depth=3,
                 frontier_target=None, memory_fraction=0.25, overrides=None,
                 perft_local_size=None, evaluation=DEFAULT_EVALUATION):
        self.platform = platform
        self.device_index = device_index
        #: the static evaluation ("pst" or "terms"): a kernel constant (EVAL_TERMS), so each is
        #: a program of its own; "pst" leaves the overrides as they are (its program is today's)
        self.evaluation = evaluation
        extra = evaluation_overrides(evaluation)
        if evaluation != DEFAULT_EVALUATION:
            overrides = dict(overrides or {}, **extra)
        self.overrides = overrides
        self.name = "opencl" + (f":{platform}" if platform else "") + \
            (f":{device_index}" if device_index is not None else "")
        self._device = None
        self.local_size = local_size
        self.perft_local_size = perft_local_size
        self.threads_per_unit = threads_per_unit
        self.bulk_leaf_depth = bulk_leaf_depth
        self.make_leaf_depth = make_leaf_depth
        self.frontier_target = frontier_target
        self.memory_fraction = memory_fraction
        #: figures of the last call, for the benchmark: kernel seconds, launches, frontier sizes
        self.last_run = {}
        #: device buffers of the perft expansion kept from call to call (_pooled)
        self._pool = {}
        #: the pooled buffers of search launches not in flight (_SearchSlot), and its lock
        self._free_slots = []
        self._slots_lock = threading.Lock()
        #: a second queue for the stop flags of launches in flight (a GPU; None until used)
        self._control_queue = None

    # --- device --------------------------------------------------------------------------------

    @property
    def device(self):
        if self._device is None:
            d = open_device(self.platform, self.overrides, index=self.device_index)
            _, per_unit, _ = self._defaults(d)
            self.capabilities = dataclasses.replace(type(self).capabilities,
                                                    launch_jobs=d.compute_units * per_unit)
            self._device = d
        return self._device

    def open(self):
        self.device
        return self

    def describe(self):
        return self.device.describe()

    def _cl(self):
        return self.device.cl

    def _defaults(self, d=None):
        d = d or self.device
        local = self.local_size or (64 if d.is_gpu else 1)
        # measured on the H100 (docs/opencl.md): more work-items per unit only slow the tail
        per_unit = self.threads_per_unit or (128 if d.is_gpu else 1)
        target = self.frontier_target or (8192 if d.is_gpu else 64)
        return local, per_unit, target

    def _perft_local(self):
        """Work-group size of the bulk perft and expansion kernels (a power of two)."""
        d = self.device
        local = self.perft_local_size or self.local_size or (PERFT_LOCAL_SIZE if d.is_gpu else 1)
        return 1 << (int(local).bit_length() - 1)      # the reduction wants a power of two

    def _guard(self, what, call, *args, **kwargs):
        """Run a device call; OpenCL failures become one-line OpenCLErrors."""
        cl = self._cl()
        try:
            return call(*args, **kwargs)
        except cl.MemoryError as e:
            raise OpenCLError(f"{self.describe()} ran out of memory during {what} "
                              f"({first_line(e)})") from None
        except cl.Error as e:
            text = first_line(e)
            if "OUT_OF_RESOURCES" in text or "MEM_OBJECT_ALLOCATION" in text or "OUT_OF_HOST" in text:
                raise OpenCLError(f"{self.describe()} ran out of memory during {what} ({text})") from None
            raise OpenCLError(f"OpenCL {what} failed on {self.describe()}: {text}") from None

    def _buffer(self, array=None, nbytes=None, write=False):
        cl = self._cl()
        ctx = self.device.context
        mf = cl.mem_flags
        if array is not None:
            flags = (mf.READ_WRITE if write else mf.READ_ONLY) | mf.COPY_HOST_PTR
            return self._guard("allocation", cl.Buffer, ctx, flags, 0, np.ascontiguousarray(array))
        return self._guard("allocation", cl.Buffer, ctx, mf.READ_WRITE, max(int(nbytes), 8))

    def _read(self, buf, dtype, count):
        out = np.empty(count, dtype=dtype)
        if count:
            self._guard("read-back", self._cl().enqueue_copy, self.device.queue, out, buf)
        return out

    def _run(self, what, kernel, global_size, local_size, *args, wait=True):
        """Launch and (``wait``) wait; every kernel takes the attack tables as its last
        argument. The queue is in order: a launch not waited for is done before the next
        command starts, and a blocking read waits for it."""
        queue = self.device.queue
        kernel.set_args(*args, self.device.line_values)
        self._guard(what, self._cl().enqueue_nd_range_kernel, queue, kernel,
                    (int(global_size),), None if local_size is None else (int(local_size),))
        if wait:
            self._guard(what, queue.finish)

    def kernel(self, name):
        return self.device.kernel(name)

    def close(self):
        self._pool.clear()
        with self._slots_lock:
            self._free_slots.clear()
        self._control_queue = None
        self._device = None

    # --- moves ---------------------------------------------------------------------------------

    def moves(self, board):
        return self.moves_many([board])[0]

    def moves_many(self, boards):
        """The legal moves of each board in generation order, all in one launch."""
        boards = list(boards)
        for board in boards:
            _check_kings(board)
        n = len(boards)
        if not n:
            return []
        buf = self._buffer(pack_positions(boards))
        out = self._buffer(nbytes=MAX_MOVES * 2 * n)
        counts = self._buffer(nbytes=4 * n)
        self._launch_1d("move listing", "list_moves", n, buf, np.uint32(n), out, counts)
        counts = self._read(counts, np.uint32, n)
        packed = self._read(out, np.uint16, MAX_MOVES * n).reshape(n, MAX_MOVES)
        return [decode_moves(packed[i, :counts[i]], boards[i].side == 1) for i in range(n)]

    # --- search --------------------------------------------------------------------------------

    def search(self, board, depth, alpha, beta):
        return self.search_many([(board, depth, alpha, beta)], pv=True)[0]

    def search_many(self, jobs, pv=False):
        """Run every (board, depth, alpha, beta) job in one launch: a list of JobResults.
        ``pv=True`` returns the principal variation as the model does; otherwise ``pv`` is
        ``[best_move]`` (as the hardware)."""
        jobs = list(jobs)
        if not jobs:
            return []
        if not pv:
            return self.start_search(jobs).results()
        positions, params, black = self._pack_jobs(jobs)
        raw = self.run_search(positions, params, pv=True)
        best = decode_moves(raw["best_moves"], black)
        results = []
        for i in range(len(jobs)):
            length = int(raw["pv_lengths"][i])
            plies = np.arange(length)
            line = decode_moves(raw["pv_moves"][i, :length], black[i] ^ (plies & 1).astype(bool))
            results.append(JobResult(int(raw["scores"][i]), best[i], line, int(raw["nodes"][i])))
        return results

    def start_search(self, jobs):
        """Enqueue one launch of ``jobs`` ((board, depth, alpha, beta) each) and return at once:
        a SearchLaunch, whose ``results()`` waits for the launch and gives the JobResults (no
        PV: ``[best_move]``), and whose ``stop(start, end)`` gives up jobs start..end-1 where
        they stand (their results are then not real: the caller discards them). A bad job is
        refused here (SearchError), before anything is enqueued."""
        jobs = list(jobs)
        positions, params, black = self._pack_jobs(jobs)
        return self._start(positions, params, black)

    def start_packed(self, positions, params):
        """``start_search`` of jobs already packed ((N, POSITION_WORDS) positions in their side
        to move's frame, (N, 4) params: depth, alpha, beta, 0), as the compiled host search
        makes them from legal positions and the contract's windows; ``arrays()`` gives the
        results. Nothing is checked here: the caller vouches for the jobs."""
        return self._start(positions, params, None)

    def native_launches(self):
        """What the compiled host search needs to launch search_jobs on this device itself
        (hostlaunch.cpp, through the OpenCL C API, with no Python per launch): ("opencl",
        [the device's handles]), the program, tables and context staying pyopencl's."""
        return "opencl", [self._native_handles(d) for d in self._native_devices()]

    def _native_devices(self):
        """The devices the compiled search launches on: this one; on PoCL's basic devices (one
        core each, their launches run inline: device.py's ``synchronous``), every basic device
        of the platform unless the backend names its device."""
        d = self.device
        if not d.synchronous or self.device_index is not None:
            return [d]
        devices = [d]
        for index in range(1, device_count(self.platform)):
            other = open_device(self.platform, self.overrides, index=index)
            if other.synchronous and other.platform_name == d.platform_name:
                devices.append(other)
        return devices

    def _native_handles(self, d=None):
        d = d or self.device
        local, per_unit, _ = self._defaults(d)
        return {"context": d.context.int_ptr, "device": d.device.int_ptr,
                "program": d.program.int_ptr, "eval_values": d.eval_values.int_ptr,
                "line_values": d.line_values.int_ptr, "local": int(local),
                "workers": int(d.compute_units * per_unit), "gpu": bool(d.is_gpu),
                "synchronous": d.synchronous, "name": d.describe() or self.name}

    def _start(self, positions, params, black):
        n = len(positions)
        if not n:
            return SearchLaunch(self, None, 0, black, None)
        slot = self._take_slot()
        try:
            event = self._enqueue_search(slot, positions, params)
        except BaseException:
            self._give_slot(slot)
            raise
        return SearchLaunch(self, slot, n, black, event)

    def _pack_jobs(self, jobs):
        """positions (N, POSITION_WORDS), params (N, 4) and whether each side to move is black,
        after refusing what the accelerator refuses."""
        for board, depth, alpha, beta in jobs:
            _check_job(board, depth, alpha, beta)
        n = len(jobs)
        boards = [job[0] for job in jobs]
        positions = pack_positions(boards)
        params = np.zeros((n, 4), dtype=np.int32)
        if n:
            params[:, :3] = [job[1:] for job in jobs]
        black = np.fromiter((b.side == 1 for b in boards), dtype=bool, count=n)
        return positions, params, black

    def _search_shape(self, n):
        """(work-group size, global size) of a search launch over ``n`` jobs: as many lanes as
        the device keeps busy, never more than jobs (and at least one group)."""
        local, per_unit, _ = self._defaults()
        workers = max(1, min(n, self.device.compute_units * per_unit))
        return local, -(-workers // local) * local

    def _read_results(self, scores, moves, nodes, n):
        return {"scores": self._read(scores, np.int32, n),
                "best_moves": self._read(moves, np.uint32, n),
                "nodes": self._read(nodes, np.uint64, n)}

    def _job_buffers(self, positions, params):
        """Device buffers of the jobs in and the results out, made for one call
        (run_search_split; search launches use _SearchSlot's pooled ones)."""
        n = len(positions)
        return {"positions": self._buffer(positions), "params": self._buffer(params),
                "scores": self._buffer(nbytes=4 * n), "moves": self._buffer(nbytes=4 * n),
                "nodes": self._buffer(nbytes=8 * n)}

    # --- search launches: pooled buffers, asynchronous ---------------------------------------

    def _take_slot(self):
        """The buffers of one launch: a free slot (buffers kept from earlier launches) or a new,
        empty one. A slot is in one launch at a time; ``_give_slot`` returns it."""
        with self._slots_lock:
            if self._free_slots:
                return self._free_slots.pop()
        return _SearchSlot()

    def _give_slot(self, slot):
        with self._slots_lock:
            self._free_slots.append(slot)

    def _fit_slot(self, slot, n, pv):
        """Grow ``slot``'s buffers to hold ``n`` jobs (powers of two; never shrunk). Three
        device buffers, each cut into the kernel's arguments (sub-buffers on the device's
        alignment), so that a launch is one upload, one read and at most one reset: ``inputs``
        (positions, params), ``outputs`` (scores, moves, nodes) and ``control`` (the job
        counter, the stop flags), with a host array of the same layout for each."""
        cl = self._cl()
        d = self.device
        mf = cl.mem_flags
        if slot.capacity < n:
            capacity = max(_SEARCH_MIN_CAPACITY, 1 << (n - 1).bit_length())
            slot.buffers = {}                       # the old ones go before the new are made
            align = max(8, d.device.mem_base_addr_align // 8)
            parts = {"inputs": (("positions", np.uint64, POSITION_WORDS),
                                ("params", np.int32, 4)),
                     "outputs": (("scores", np.int32, 1), ("moves", np.uint32, 1),
                                 ("nodes", np.uint64, 1)),
                     "control": (("counter", np.uint32, 0), ("stop", np.uint32, 1))}
            slot.offsets = {}
            for whole, fields in parts.items():
                offset = 0
                for name, dtype, per_job in fields:
                    size = np.dtype(dtype).itemsize * max(per_job * capacity, 1)
                    slot.offsets[name] = (offset, size, dtype, per_job)
                    offset = -(-(offset + size) // align) * align
                host = _aligned_zeros(offset, np.uint8)
                if whole == "control" and not d.is_gpu:
                    # on a CPU device the kernel reads the host's own array in place (PoCL
                    # keeps an aligned USE_HOST_PTR buffer there): a stop flag the host sets
                    # lands at once, and resetting the counter and the flags is a host write
                    buf = self._guard("allocation", cl.Buffer, d.context,
                                      mf.READ_WRITE | mf.USE_HOST_PTR, 0, host)
                else:
                    buf = self._buffer(nbytes=offset)
                slot.buffers[whole] = buf
                setattr(slot, whole, host)
                for name, dtype, per_job in fields:
                    start, size, _, _ = slot.offsets[name]
                    slot.buffers[name] = self._guard("allocation", buf.get_sub_region, start,
                                                     size)
            slot.host_flags = not d.is_gpu
            slot.capacity = capacity
            slot.pv_capacity = 0
        stride = (self.overrides or {}).get("MAX_PLY", MAX_PLY) + 1   # the kernel's PV_STRIDE
        want = n if pv else 0
        if slot.pv_capacity < want or "pv_moves" not in slot.buffers:
            room = max(want, slot.pv_capacity)
            slot.buffers["pv_moves"] = self._buffer(nbytes=2 * stride * stride * room or 8)
            slot.buffers["pv_lengths"] = self._buffer(nbytes=stride * room or 8)
            slot.pv_capacity = room
        return slot.buffers

    def _view(self, slot, name, n):
        """The first ``n`` jobs' entries of field ``name`` in its host array."""
        start, _, dtype, per_job = slot.offsets[name]
        whole = {"positions": slot.inputs, "params": slot.inputs, "scores": slot.outputs,
                 "moves": slot.outputs, "nodes": slot.outputs, "counter": slot.control,
                 "stop": slot.control}[name]
        count = max(per_job, 1) * n
        view = whole[start:start + np.dtype(dtype).itemsize * count].view(dtype)
        return view.reshape(n, per_job) if per_job > 1 else view

    def _span(self, slot, name, n):
        """Bytes of a whole buffer to copy so that field ``name`` holds its first ``n`` jobs'
        entries: the whole buffer up to there, unless that would carry more than
        _COPY_SLACK bytes the launch does not use (then None: copy the fields one by one)."""
        start, _, dtype, per_job = slot.offsets[name]
        end = start + np.dtype(dtype).itemsize * max(per_job, 1) * n
        used = sum(np.dtype(o[2]).itemsize * max(o[3], 1) * n for o in slot.offsets.values())
        return end if end - used <= _COPY_SLACK else None

    def _copy_fields(self, queue, slot, whole, names, n, upload, events):
        """Copy fields ``names`` of buffer ``whole`` for ``n`` jobs, to the device (``upload``)
        or back, without waiting: one copy of their span when it is short, else one each."""
        cl = self._cl()
        host, buf = getattr(slot, whole), slot.buffers[whole]
        span = self._span(slot, names[-1], n)
        pieces = [(0, span)] if span is not None else [
            (slot.offsets[name][0], self._view(slot, name, n).nbytes) for name in names]
        for start, size in pieces:
            if size == 0:
                continue
            chunk = host[start:start + size]
            if upload:
                events.append(self._guard("upload", cl.enqueue_copy, queue, buf, chunk,
                                          dst_offset=start, is_blocking=False))
            else:
                events.append(self._guard("read-back", cl.enqueue_copy, queue, chunk, buf,
                                          src_offset=start, is_blocking=False))

    def _enqueue_search(self, slot, positions, params, pv=False, node_budget=0):
        """Enqueue, without waiting, the jobs' upload (one copy), the counter's and stop flags'
        reset (none on a CPU device, one copy on a GPU), the search kernel and the read of its
        results into ``slot``'s host array (one copy): the event of the last (the queue is in
        order: when it completes, everything has)."""
        cl = self._cl()
        if slot.queue is None:
            # a queue of its own: launches of different slots run side by side on the device
            # (a launch lasts as long as its longest job; others need not wait for it)
            slot.queue = self._guard("search", cl.CommandQueue, self.device.context)
        queue = slot.queue
        n = len(positions)
        b = self._fit_slot(slot, n, pv)
        local, global_size = self._search_shape(n)
        self._view(slot, "positions", n)[...] = positions
        self._view(slot, "params", n)[...] = params
        # pyopencl's events of copies to and from host arrays wait for the copy when they are
        # dropped: the slot keeps them until the launch's results are read
        events = slot.events = []
        self._copy_fields(queue, slot, "inputs", ("positions", "params"), n, True, events)
        self._view(slot, "counter", 1)[0] = 0
        self._view(slot, "stop", n)[...] = 0    # no launch of this slot runs now
        if not slot.host_flags:
            self._copy_fields(queue, slot, "control", ("counter", "stop"), n, True, events)
        kernel = self.kernel("search_jobs")
        kernel.set_args(b["positions"], b["params"], np.uint32(n), np.uint64(node_budget),
                        b["counter"], b["stop"], b["scores"], b["moves"], b["nodes"],
                        np.uint32(1 if pv else 0), b["pv_moves"], b["pv_lengths"],
                        self.device.eval_values, self.device.line_values)
        self._guard("search", cl.enqueue_nd_range_kernel, queue, kernel, (int(global_size),),
                    (int(local),))
        slot.shape = (local, global_size)
        self._copy_fields(queue, slot, "outputs", ("scores", "moves", "nodes"), n, False, events)
        self._guard("search", queue.flush)
        return events[-1]

    def _stop_jobs(self, slot, start, end):
        """Set the stop flags of jobs start..end-1 of the launch in ``slot`` (it may be running)."""
        if end <= start:
            return
        if slot.host_flags:
            self._view(slot, "stop", end)[start:end] = 1
            return
        cl = self._cl()
        if self._control_queue is None:
            self._control_queue = self._guard("stop", cl.CommandQueue, self.device.context)
        if len(slot.ones) < end - start:
            slot.ones = np.ones(slot.capacity, dtype=np.uint32)
        slot.stop_events.append(self._guard("stop", cl.enqueue_copy, self._control_queue,
                                            slot.buffers["stop"], slot.ones[:end - start],
                                            dst_offset=4 * start, is_blocking=False))
        self._guard("stop", self._control_queue.flush)

    def run_search(self, positions, params, pv=False, node_budget=0):
        """The search kernel on packed arrays (positions: (N, POSITION_WORDS) uint64, params:
        (N, 4) int32 depth/alpha/beta/ply, ply 0 for a whole job). Returns numpy arrays;
        ``last_run`` gets the timing. A job that would count more than ``node_budget`` nodes
        (0: no budget) is given up and comes back with 0 nodes (the lab's lab/hostsplit.py)."""
        n = len(positions)
        slot = self._take_slot()
        try:
            t0 = time.perf_counter()
            event = self._enqueue_search(slot, positions, params, pv=pv, node_budget=node_budget)
            self._guard("search", event.wait)
            seconds = time.perf_counter() - t0
            out = {"scores": self._view(slot, "scores", n).copy(),
                   "best_moves": self._view(slot, "moves", n).copy(),
                   "nodes": self._view(slot, "nodes", n).copy()}
            if pv:
                stride = (self.overrides or {}).get("MAX_PLY", MAX_PLY) + 1
                out["pv_moves"] = self._read(slot.buffers["pv_moves"], np.uint16,
                                             n * stride * stride).reshape(n, stride, stride)[:, 0, :]
                out["pv_lengths"] = self._read(slot.buffers["pv_lengths"], np.uint8,
                                               n * stride).reshape(n, stride)[:, 0]
            local, global_size = slot.shape
        finally:
            slot.events = None
            self._give_slot(slot)
        self.last_run = {"kernel": "search_jobs", "jobs": n, "work_items": global_size,
                         "local_size": local, "seconds": seconds,
                         "nodes": int(out["nodes"].sum())}
        return out

    def run_search_split(self, positions, params, split_budget=SPLIT_BUDGET, min_depth=1,
                         entries=None, split_points=None, timeline=False, max_idle=None,
                         tail_budget=None):
        """``run_search`` with long jobs split on the device (search_jobs_split, docs/opencl.md):
        a job or part that has counted ``split_budget`` nodes publishes the node it returns
        into (depth >= ``min_depth``), and lanes without work search its remaining children;
        once the queue of jobs is empty the budget is ``tail_budget`` (default: split_budget).
        The same scores, best moves and node counts; ``last_run`` tells how much was split.
        ``timeline``: also each job's start and end on the device's clock in ns ("times", (N, 2);
        zeros where the device has no clock to read). ``max_idle``: lanes without work that stay
        to help (the others end; default SPLIT_IDLE per compute unit)."""
        n = len(positions)
        d = self.device
        local, global_size = self._search_shape(n)
        if entries is None:
            entries = (16 << 20) if d.is_gpu else (1 << 16)
        if split_points is None:
            split_points = entries // 8
        entries = int(min(entries, self._memory_budget() // (8 * POSITION_WORDS)))
        jb = self._job_buffers(positions, params)
        ctl = self._buffer(np.zeros(16, dtype=np.uint32), write=True)
        sp_alpha = self._buffer(nbytes=4 * split_points)
        sp_info = self._buffer(nbytes=16 * split_points)
        e_pos = self._buffer(nbytes=8 * POSITION_WORDS * entries)
        e_state = self._buffer(np.zeros(entries, dtype=np.uint32), write=True)
        e_sp = self._buffer(nbytes=4 * entries)
        e_result = self._buffer(np.zeros(entries, dtype=np.uint64), write=True)
        times = self._buffer(np.zeros(2 * n if timeline else 1, dtype=np.uint64), write=True)
        t0 = time.perf_counter()
        self._run("search", self.kernel("search_jobs_split"), global_size, local,
                  jb["positions"], jb["params"], np.uint32(n), ctl, jb["scores"], jb["moves"],
                  jb["nodes"], sp_alpha, sp_info,
                  np.uint32(split_points), e_pos, e_state, e_sp, e_result, np.uint32(entries),
                  np.uint64(split_budget), np.int32(min_depth), times,
                  np.uint32(1 if timeline else 0),
                  np.uint32(d.compute_units * SPLIT_IDLE if max_idle is None else max_idle),
                  np.uint64(split_budget if tail_budget is None else tail_budget),
                  ctl, np.uint32(0),        # no stop flags: the batch runs whole
                  self.device.eval_values)
        seconds = time.perf_counter() - t0
        out = self._read_results(jb["scores"], jb["moves"], jb["nodes"], n)
        if timeline:
            out["times"] = self._read(times, np.uint64, 2 * n).reshape(n, 2)
        c = self._read(ctl, np.uint32, 16)
        self.last_run = {"kernel": "search_jobs_split", "jobs": n, "work_items": global_size,
                         "local_size": local, "seconds": seconds,
                         "nodes": int(out["nodes"].sum()), "split_points": int(c[3]),
                         "entries": int(c[1]), "entries_helped": int(c[5]),
                         "helper_nodes": int(c[8]) << 10, "helper_nodes_used": int(c[9]) << 10,
                         "republished": int(c[11]), "owner_waits": int(c[12]),
                         "owner_claimed": int(c[13]),
                         "split_budget": int(split_budget), "min_depth": int(min_depth),
                         "tail_budget": int(split_budget if tail_budget is None else tail_budget)}
        return out

    def node_children(self, positions, params):
        """What the search finds on entering each packed node (params: depth/-/-/ply): the
        number of legal children, whether it is in check, its stand-pat value, and the children
        in generation order (captures only in quiescence): "moves" and "children" are lists
        with one array per node, of its count's packed moves and positions."""
        n = len(positions)
        chunk = max(1, int(self._memory_budget() // (8 * POSITION_WORDS * MAX_MOVES)))
        if n > chunk:
            parts = [self.node_children(positions[i:i + chunk], params[i:i + chunk])
                     for i in range(0, n, chunk)]
            return {key: (sum((p[key] for p in parts), []) if isinstance(parts[0][key], list)
                          else np.concatenate([p[key] for p in parts])) for key in parts[0]}
        pos_buf = self._buffer(positions)
        par_buf = self._buffer(params)
        moves = self._buffer(nbytes=4 * MAX_MOVES * n)
        children = self._buffer(nbytes=8 * POSITION_WORDS * MAX_MOVES * n)
        info = self._buffer(nbytes=12 * n)
        self._launch_1d("node expansion", "node_children", n, pos_buf, par_buf, np.uint32(n),
                        moves, children, info, self.device.eval_values)
        info = self._read(info, np.int32, 3 * n).reshape(n, 3)
        counts = info[:, 0]
        all_moves = self._read(moves, np.uint32, MAX_MOVES * n).reshape(n, MAX_MOVES)
        all_children = self._read(children, np.uint64, POSITION_WORDS * MAX_MOVES * n
                                  ).reshape(n, MAX_MOVES, POSITION_WORDS)
        # only the real children: the slots past each count hold whatever the buffer held
        return {"counts": counts, "in_check": info[:, 1].astype(bool), "stand_pat": info[:, 2],
                "moves": [all_moves[i, :c].copy() for i, c in enumerate(counts)],
                "children": [all_children[i, :c].copy() for i, c in enumerate(counts)]}

    # --- perft ---------------------------------------------------------------------------------

    def perft(self, board, depth, divide=False, count_mode="bulk"):
        if count_mode not in COUNT_MODES:
            raise SearchError(f"unknown counting mode {count_mode!r} (choose from: {', '.join(COUNT_MODES)})")
        _check_job(board, depth, perft=True)
        if divide and depth >= 1:
            parts = {}
            for move in self.moves(board):
                child = board.copy()
                child.make(move)
                parts[move] = self.perft_positions(pack_positions([child]), depth - 1, count_mode)
            return PerftResult(sum(parts.values()), parts)
        nodes = self.perft_positions(pack_positions([board]), depth, count_mode)
        return PerftResult(nodes)

    def perft_positions(self, positions, depth, count_mode="bulk"):
        """Sum of perft(depth) over packed positions, expanding breadth-first first."""
        if depth == 0:
            return len(positions)
        t0 = time.perf_counter()
        self.last_run = {"kernel": f"perft-{count_mode}", "launches": 0, "frontiers": [],
                         "depth": depth}
        buf = self._buffer(positions)
        if self._queued():
            # one error flag for every expansion of this call, read once at the end
            self._guard("expansion", self._cl().enqueue_fill_buffer, self.device.queue,
                        self._pooled(("error flag",), 4), np.uint32(0), 0, 4)
        n, remaining = len(positions), depth
        if count_mode == "bulk":
            buf, n, remaining = self._top_levels(buf, n, depth)
        total = self._frontier(buf, n, remaining, count_mode) if n else 0
        if self._queued() and self._read(self._pooled(("error flag",), 4), np.uint32, 1)[0]:
            raise OpenCLError(EXPANSION_DISAGREES)
        self.last_run["seconds"] = time.perf_counter() - t0
        self.last_run["nodes"] = total
        return total

    def _frontier(self, buf, n, remaining, count_mode):
        local, _, target_per_unit = self._defaults()
        leaf_max = self.bulk_leaf_depth if count_mode == "bulk" else self.make_leaf_depth
        leaf_max = max(1, min(leaf_max, _BULK_LEAF_MAX if count_mode == "bulk" else MAX_DEPTH))
        target = self.device.compute_units * target_per_unit
        self.last_run["frontiers"].append((remaining, n))
        if remaining <= leaf_max and (n >= target or remaining == 1):
            return self._leaves(buf, n, remaining, count_mode)
        # one breadth-first ply: count the children, prefix-sum, write them
        t0 = time.perf_counter()
        counts_buf = self._pooled(("counts", remaining), 4 * n)
        self._launch_1d("child count", "count_children", n, buf, np.uint32(n), counts_buf,
                        local=self._perft_local(), wait=not self._queued())
        t0 = self._stage("count", t0)
        offsets_buf = self._pooled(("offsets", remaining), 8 * (n + 1))
        children = self._prefix_sum(counts_buf, n, offsets_buf)
        t0 = self._stage("prefix", t0)
        if children == 0:
            return 0
        below = remaining - 1
        if (count_mode == "bulk" and self.device.perft_leaf & FUSED_LEAF and below <= min(leaf_max, 2)
                and (children >= target or below == 1)
                and children * FUSED_CHILD_BYTES <= self._memory_budget()):
            return self._fused_leaves(buf, n, offsets_buf, children, below, t0)
        budget = max(1, int(self._memory_budget() // (POSITION_WORDS * 8)))
        if children <= budget:
            return self._expand_chunk(buf, 0, n, None, remaining, count_mode,
                                      offsets_buf=offsets_buf, children=children, t0=t0)
        offsets = self._read(offsets_buf, np.uint64, n + 1)
        total = 0
        start = 0
        while start < n:
            # the largest run of parents whose children fit in the budget (at least one)
            end = int(np.searchsorted(offsets, offsets[start] + budget, side="right")) - 1
            end = min(max(end, start + 1), n)
            total += self._expand_chunk(buf, start, end, offsets, remaining, count_mode)
            start = end
        return total

    def _top_levels(self, buf, n, depth):
        """PERFT_LEAF's TOP_LEVELS: the levels at the top of the tree, while they hold at most one
        position a work-item of one work-group, expanded by that group in one launch
        (expand_top) and one read (the sizes), down to the last level above the leaf's at most
        (its ply above stays the fused one, or the leaf's). The level reached: (its buffer, its
        size, its remaining depth)."""
        d = self.device
        leaf_max = max(1, min(self.bulk_leaf_depth, _BULK_LEAF_MAX))
        levels = depth - max(leaf_max, 2) - 1
        local = min(self._perft_local(), TOP_MAX_LANES)
        room = local * MAX_MOVES * POSITION_WORDS * 8
        if (levels < 1 or n > local or room > self._memory_budget()
                or (d.perft_leaf & (TOP_LEVELS | TOP_LEVELS_WITH)) != TOP_LEVELS | TOP_LEVELS_WITH
                or d.perft_local_lines):
            return buf, n, depth
        t0 = time.perf_counter()
        level_a = self._pooled(("top level", 0), room)
        level_b = self._pooled(("top level", 1), room)
        result = self._pooled(("top sizes",), 4 * (2 + levels))
        self._run("expansion", self.kernel("expand_top"), local, local, buf, np.uint32(n),
                  np.uint32(levels), level_a, level_b, result, self._pooled(("error flag",), 4),
                  wait=False)
        self.last_run["launches"] += 1
        sizes = self._read(result, np.uint32, 2 + levels)
        made = int(sizes[1])
        self.last_run["frontiers"] += [(depth, n)] + [(depth - k, int(sizes[2 + k - 1]))
                                                      for k in range(1, made)]
        self._stage("top", t0)
        if not made:
            return buf, n, depth
        return (level_b if made % 2 == 0 else level_a), int(sizes[0]), depth - made

    def _queued(self):
        """Whether the expansion's levels are enqueued without waits (PERFT_LEAF's QUEUED_LEVELS):
        then the stages' times (_stage) are those of the host's calls, the waits in the reads of
        "prefix" (each level's number of children) and of "expand" (the last, before the leaf)."""
        return bool(self.device.perft_leaf & QUEUED_LEVELS)

    def _flag(self):
        """The expansion's error flag and whether to read it now: with queued levels the call's
        one flag (zeroed by perft_positions, read at its end), else a new one read at once."""
        if self._queued():
            return self._pooled(("error flag",), 4), False
        return self._buffer(np.zeros(1, dtype=np.uint32), write=True), True

    def _stage(self, name, t0):
        """Add the time since t0 to last_run's stage_seconds[name] (the expansion's steps, apart
        from leaf_seconds); the time now."""
        now = time.perf_counter()
        stages = self.last_run.setdefault("stage_seconds", {})
        stages[name] = stages.get(name, 0.0) + now - t0
        return now

    def _prefix_sum(self, counts_buf, n, offsets_buf):
        """offsets_buf[0..n] = the exclusive prefix sum of the n uint32 counts, on the device
        (scan_groups, the host's sum of the group totals, add_group_bases); the total."""
        if n == 0:
            return 0
        local = 256 if self.device.is_gpu else 64
        groups = -(-n // local)
        totals_buf = self._pooled(("group totals", local), 8 * groups)
        queued = self._queued()
        self._run("prefix sum", self.kernel("scan_groups"), groups * local, local, counts_buf,
                  np.uint32(n), offsets_buf, totals_buf, self._cl().LocalMemory(8 * local),
                  wait=not queued)
        if queued:
            # the group totals' prefix on the device too (scan_totals); one read: the total
            bases_buf = self._pooled(("group bases", local), 8 * groups)
            self._run("prefix sum", self.kernel("scan_totals"), local, local, totals_buf,
                      np.uint32(groups), bases_buf, self._cl().LocalMemory(8 * local), wait=False)
            self._run("prefix sum", self.kernel("add_group_bases"), groups * local, local,
                      offsets_buf, np.uint32(n), bases_buf, wait=False)
            self.last_run["launches"] = self.last_run.get("launches", 0) + 3
            total = np.empty(1, dtype=np.uint64)
            self._guard("read-back", self._cl().enqueue_copy, self.device.queue, total, offsets_buf,
                        src_offset=8 * n)
            return int(total[0])
        totals = self._read(totals_buf, np.uint64, groups)
        bases = np.zeros(groups, dtype=np.uint64)
        np.cumsum(totals[:-1], out=bases[1:])
        bases_buf = self._buffer(bases)
        self._run("prefix sum", self.kernel("add_group_bases"), groups * local, local, offsets_buf,
                  np.uint32(n), bases_buf)
        self.last_run["launches"] = self.last_run.get("launches", 0) + 2
        return int(bases[-1] + totals[-1])

    def _pooled(self, key, nbytes):
        """A device buffer of at least ``nbytes`` kept for the next call with the same ``key`` (a
        level of the expansion): allocating the frontier's gigabytes anew in every perft cost
        some 50 ms of a start position perft 8 on the H100 (docs/opencl.md)."""
        held = self._pool.get(key)
        if held is not None and held.size >= nbytes:
            return held
        self._pool.pop(key, None)           # the smaller one goes before the larger is made
        buf = self._pool[key] = self._buffer(nbytes=nbytes)
        return buf

    def _expand_chunk(self, buf, start, end, offsets, remaining, count_mode, offsets_buf=None,
                      children=None, t0=None):
        """Write the children of parents start..end and count below them. ``offsets``: the
        host's copy of every parent's first child (a chunk of the level); or ``offsets_buf``,
        the device's, with the number of ``children``, when the level is one chunk."""
        cl = self._cl()
        t0 = t0 or time.perf_counter()
        m = end - start
        if offsets_buf is not None:
            parents, off_buf = buf, offsets_buf
        else:
            base = offsets[start]
            chunk_offsets = (offsets[start:end + 1] - base).astype(np.uint64)
            children = int(chunk_offsets[-1])
            if children == 0:
                return 0
            if start == 0 and end == len(offsets) - 1:
                parents = buf
            else:
                parents = self._buffer(nbytes=m * POSITION_WORDS * 8)
                self._guard("copy", cl.enqueue_copy, self.device.queue, parents, buf,
                            src_offset=start * POSITION_WORDS * 8, byte_count=m * POSITION_WORDS * 8)
            off_buf = self._buffer(chunk_offsets)
        child_buf = self._pooled(("children", remaining), children * POSITION_WORDS * 8)
        flag, check = self._flag()
        t0 = self._stage("buffers", t0)
        split = 1
        if self.device.perft_leaf & SPLIT_EXPAND:
            room = self.device.compute_units * SPLIT_LANES_PER_UNIT // max(m, 1)
            while split * 2 <= min(room, SPLIT_MOST):
                split *= 2
        self._launch_1d("expansion", "expand", m * split, parents, np.uint32(m), off_buf, child_buf,
                        flag, np.uint32(split), local=self._perft_local(), wait=check)
        if check and self._read(flag, np.uint32, 1)[0]:
            raise OpenCLError(EXPANSION_DISAGREES)
        self._stage("expand", t0)
        del off_buf, parents
        return self._frontier(child_buf, children, remaining - 1, count_mode)

    def _fused_leaves(self, buf, n, offsets_buf, children, remaining, t0):
        """PERFT_LEAF's FUSED_LEAF: the last ply above the leaves written as each child's parent
        index and move (expand_moves), which the leaf kernel (perft_fused_N) makes itself."""
        self.last_run["frontiers"].append((remaining, children))
        parents = self._pooled(("parents", remaining), 4 * children)
        moves = self._pooled(("moves", remaining), 2 * children)
        flag, check = self._flag()
        t0 = self._stage("buffers", t0)
        local = self._perft_local()
        if self.device.perft_leaf & STAGED_CHILDREN:
            local = min(local, STAGED_LOCAL_SIZE)
        self._launch_1d("expansion", "expand_moves", n, buf, np.uint32(n), offsets_buf, parents,
                        moves, flag, local=local, wait=check)
        if check and self._read(flag, np.uint32, 1)[0]:
            raise OpenCLError(EXPANSION_DISAGREES)
        self._stage("expand", t0)
        return self._leaves(buf, children, remaining, "bulk", kernel=f"perft_fused_{remaining}",
                            child_args=(parents, moves))

    def _memory_budget(self):
        d = self.device.device
        return min(d.max_mem_alloc_size, d.global_mem_size * self.memory_fraction)

    def _launch_1d(self, what, name, n, *args, local=None, wait=True):
        local = local or self._defaults()[0]
        global_size = -(-n // local) * local
        self._run(what, self.kernel(name), global_size, local, *args, wait=wait)
        self.last_run["launches"] = self.last_run.get("launches", 0) + 1

    def _leaves(self, buf, n, remaining, count_mode, kernel=None, child_args=()):
        """Count below the n positions of ``buf`` (with ``child_args``, the parents' children
        given as parent indices and moves: _fused_leaves)."""
        self.last_run["leaf_positions"] = self.last_run.get("leaf_positions", 0) + n
        self.last_run["leaf_depth"] = remaining
        if count_mode == "bulk":
            local = self._perft_local()
            groups = -(-n // local)
            cl = self._cl()
            queued = self._queued()
            if queued:
                partial = self._pooled(("partial sums",), 8 * groups)
                # the expansion enqueued before it is done first: the leaf's time is its own
                t0 = time.perf_counter()
                self._guard("expansion", self.device.queue.finish)
                self._stage("expand", t0)
            else:
                partial = self._buffer(nbytes=8 * groups)
            t0 = time.perf_counter()
            self._run("bulk perft", self.kernel(kernel or f"perft_bulk_{remaining}"),
                      groups * local, local, buf, *child_args, np.uint32(n), partial,
                      cl.LocalMemory(8 * local), wait=not queued)
            # the leaf kernels' own time (launch to finish; queued, to its sums read), apart
            # from the expansion's
            seconds = time.perf_counter() - t0
            sums = self._read(partial, np.uint64, groups)
            if queued:
                seconds = time.perf_counter() - t0
            self.last_run["leaf_seconds"] = self.last_run.get("leaf_seconds", 0.0) + seconds
            self.last_run["launches"] += 1
            return int(sums.sum())
        local, _, _ = self._defaults()
        # the walk's jobs are alike (same depth): a full device, unlike the search's tail
        per_unit = self.threads_per_unit or (1024 if self.device.is_gpu else 1)
        workers = min(n, self.device.compute_units * per_unit)
        global_size = -(-workers // local) * local
        depths = self._buffer(np.full(n, remaining, dtype=np.int32))
        counter = self._buffer(np.zeros(1, dtype=np.uint32), write=True)
        counts = self._buffer(nbytes=8 * n)
        self._run("perft walk", self.kernel("perft_walk"), global_size, local, buf, depths,
                  np.uint32(n), counter, counts)
        self.last_run["launches"] += 1
        return int(self._read(counts, np.uint64, n).sum())

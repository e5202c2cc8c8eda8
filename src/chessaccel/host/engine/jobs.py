"""The job interface: leaf jobs go to accelerators, results come back as they finish.

A job is what every backend's ``search`` takes: ``Job(board, depth, alpha, beta)`` with a model
``Board`` (the accelerator's view of the position), a depth in 0..MAX_DEPTH and a window in the
job's own frame (engine/scores.py). A result is the backend's dict: ``score``, ``best_move``
(``(from, to, promo)`` or None), ``pv``, ``nodes``, ``cycles`` (None off hardware).

The search submits jobs in batches (``Executor.submit(jobs) -> Batch``) and collects results as
they finish (``Batch.wait(timeout)``), in whatever order the accelerators finish them; it may
cancel a batch it no longer needs (a beta cutoff, ``stop``, a deadline), and must then never
wait for it. Every executor runs its accelerators from its own thread, so a search thread that
waits can always give up within its own timeout, even while a slow backend is mid-job.

Executors (``make_executor(spec, accelerators)`` picks one):

- ``PoolExecutor`` (``model``): ``accelerators`` worker processes (engine/worker.py), each
  running the backend; a job a cancelled batch left running is interrupted by a signal, so the
  worker is free again within milliseconds.
- ``LinkExecutor`` (``verilator``, ``serial:PORT``): the board's cores over the link protocol,
  one job per core, polled, aborted on the board when cancelled. ``verilator`` starts a simulated
  board with ``accelerators`` cores.
- ``BatchExecutor`` (any other backend: ``rtl``, the OpenCL backend, ...): the whole batch in one
  ``Backend.search_many(jobs)`` call (one simulator run, one kernel launch); a batch cancelled
  while it runs is dropped when it returns.

An executor for accelerators on other machines (Ray actors, MPI ranks through mpi4py) is one more
subclass: ``submit`` sends the jobs out and a thread delivers results with ``Batch._deliver``;
docs/engine.md shows how.
"""

import itertools
import operator
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from multiprocessing.connection import Connection, wait as wait_for_connections
from typing import NamedTuple

from chessaccel.host.backends import Backend, BackendError, get_backend

__all__ = ["Job", "Batch", "Executor", "PoolExecutor", "LinkExecutor", "BatchExecutor",
           "make_executor", "ExecutorError"]


class Job(NamedTuple):
    """One leaf job, in the shape ``Backend.search(*job)`` takes."""
    board: object       # chessaccel.model.board.Board, owned by the job
    depth: int
    alpha: int
    beta: int


class ExecutorError(BackendError):
    """The accelerators cannot run jobs (start-up failed, a worker died, the link broke)."""


_nodes_of = operator.itemgetter("nodes")


class _NoLock:
    """The condition of an inline batch: nothing to lock, nobody to wake."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def notify_all(self):
        pass


_NO_LOCK = _NoLock()


class Batch:
    """Jobs submitted together. ``results[i]`` is None until job ``i`` has finished."""

    __slots__ = ("jobs", "results", "cancelled", "error", "_finished", "_cond", "_executor")

    def __init__(self, executor, jobs, inline=False):
        """``inline``: the batch is run to its end (or its failure) by the thread that submits
        it, before ``submit`` returns; no other thread ever sees it, so it needs no lock (a
        condition costs microseconds, more than a fast backend's whole job)."""
        self._executor = executor
        self.jobs = jobs
        self.results = [None] * len(jobs)
        self.cancelled = False
        self.error = None
        self._finished = []         # indices finished and not yet returned by wait()
        self._cond = _NO_LOCK if inline else threading.Condition(threading.Lock())

    def wait(self, timeout):
        """Indices of jobs finished since the last call (empty after ``timeout`` seconds with
        none). Raises ExecutorError when the executor failed and nothing is left to return."""
        if self._cond is _NO_LOCK:
            out, self._finished = self._finished, []
            if not out and self.error is not None:
                raise self.error
            return out
        with self._cond:
            if not self._finished and self.error is None:
                self._cond.wait(timeout)
            out, self._finished = self._finished, []
            if not out and self.error is not None:
                raise self.error
            return out

    def done(self):
        return all(r is not None for r in self.results)

    def cancel(self):
        """Drop the jobs not finished yet; running ones are stopped where the backend can."""
        if not self.cancelled:
            self.cancelled = True
            self._executor._cancel(self)

    # --- the executor's side ------------------------------------------------------------------

    def _deliver(self, index, result):
        with self._cond:
            self.results[index] = result
            self._finished.append(index)
            self._cond.notify_all()

    def _deliver_all(self, results):
        if self._cond is _NO_LOCK:
            self.results = list(results)
            self._finished.extend(range(len(self.results)))
            return
        with self._cond:
            self.results = list(results)
            self._finished.extend(range(len(self.results)))
            self._cond.notify_all()

    def _fail(self, error):
        with self._cond:
            if self.error is None:
                self.error = error if isinstance(error, ExecutorError) else ExecutorError(str(error))
            self._cond.notify_all()


class Executor:
    """Runs jobs on a backend's accelerators (see the module docstring)."""

    name = "?"
    #: Jobs that run at once (None: a whole batch at once, as one backend call).
    slots = None
    #: True when jobs submitted together really run side by side (several workers or cores, or
    #: a batch backend whose batch is one parallel launch): the search then sends siblings out
    #: speculatively and re-searches in batches. False for one accelerator, where that would
    #: only add work.
    parallel = False
    #: True when idle accelerators are what limits the search, so that sending the brothers of
    #: a null-window node's eldest out with it (work thrown away if the eldest cuts off) costs
    #: nothing that would otherwise be used: several model workers or board cores. False for
    #: batch backends, where the host's own work per job is what limits.
    speculate = False

    def __init__(self):
        self.stats = {"jobs": 0, "nodes": 0, "batches": 0, "cancelled_jobs": 0}
        self.broken = None          # the error that made this executor unusable, if any

    def submit(self, jobs):
        raise NotImplementedError

    def _cancel(self, batch):
        raise NotImplementedError

    def close(self):
        pass

    def _count(self, result):
        self.stats["jobs"] += 1
        self.stats["nodes"] += result["nodes"]


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# --- a process per accelerator: the model ------------------------------------------------------

class _Worker:
    __slots__ = ("process", "reader", "writer", "busy")

    def __init__(self, process, reader, writer):
        self.process = process
        self.reader = reader        # Connection: replies from the worker
        self.writer = writer        # Connection: jobs to the worker
        self.busy = None            # (batch, index, job id) while a job runs


_POOL_START_SECONDS = 120
_job_ids = itertools.count(1)


class PoolExecutor(Executor):
    """``workers`` processes (engine/worker.py), each running the backend ``spec`` (``model``):
    N accelerators on N CPU cores. Jobs go to the first idle worker in submission order; a
    cancelled job is interrupted in its worker by SIGUSR1."""

    def __init__(self, spec="model", workers=1):
        super().__init__()
        if workers < 1:
            raise ExecutorError(f"need at least one accelerator, got {workers}")
        self.name = spec
        self.slots = workers
        self.parallel = self.speculate = workers > 1
        #: the most workers that held a job at the same moment
        self.stats["peak_busy"] = 0
        self._spec = spec
        self._lock = threading.Lock()
        self._pending = deque()             # (batch, index) not started
        self._closed = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._workers = []
        try:
            started = [self._launch() for _ in range(workers)]     # start together, then wait
            for worker in started:
                self._workers.append(worker)
                self._handshake(worker)
        except BaseException:
            self._stop_workers()
            os.close(self._wake_r)
            os.close(self._wake_w)
            raise
        self._thread = threading.Thread(target=self._dispatch, name=f"pool-{spec}", daemon=True)
        self._thread.start()

    def _launch(self):
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "chessaccel.host.engine.worker", self._spec,
                 str(to_worker_r), str(from_worker_w)],
                pass_fds=(to_worker_r, from_worker_w), stdin=subprocess.DEVNULL)
        except OSError as error:
            for fd in (to_worker_r, to_worker_w, from_worker_r, from_worker_w):
                os.close(fd)
            raise ExecutorError(f"cannot start a {self._spec} worker: {error}") from None
        os.close(to_worker_r)
        os.close(from_worker_w)
        return _Worker(process, Connection(from_worker_r, writable=False),
                       Connection(to_worker_w, readable=False))

    def _handshake(self, worker):
        if not worker.reader.poll(_POOL_START_SECONDS):
            raise ExecutorError(f"a {self._spec} worker did not start in {_POOL_START_SECONDS} s")
        try:
            kind, detail = worker.reader.recv()
        except (EOFError, OSError):
            raise ExecutorError(f"a {self._spec} worker died while starting") from None
        if kind != "ready":
            raise ExecutorError(detail)

    @staticmethod
    def _kill(worker):
        if worker.process.poll() is None:
            worker.process.terminate()
            try:
                worker.process.wait(5)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
        worker.reader.close()
        worker.writer.close()

    def _wake(self):
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def submit(self, jobs):
        if self.broken is not None:
            raise self.broken
        batch = Batch(self, jobs)
        with self._lock:
            self._pending.extend((batch, i) for i in range(len(jobs)))
            self.stats["batches"] += 1
        self._wake()
        return batch

    def _cancel(self, batch):
        with self._lock:
            for worker in self._workers:
                if worker.busy is not None and worker.busy[0] is batch:
                    self._interrupt(worker)
        self._wake()

    @staticmethod
    def _interrupt(worker):
        """Abort the job the worker runs (called with the lock held: see engine/worker.py)."""
        try:
            worker.process.send_signal(signal.SIGUSR1)
        except ProcessLookupError:
            pass

    def _assign(self):
        """Give pending jobs to idle workers (under the lock)."""
        for worker in self._workers:
            if worker.busy is not None:
                continue
            while self._pending:
                batch, index = self._pending.popleft()
                if batch.cancelled:
                    self.stats["cancelled_jobs"] += 1
                    continue
                job_id = next(_job_ids)
                try:
                    worker.writer.send((job_id, batch.jobs[index]))
                except OSError:
                    self._pending.appendleft((batch, index))
                    return
                worker.busy = (batch, index, job_id)
                break
        busy = sum(1 for worker in self._workers if worker.busy is not None)
        self.stats["peak_busy"] = max(self.stats["peak_busy"], busy)

    def _dispatch(self):
        while True:
            with self._lock:
                if self._closed:
                    return
                self._assign()
                readers = [w.reader for w in self._workers]
            ready = wait_for_connections(readers + [self._wake_r])
            for item in ready:
                if item == self._wake_r:
                    try:
                        while os.read(self._wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                    continue
                worker = next((w for w in self._workers if w.reader is item), None)
                if worker is None:
                    continue
                try:
                    job_id, status, payload = worker.reader.recv()
                except (EOFError, OSError):
                    self._worker_died(worker)
                    continue
                with self._lock:
                    busy, worker.busy = worker.busy, None
                if busy is None or busy[2] != job_id:
                    continue
                batch, index, _ = busy
                if status == "ok":
                    self._count(payload)
                    if not batch.cancelled:
                        batch._deliver(index, payload)
                elif status == "error":
                    batch._fail(ExecutorError(f"{self._spec} backend failed: {payload}"))

    def _worker_died(self, worker):
        with self._lock:
            busy, worker.busy = worker.busy, None
            self._workers.remove(worker)
        self._kill(worker)
        if busy is not None:
            busy[0]._fail(ExecutorError(f"a {self._spec} worker process died "
                                        f"(exit status {worker.process.returncode})"))
        if self._closed:
            return
        replacement = self._launch()
        try:
            self._handshake(replacement)
        except ExecutorError as error:
            self._kill(replacement)
            self.broken = error
            with self._lock:
                batches = {b for b, _ in self._pending}
                self._pending.clear()
            for batch in batches:
                batch._fail(error)
            return
        with self._lock:
            self._workers.append(replacement)

    def _stop_workers(self):
        with self._lock:
            for worker in self._workers:
                if worker.busy is not None:
                    self._interrupt(worker)
                try:
                    worker.writer.send(None)
                except OSError:
                    pass
        for worker in self._workers:
            try:
                worker.process.wait(2)
            except subprocess.TimeoutExpired:
                pass
            self._kill(worker)
        self._workers = []

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._wake()
        self._thread.join(5)
        self._stop_workers()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def worker_pids(self):
        return [w.process.pid for w in self._workers]


# --- the board link: one job per core --------------------------------------------------------

#: Polling of running jobs: first wait, growth and longest wait (seconds), as the board client.
_POLL_FIRST, _POLL_GROWTH, _POLL_LONGEST = 0.0005, 1.5, 0.05


class LinkExecutor(Executor):
    """The cores of a board (simulated or real) behind the link protocol. One thread owns the
    link: it hands jobs to free cores, polls them, and aborts the jobs of cancelled batches."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.client = backend.client
        self.name = backend.name
        self.slots = backend.info.cores
        self.parallel = self.speculate = self.slots > 1
        self._lock = threading.Lock()
        self._pending = deque()
        self._running = {}          # job id -> (batch, index, core)
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._dispatch, name=f"link-{self.name}",
                                        daemon=True)
        self._thread.start()

    def submit(self, jobs):
        if self.broken is not None:
            raise self.broken
        batch = Batch(self, jobs)
        with self._lock:
            self._pending.extend((batch, i) for i in range(len(jobs)))
            self.stats["batches"] += 1
        self._wake.set()
        return batch

    def _cancel(self, batch):
        self._wake.set()

    def _dispatch(self):
        from chessaccel.host.client import BoardError
        wait = _POLL_FIRST
        try:
            while not self._closed:
                progressed = False
                # jobs of cancelled batches: abort on the board, free the core
                for job_id, (batch, _, _) in list(self._running.items()):
                    if batch.cancelled:
                        self.client.abort(job_id)
                        del self._running[job_id]
                        self.stats["cancelled_jobs"] += 1
                        progressed = True
                # hand pending jobs to free cores
                while len(self._running) < self.slots:
                    with self._lock:
                        while self._pending and self._pending[0][0].cancelled:
                            self._pending.popleft()
                            self.stats["cancelled_jobs"] += 1
                        if not self._pending:
                            break
                        batch, index = self._pending[0]
                    job_id = self.client.new_job_id()
                    core = self.client.submit(job_id, *batch.jobs[index])
                    if core is None:
                        break
                    with self._lock:
                        self._pending.popleft()
                    self._running[job_id] = (batch, index, core)
                    progressed = True
                # collect finished jobs
                for job_id, (batch, index, core) in list(self._running.items()):
                    outcome = self.client.poll(job_id, core)
                    if outcome is None:
                        continue
                    del self._running[job_id]
                    result = {"score": outcome.score, "best_move": outcome.best_move,
                              "pv": [outcome.best_move] if outcome.best_move else [],
                              "nodes": outcome.nodes, "cycles": outcome.cycles}
                    self._count(result)
                    if not batch.cancelled:
                        batch._deliver(index, result)
                    progressed = True
                if progressed:
                    wait = _POLL_FIRST
                    continue
                idle = not self._running and not self._pending
                self._wake.wait(None if idle else wait)
                self._wake.clear()
                wait = min(wait * _POLL_GROWTH, _POLL_LONGEST)
        except BoardError as error:
            self._break(ExecutorError(f"board {self.name}: {_first_line(error)}"))

    def _break(self, error):
        self.broken = error
        with self._lock:
            batches = {b for b, _ in self._pending} | {b for b, _, _ in self._running.values()}
            self._pending.clear()
            self._running.clear()
        for batch in batches:
            batch._fail(error)

    def close(self):
        self._closed = True
        self._wake.set()
        self._thread.join(10)
        if self._running and self.broken is None:
            try:
                self.client.abort()
            except Exception:   # the link is going away anyway
                pass
        self.backend.close()


# --- a whole batch per call: rtl, OpenCL and any backend that batches ------------------------

class BatchExecutor(Executor):
    """One ``backend.search_many(jobs)`` call per batch, from the executor's thread.

    A backend whose batch runs in parallel (a GPU kernel launch) says so with a true
    ``parallel_batches`` attribute; one that runs a batch's jobs one after another (the RTL
    simulator) does not, and the search then gives it no speculative work. A backend whose
    batches take well under a millisecond may set ``inline_batches``: its batches then run in
    the submitting thread, saving the hand-off between threads (a stop or a deadline then
    waits for the batch in progress)."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.name = backend.name
        self.slots = None
        self.parallel = bool(getattr(backend, "parallel_batches", False))
        self.inline = bool(getattr(backend, "inline_batches", False))
        self._queue = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = None
        if not self.inline:
            self._thread = threading.Thread(target=self._dispatch, name=f"batch-{self.name}",
                                            daemon=True)
            self._thread.start()

    def submit(self, jobs):
        if self.broken is not None:
            raise self.broken
        batch = Batch(self, jobs, inline=self.inline)
        self.stats["batches"] += 1
        if self.inline:
            self._run(batch)
            return batch
        with self._cond:
            self._queue.append(batch)
            self._cond.notify()
        return batch

    def run_inline(self, job):
        """The result of one job, run at once in this thread: for an ``inline`` executor only
        (the search's busiest path, an eldest brother's job, where a batch object costs more
        than a fast backend's whole job). Raises ExecutorError as a failed batch would."""
        if self.broken is not None:
            raise self.broken
        try:
            results = self.backend.search_many([job])
        except Exception as error:  # any backend failure: one line, as in _run
            raise ExecutorError(f"{self.name} backend failed: {_first_line(error)}") from None
        if len(results) != 1:
            raise ExecutorError(f"{self.name} answered {len(results)} results for 1 job")
        result = results[0]
        stats = self.stats
        stats["batches"] += 1
        stats["jobs"] += 1
        stats["nodes"] += result["nodes"]
        return result

    def _cancel(self, batch):
        pass    # a batch not started is skipped; one running is dropped when it returns

    def _dispatch(self):
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                batch = self._queue.popleft()
            if batch.cancelled:
                self.stats["cancelled_jobs"] += len(batch.jobs)
                continue
            self._run(batch)

    def _run(self, batch):
        try:
            results = self.backend.search_many(batch.jobs)
        except Exception as error:  # any backend failure ends this batch with one line
            batch._fail(ExecutorError(f"{self.name} backend failed: {_first_line(error)}"))
            return
        if len(results) != len(batch.jobs):
            batch._fail(ExecutorError(f"{self.name} answered {len(results)} results for "
                                      f"{len(batch.jobs)} jobs"))
            return
        stats = self.stats
        stats["jobs"] += len(results)
        stats["nodes"] += sum(map(_nodes_of, results))
        if not batch.cancelled:
            batch._deliver_all(results)

    def close(self):
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(30)
        self.backend.close()


# --- choosing one ------------------------------------------------------------------------------

def _simulated_board(cores, log):
    from chessaccel.host.boardcli import BoardBackend
    from chessaccel.host.transport import TransportError, open_transport
    from chessaccel.sim.boardsim import SIM_REPLY_TIMEOUT, BoardSim, BoardSimError
    try:
        sim = BoardSim(cores=cores, log=log)
    except BoardSimError as error:
        raise ExecutorError(_first_line(error)) from None
    try:
        transport = open_transport(sim.port)
    except TransportError as error:
        sim.close()
        raise ExecutorError(str(error)) from None
    return BoardBackend(transport, "verilator", sim=sim, timeout=SIM_REPLY_TIMEOUT)


def make_executor(spec, accelerators=1, log=None):
    """The executor for backend ``spec`` (any spec ``get_backend`` accepts) with
    ``accelerators`` worker processes (model) or simulated cores (verilator). Raises
    BackendError with one line when the backend cannot start."""
    if not isinstance(accelerators, int) or accelerators < 1:
        raise ExecutorError(f"accelerators must be a positive integer, got {accelerators!r}")
    if spec == "model":
        return PoolExecutor("model", accelerators)
    if spec == "verilator":
        backend = _simulated_board(accelerators, log)
    else:
        backend = get_backend(spec)
    from chessaccel.host.boardcli import BoardBackend
    if isinstance(backend, BoardBackend):
        return LinkExecutor(backend)
    if not isinstance(backend, Backend):
        raise ExecutorError(f"backend {spec!r} is not a Backend")
    return BatchExecutor(backend)

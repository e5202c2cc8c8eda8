"""The job interface: leaf jobs go to accelerators, results come back as they finish.

A job is what every backend's ``search`` takes: ``Job(board, depth, alpha, beta)`` with a model
``Board`` (the accelerator's view of the position), a depth in 0..MAX_DEPTH and a window in the
job's own frame (engine/scores.py). A result is the backend's ``JobResult`` (host/backends/
base.py): ``score``, ``best_move`` (``(from, to, promo)`` or None), ``pv``, ``nodes``,
``cycles`` (None off hardware).

The search submits jobs in batches (``Executor.submit(jobs) -> Batch``) and collects results as
they finish (``Batch.wait(timeout)``), in whatever order the accelerators finish them; it may
cancel a batch it no longer needs (a beta cutoff, ``stop``, a deadline), and must then never
wait for it. Every executor runs its accelerators from its own thread, so a search thread that
waits can always give up within its own timeout, even while a slow backend is mid-job.

An executor's side of a batch is public: ``Batch.deliver(index, result)``,
``Batch.deliver_all(results)`` and ``Batch.fail(error)``; an executor implements ``submit``,
``cancel_batch`` and ``close`` and counts finished jobs with ``count``. Accelerators on other
machines are one more subclass: Ray actors (ray.py, built), MPI ranks through mpi4py
(docs/engine.md, designed).
"""

import threading
from typing import NamedTuple

from chessaccel.host.backends.base import BackendError

__all__ = ["Job", "Batch", "Executor", "QueueExecutor", "ExecutorError"]


class Job(NamedTuple):
    """One leaf job, in the shape ``Backend.search(*job)`` takes."""
    board: object       # chessaccel.model.board.Board, owned by the job
    depth: int
    alpha: int
    beta: int


class ExecutorError(BackendError):
    """The accelerators cannot run jobs (start-up failed, a worker died, the link broke)."""


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
            self._executor.cancel_batch(self)

    # --- the executor's side: how results and failures come in ---------------------------------

    def deliver(self, index, result):
        """Job ``index`` has finished with ``result`` (a JobResult): waiters wake up."""
        with self._cond:
            self.results[index] = result
            self._finished.append(index)
            self._cond.notify_all()

    def deliver_all(self, results):
        """Every job has finished: ``results`` in the jobs' order."""
        if self._cond is _NO_LOCK:
            self.results = list(results)
            self._finished.extend(range(len(self.results)))
            return
        with self._cond:
            self.results = list(results)
            self._finished.extend(range(len(self.results)))
            self._cond.notify_all()

    def fail(self, error):
        """The batch cannot finish: ``error`` (made an ExecutorError) is raised to its waiter
        once the results delivered before it are collected."""
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
    #: True when batches run in the submitting thread (the backend declares ``inline_batches``)
    #: and ``run_inline(job)`` answers one job at once, without a batch.
    inline = False

    def __init__(self):
        self.stats = {"jobs": 0, "nodes": 0, "batches": 0, "cancelled_jobs": 0}
        self.broken = None          # the error that made this executor unusable, if any

    def submit(self, jobs):
        """Start ``jobs`` (Jobs); a Batch whose results come in as they finish (its
        ``deliver``/``deliver_all``/``fail``, called from the executor's side)."""
        raise NotImplementedError

    def cancel_batch(self, batch):
        """``batch`` was cancelled (``Batch.cancel``): stop its running jobs where possible."""
        raise NotImplementedError

    def close(self):
        pass

    def count(self, result):
        """Count one finished job in ``stats``."""
        self.stats["jobs"] += 1
        self.stats["nodes"] += result.nodes


class QueueExecutor(Executor):
    """An executor whose own thread takes ``(batch, index)`` from ``_pending`` (a deque, under
    ``_lock``); ``_notify()`` wakes that thread. Subclasses set the three up."""

    def submit(self, jobs):
        if self.broken is not None:
            raise self.broken
        batch = Batch(self, jobs)
        with self._lock:
            self._pending.extend((batch, i) for i in range(len(jobs)))
            self.stats["batches"] += 1
        self._notify()
        return batch

    def _notify(self):
        raise NotImplementedError

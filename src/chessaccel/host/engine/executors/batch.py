"""``BatchExecutor``: a whole batch per ``Backend.search_many(jobs)`` call (one simulator run,
one kernel launch): rtl, OpenCL and any backend that is neither a worker-process backend nor a
board; a batch cancelled while it runs is dropped when it returns."""

import threading
from collections import deque

from chessaccel.host.backends.base import first_line

from .base import Batch, Executor, ExecutorError

__all__ = ["BatchExecutor"]


class BatchExecutor(Executor):
    """One ``backend.search_many(jobs)`` call per batch, from the executor's thread.

    A backend whose batch runs in parallel (a GPU kernel launch) declares
    ``Capabilities(parallel_batches=True)``; one that runs a batch's jobs one after another (the
    RTL simulator) does not, and the search then gives it no speculative work. A backend whose
    batches take well under a millisecond may declare ``inline_batches``: its batches then run
    in the submitting thread, saving the hand-off between threads (a stop or a deadline then
    waits for the batch in progress)."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.name = backend.name
        self.slots = None
        self.parallel = backend.capabilities.parallel_batches
        self.inline = backend.capabilities.inline_batches
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
            raise ExecutorError(f"{self.name} backend failed: {first_line(error)}") from None
        if len(results) != 1:
            raise ExecutorError(f"{self.name} answered {len(results)} results for 1 job")
        result = results[0]
        stats = self.stats
        stats["batches"] += 1
        stats["jobs"] += 1
        stats["nodes"] += result.nodes
        return result

    def cancel_batch(self, batch):
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
            batch.fail(ExecutorError(f"{self.name} backend failed: {first_line(error)}"))
            return
        if len(results) != len(batch.jobs):
            batch.fail(ExecutorError(f"{self.name} answered {len(results)} results for "
                                      f"{len(batch.jobs)} jobs"))
            return
        stats = self.stats
        stats["jobs"] += len(results)
        stats["nodes"] += sum(result.nodes for result in results)
        if not batch.cancelled:
            batch.deliver_all(results)

    def close(self):
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(30)
        self.backend.close()

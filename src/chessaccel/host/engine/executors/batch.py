"""``BatchExecutor``: batches run as ``Backend.search_many(jobs)`` calls (one simulator run, one
kernel launch): rtl, OpenCL and any backend that is neither a worker-process backend nor a
board.

The executor's thread takes every batch queued at that moment and runs them as **one** backend
run of up to ``launch_jobs`` jobs (what the backend declares fills its device; 0: one batch per
run), then hands each batch its part of the results. A backend that starts runs asynchronously
(``async_launches``: ``start_search``) has up to ``IN_FLIGHT`` runs in flight, so the thread
gathers and enqueues the next while one runs; a batch cancelled while its run is in flight has
its jobs stopped on the device, and its results are never delivered. A failed run fails every
batch in it with one line."""

import threading
from collections import deque

from chessaccel.host.backends.base import first_line

from .base import Batch, Executor, ExecutorError

__all__ = ["BatchExecutor", "IN_FLIGHT"]

#: Runs an asynchronous backend has in flight at once: one on the device while the host reads
#: the other's results or enqueues the next.
IN_FLIGHT = 2


class _Finished:
    """A run already done (a backend without ``start_search``): its results or its error."""

    def __init__(self, backend, jobs):
        self.results_or_error = None
        try:
            self.results_or_error = backend.search_many(jobs)
        except Exception as error:  # any backend failure: the run's batches fail with it
            self.results_or_error = error

    def done(self):
        return True

    def stop(self, start, end):
        pass

    def results(self):
        if isinstance(self.results_or_error, Exception):
            raise self.results_or_error
        return self.results_or_error


class _Run:
    """A backend run in flight and the batches it holds: ``parts`` is ``(batch, start)``, the
    batch's jobs at ``start..start+len(batch.jobs)-1`` of the run."""

    __slots__ = ("launch", "parts", "jobs", "stopped")

    def __init__(self, parts, jobs):
        self.launch = None
        self.parts = parts
        self.jobs = jobs
        self.stopped = set()        # ids of the batches whose jobs were stopped


class BatchExecutor(Executor):
    """Batches to ``backend.search_many`` (or ``start_search``) from the executor's thread,
    merged into runs of up to ``launch_jobs`` jobs.

    A backend whose batch runs in parallel (a GPU kernel launch) declares
    ``Capabilities(parallel_batches=True)``; one that runs a batch's jobs one after another (the
    RTL simulator) does not, and the search then gives it no speculative work. A backend whose
    batches take well under a millisecond may declare ``inline_batches``: its batches then run
    in the submitting thread, saving the hand-off between threads (a stop or a deadline then
    waits for the batch in progress); they are never merged."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.name = backend.name
        self.slots = None
        capabilities = backend.capabilities
        self.parallel = capabilities.parallel_batches
        self.inline = capabilities.inline_batches
        self._async = capabilities.async_launches and not self.inline
        self.stats.update(launches=0, merged_batches=0, stopped_jobs=0)
        self._queue = deque()
        self._in_flight = deque()       # _Runs started or being started, oldest first
        self._started = deque()         # _Runs started and not yet waited for (async)
        self._where = {}                # id(batch) -> its _Run, while in flight
        self._cond = threading.Condition()
        self._closed = False
        self._threads = []
        if not self.inline:
            targets = [self._dispatch] + ([self._complete] if self._async else [])
            self._threads = [threading.Thread(target=target, name=f"batch-{self.name}",
                                              daemon=True) for target in targets]
            for thread in self._threads:
                thread.start()

    @property
    def launch_jobs(self):
        """Jobs one run holds to fill the device (the backend's ``capabilities.launch_jobs``,
        complete once it is open; 0: one batch per run): several search threads, each
        submitting small batches, fill a run between them."""
        return self.backend.open().capabilities.launch_jobs

    def submit(self, jobs):
        if self.broken is not None:
            raise self.broken
        batch = Batch(self, jobs, inline=self.inline)
        if self.inline:
            self.stats["batches"] += 1
            self._run(batch)
            return batch
        with self._cond:        # several search threads may submit at once
            self.stats["batches"] += 1
            self._queue.append(batch)
            self._cond.notify_all()
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
        """A batch still queued is skipped; one in a run in flight has its jobs stopped on the
        device (where the backend can) and its results dropped."""
        with self._cond:
            run = self._where.pop(id(batch), None)
        if run is not None and run.launch is not None:
            self._stop(run, batch)
        # a run still being started stops the batch itself once started (_start)

    def _stop(self, run, batch):
        if not self._async:
            return          # a run of search_many cannot be stopped: it is dropped when it ends
        with self._cond:
            if id(batch) in run.stopped:
                return
            run.stopped.add(id(batch))
            self.stats["stopped_jobs"] += len(batch.jobs)
        for part, start in run.parts:
            if part is batch:
                try:
                    run.launch.stop(start, start + len(batch.jobs))
                except Exception:   # the stop is an economy: the results are dropped anyway
                    pass
                return

    # --- the executor's thread ----------------------------------------------------------------

    def _take(self):
        """The batches for the next run (under the lock): every batch queued, in order, up to
        ``launch_jobs`` jobs (at least one batch); cancelled ones are skipped."""
        cap = self.backend.capabilities.launch_jobs
        parts, jobs = [], []
        while self._queue:
            batch = self._queue[0]
            if batch.cancelled:
                self._queue.popleft()
                self.stats["cancelled_jobs"] += len(batch.jobs)
                continue
            if parts and (not cap or len(jobs) + len(batch.jobs) > cap):
                break
            self._queue.popleft()
            parts.append((batch, len(jobs)))
            jobs.extend(batch.jobs)
        return _Run(parts, jobs) if parts else None

    def _dispatch(self):
        """The executor's thread: takes the queued batches and starts their runs; without
        ``async_launches`` it also waits for each run and hands its results out."""
        limit = IN_FLIGHT if self._async else 1
        try:
            self.backend.open()     # its launch_jobs known before the first batch is taken
        except Exception:   # the first run fails with this error, in its batches' words
            pass
        while True:
            with self._cond:
                while not self._closed and not (self._queue and len(self._in_flight) < limit):
                    self._cond.wait()
                if self._closed:
                    return
                run = self._take()
                if run is None:
                    continue
                for batch, _ in run.parts:
                    self._where[id(batch)] = run
                self._in_flight.append(run)
            self._start(run)
            if not self._async:
                self._finish(run)
                continue
            with self._cond:
                self._started.append(run)
                self._cond.notify_all()

    def _complete(self):
        """The second thread of an ``async_launches`` backend: waits for each run started, in
        order, and hands its results out, while the first thread starts the next."""
        while True:
            with self._cond:
                while not self._closed and not self._started:
                    self._cond.wait()
                if self._closed:
                    return
                run = self._started.popleft()
            self._finish(run)

    def _start(self, run):
        if self._async:
            try:
                launch = self.backend.start_search(run.jobs)
            except Exception as error:  # refused or failed to enqueue: its batches fail
                launch = _Failed(error)
        else:
            launch = _Finished(self.backend, run.jobs)
        with self._cond:
            run.launch = launch
            cancelled = [batch for batch, _ in run.parts if batch.cancelled]
        for batch in cancelled:
            self._stop(run, batch)
        if len(run.parts) > 1:
            self.stats["merged_batches"] += len(run.parts)
        self.stats["launches"] += 1

    def _finish(self, run):
        """Wait for ``run`` and hand each batch its results (or the run's failure)."""
        try:
            results = run.launch.results()
        except Exception as error:  # any backend failure ends every batch of the run
            results = error
        with self._cond:
            for batch, _ in run.parts:
                self._where.pop(id(batch), None)
            self._in_flight.remove(run)
            self._cond.notify_all()         # room for the next run
            closed = self._closed           # close() stops every run: results may be stopped
        if closed:
            for batch, _ in run.parts:
                batch.fail(ExecutorError(f"{self.name} executor closed"))
            return
        if isinstance(results, Exception):
            error = results
            merged = f" (a run of {len(run.parts)} batches)" if len(run.parts) > 1 else ""
            line = ExecutorError(f"{self.name} backend failed{merged}: {first_line(error)}")
            for batch, _ in run.parts:
                batch.fail(line)
            return
        if len(results) != len(run.jobs):
            line = ExecutorError(f"{self.name} answered {len(results)} results for "
                                 f"{len(run.jobs)} jobs")
            for batch, _ in run.parts:
                batch.fail(line)
            return
        stats = self.stats
        stats["jobs"] += len(results)
        stats["nodes"] += sum(result.nodes for result in results)
        for batch, start in run.parts:
            # a batch cancelled at any point is never delivered: its jobs may have been stopped
            if not batch.cancelled:
                batch.deliver_all(results[start:start + len(batch.jobs)])

    def _run(self, batch):
        """An inline batch, in the submitting thread."""
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
        """Stop the runs in flight (their batches fail: the executor is closed), end the
        threads, close the backend."""
        with self._cond:
            self._closed = True
            runs = list(self._in_flight)
            self._cond.notify_all()
        for run in runs:
            if run.launch is not None:
                try:
                    run.launch.stop(0, len(run.jobs))
                except Exception:   # closing: nothing more to tell anyone
                    pass
        for thread in self._threads:
            thread.join(30)
        for run in list(self._in_flight):
            for batch, _ in run.parts:
                if not batch.cancelled and not batch.done():
                    batch.fail(ExecutorError(f"{self.name} executor closed"))
            if run.launch is not None:
                try:
                    run.launch.stop(0, len(run.jobs))   # one started while closing, too
                    run.launch.results()        # its buffers back to the backend
                except Exception:   # closing: nothing more to tell anyone
                    pass
        self._in_flight.clear()
        self.backend.close()


class _Failed(_Finished):
    """A run whose start failed."""

    def __init__(self, error):
        self.results_or_error = error

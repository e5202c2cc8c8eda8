"""``PoolExecutor``: a process per accelerator (engine/worker.py), each running a backend that
declares ``worker_processes`` (the model); a job a cancelled batch left running is interrupted
by a signal, so the worker is free again within milliseconds."""

import itertools
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from multiprocessing.connection import Connection, wait as wait_for_connections

from .base import ExecutorError, QueueExecutor

__all__ = ["PoolExecutor"]


class _Worker:
    __slots__ = ("process", "reader", "writer", "busy")

    def __init__(self, process, reader, writer):
        self.process = process
        self.reader = reader        # Connection: replies from the worker
        self.writer = writer        # Connection: jobs to the worker
        self.busy = None            # (batch, index, job id) while a job runs


_POOL_START_SECONDS = 120
_job_ids = itertools.count(1)


class PoolExecutor(QueueExecutor):
    """``workers`` processes (engine/worker.py), each running the backend ``spec`` (``model``):
    N accelerators on N CPU cores. Jobs go to the first idle worker in submission order; a
    cancelled job is interrupted in its worker by SIGUSR1."""

    def __init__(self, spec="model", workers=1, evaluation="pst"):
        super().__init__()
        self._evaluation = evaluation
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
            # -P: the working folder is not put first on the worker's path, so a chessaccel/
            # folder there (a checkout, a copy) cannot shadow the installed package
            process = subprocess.Popen(
                [sys.executable, "-P", "-m", "chessaccel.host.engine.worker", self._spec,
                 str(to_worker_r), str(from_worker_w), self._evaluation],
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

    def _notify(self):
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def cancel_batch(self, batch):
        with self._lock:
            for worker in self._workers:
                if worker.busy is not None and worker.busy[0] is batch:
                    self._interrupt(worker)
        self._notify()

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
                    self.count(payload)
                    if not batch.cancelled:
                        batch.deliver(index, payload)
                elif status == "error":
                    batch.fail(ExecutorError(f"{self._spec} backend failed: {payload}"))

    def _worker_died(self, worker):
        with self._lock:
            busy, worker.busy = worker.busy, None
            self._workers.remove(worker)
        self._kill(worker)
        if busy is not None:
            busy[0].fail(ExecutorError(f"a {self._spec} worker process died "
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
                batch.fail(error)
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
        self._notify()
        self._thread.join(5)
        self._stop_workers()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def worker_pids(self):
        return [w.process.pid for w in self._workers]

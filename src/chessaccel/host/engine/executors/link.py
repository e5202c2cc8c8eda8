"""``LinkExecutor``: the cores of a board (simulated or real) behind the link protocol, one job
per core, polled, aborted on the board when cancelled: for backends that declare ``link_cores``
(host/backends/board/)."""

import threading
from collections import deque

from chessaccel.host.backends.base import first_line
from chessaccel.host.backends.board.client import BoardError

from .base import ExecutorError, QueueExecutor

__all__ = ["LinkExecutor"]


#: Polling of running jobs: first wait, growth and longest wait (seconds), as the board client.
_POLL_FIRST, _POLL_GROWTH, _POLL_LONGEST = 0.0005, 1.5, 0.05


class LinkExecutor(QueueExecutor):
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

    def _notify(self):
        self._wake.set()

    def cancel_batch(self, batch):
        self._wake.set()

    def _dispatch(self):
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
                    result = outcome.result()
                    self.count(result)
                    if not batch.cancelled:
                        batch.deliver(index, result)
                    progressed = True
                if progressed:
                    wait = _POLL_FIRST
                    continue
                idle = not self._running and not self._pending
                self._wake.wait(None if idle else wait)
                self._wake.clear()
                wait = min(wait * _POLL_GROWTH, _POLL_LONGEST)
        except BoardError as error:
            self._break(ExecutorError(f"board {self.name}: {first_line(error)}"))

    def _break(self, error):
        self.broken = error
        with self._lock:
            batches = {b for b, _ in self._pending} | {b for b, _, _ in self._running.values()}
            self._pending.clear()
            self._running.clear()
        for batch in batches:
            batch.fail(error)

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

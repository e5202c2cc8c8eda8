"""``LinkExecutor``: the cores of one or more boards (simulated or real) behind the link
protocol, one job per core, polled, aborted on the board when cancelled: for backends that
declare ``link_cores`` (host/backends/board/: ``verilator[:BOARDS]``, ``serial:PORT[,PORT...]``).

Each board has its own thread, which owns its link: it takes jobs from the one queue in
submission order while a core of its board is free, polls them, and aborts the jobs of
cancelled batches. A job is left to another board that has more free cores and is waiting for
work, so that a batch smaller than the cores is spread over the boards (and over their links);
a board busy in a request (a slow or silent one) is not waited for: it holds up only its own
thread.

A board that fails (its port gone, its far end closed, no answer after the client's retries)
is given up: its running jobs go back to the front of the queue and run on the other boards,
and one line saying so goes to ``events`` and to the backend's ``log`` (the UCI engine prints
it as an ``info string``). When the last board fails, the batches fail with one
ExecutorError line (``board serial:/dev/ttyUSB1: ...``), which the engine reports as any
backend failure, playing a legal move. A job the core refuses (``BadJob``) fails its batch
only: it would fail on any board.
"""

import threading
from collections import deque

from chessaccel.host.backends.base import first_line
from chessaccel.host.backends.board.client import BadJob, BoardError

from .base import ExecutorError, QueueExecutor

__all__ = ["LinkExecutor"]


#: Polling of running jobs: first wait, growth and longest wait (seconds), as the board client.
_POLL_FIRST, _POLL_GROWTH, _POLL_LONGEST = 0.0005, 1.5, 0.05
#: Seconds ``close`` waits for each board's thread (one may be inside a request's retries).
_JOIN_SECONDS = 10


def _dropped(batch):
    """Whether a batch's jobs not started yet are no longer wanted (cancelled, or failed)."""
    return batch.cancelled or batch.error is not None


class _Board:
    """One board of the executor: its backend, link client and cores, and what its thread
    runs (``running``: job id -> (batch, index, core), changed under the executor's lock)."""

    __slots__ = ("backend", "client", "name", "cores", "running", "alive", "jobs", "wake",
                 "thread", "waiting", "refused")

    def __init__(self, backend):
        self.backend = backend
        self.client = backend.client
        self.name = backend.name
        self.cores = backend.info.cores
        self.running = {}
        self.alive = True
        self.jobs = 0           # jobs finished here
        self.wake = threading.Event()
        self.thread = None
        self.waiting = False    # its thread waits for work (a job left to it is taken at once)
        self.refused = False    # it answered NO_FREE_CORE since its thread last waited

    def free(self):
        return self.cores - len(self.running)

    def takes_at_once(self):
        """Free cores a job left to this board would use at once (0: none, or not at once)."""
        return self.free() if self.alive and self.waiting and not self.refused else 0


class LinkExecutor(QueueExecutor):
    """The cores of a backend's ``boards``; see the module docstring."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.name = backend.name
        self.boards = [_Board(board) for board in backend.boards]
        self.slots = sum(board.cores for board in self.boards)
        self.parallel = self.speculate = self.slots > 1
        self.stats.update(boards_lost=0, jobs_rerun=0)
        #: one line per board given up, oldest first
        self.events = []
        self._lock = threading.Lock()
        self._pending = deque()
        self._closed = False
        for board in self.boards:
            board.thread = threading.Thread(target=self._serve, args=(board,),
                                            name=f"link-{board.name}", daemon=True)
            board.thread.start()

    def jobs_per_board(self):
        """{board name: jobs it has finished}, in the boards' order."""
        return {board.name: board.jobs for board in self.boards}

    def _notify(self):
        for board in self.boards:
            board.wake.set()

    def cancel_batch(self, batch):
        self._notify()

    # --- each board's thread -----------------------------------------------------------------

    def _serve(self, board):
        wait = _POLL_FIRST
        try:
            while not self._closed and board.alive:
                progressed = self._abort_cancelled(board)
                progressed |= self._hand_out(board)
                progressed |= self._collect(board)
                if progressed:
                    wait = _POLL_FIRST
                    continue
                idle = not board.running and not self._pending
                board.waiting = True
                board.wake.wait(None if idle else wait)
                board.wake.clear()
                board.waiting = board.refused = False
                wait = min(wait * _POLL_GROWTH, _POLL_LONGEST)
        except BoardError as error:
            self._lose(board, error)
        except Exception as error:      # a bug here must fail the batches, not hang them
            self._break(ExecutorError(f"link executor failed on board {board.name}: "
                                      f"{type(error).__name__}: {first_line(error)}"))

    def _abort_cancelled(self, board):
        """Abort the board's jobs of cancelled batches, freeing their cores."""
        with self._lock:
            stale = [job_id for job_id, (batch, _, _) in board.running.items() if batch.cancelled]
        for job_id in stale:
            board.client.abort(job_id)
            with self._lock:
                del board.running[job_id]
                self.stats["cancelled_jobs"] += 1
        return bool(stale)

    def _take(self, board):
        """The next pending job for ``board`` (under the lock), or None: none pending, no core
        free, or another board waiting for work has more free cores (it takes this one)."""
        while self._pending and _dropped(self._pending[0][0]):
            self._pending.popleft()
            self.stats["cancelled_jobs"] += 1
        if not self._pending or board.free() <= 0 or board.refused:
            return None
        if any(other.takes_at_once() > board.free() for other in self.boards):
            return None
        return self._pending.popleft()

    def _hand_out(self, board):
        """Give pending jobs to the board's free cores. A job counts as the board's from the
        moment it is taken (its core None until the board acknowledges it), so that another
        board's thread sees the cores it will use."""
        progressed = False
        while True:
            with self._lock:
                taken = self._take(board)
                if taken is None:
                    return progressed
                batch, index = taken
                job_id = board.client.new_job_id()
                board.running[job_id] = (batch, index, None)
            try:        # a BoardError but BadJob: the board fails, and its jobs go elsewhere
                core = board.client.submit(job_id, *batch.jobs[index])
            except BadJob as error:
                with self._lock:
                    del board.running[job_id]
                batch.fail(ExecutorError(f"board {board.name}: {first_line(error)}"))
                continue
            with self._lock:
                if core is None:        # the board has no free core after all: later
                    del board.running[job_id]
                    board.refused = True
                    self._pending.appendleft(taken)
                else:
                    board.running[job_id] = (batch, index, core)
            if core is None:
                self._notify()          # another board may take it
                return progressed
            progressed = True

    def _collect(self, board):
        """Deliver the board's finished jobs."""
        progressed = False
        for job_id, (batch, index, core) in list(board.running.items()):
            try:
                outcome = board.client.poll(job_id, core)
            except BadJob as error:
                with self._lock:
                    del board.running[job_id]
                batch.fail(ExecutorError(f"board {board.name}: {first_line(error)}"))
                progressed = True
                continue
            if outcome is None:
                continue
            result = outcome.result()
            with self._lock:
                del board.running[job_id]
                board.jobs += 1
                self.count(result)
            if not batch.cancelled:
                batch.deliver(index, result)
            progressed = True
        return progressed

    # --- a board that fails --------------------------------------------------------------------

    def _lose(self, board, error):
        """``board`` failed: its jobs go back to the front of the queue for the other boards;
        with none left the executor is broken."""
        with self._lock:
            board.alive = False
            again = [(batch, index) for batch, index, _ in board.running.values()
                     if not _dropped(batch)]
            board.running.clear()
            self._pending.extendleft(reversed(again))
            self.stats["boards_lost"] += 1
            self.stats["jobs_rerun"] += len(again)
            others = [other.name for other in self.boards if other.alive]
        if self._closed:
            return
        if not others:
            last = f"board {board.name}: {first_line(error)}"
            if len(self.boards) > 1:
                last += f" (no board of {self.name} is left)"
            self._break(ExecutorError(last))
            return
        self._event(f"board {board.name} failed ({first_line(error)}); its {len(again)} "
                    f"running job(s) go to {', '.join(others)}")
        self._notify()

    def _break(self, error):
        with self._lock:
            self.broken = error
            batches = {b for b, _ in self._pending}
            for board in self.boards:
                batches |= {b for b, _, _ in board.running.values()}
                board.running.clear()
                board.alive = False
            self._pending.clear()
        self._notify()
        for batch in batches:
            batch.fail(error)

    def _event(self, line):
        self.events.append(line)
        log = self.backend.log
        if log is not None:
            try:
                log(line)
            except Exception:   # a log that fails must not take the board's thread down
                pass

    # --- closing -----------------------------------------------------------------------------

    def close(self):
        self._closed = True
        self._notify()
        for board in self.boards:
            board.thread.join(_JOIN_SECONDS)
        for board in self.boards:
            if board.running and board.alive and not board.thread.is_alive():
                try:
                    board.client.abort()
                except Exception:   # the link is going away anyway
                    pass
        self.backend.close()

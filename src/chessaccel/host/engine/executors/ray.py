"""``RayExecutor``: the actors of a ``ray:SPEC[@ADDRESS]`` backend (host/backends/ray.py), one
job each, on this machine or a Ray cluster.

Each actor holds ``get_backend(SPEC)``; a job goes to the first idle actor in submission order
(``actor.search.remote(job id, job)``, the job pickled as it is) and its result comes back
through the ref's future into the executor's own thread, which delivers it to the batch. A
cancelled batch's running jobs are interrupted in their actors (``actor.interrupt.remote``:
the model stops within milliseconds; a device backend finishes the job and its result is
dropped).

An actor that dies (its process killed, its machine gone) is survived: its job goes back to
the front of the queue and runs on another actor, a replacement actor is started, and one line
saying so goes to ``events`` and to the backend's ``log`` (the UCI engine prints it as an
``info string``). A job that has killed ``MAX_JOB_RETRIES`` + 1 actors, or the loss of the last
actor with no replacement able to start, fails its batches with one ExecutorError line.
"""

import itertools
import queue
import threading
from collections import deque

from chessaccel.host.backends.base import BackendError, first_line

from .base import ExecutorError, QueueExecutor

__all__ = ["RayExecutor", "MAX_JOB_RETRIES"]

#: Times one job is run again after the actor running it died.
MAX_JOB_RETRIES = 2
_job_ids = itertools.count(1)


class _Actor:
    __slots__ = ("handle", "number", "pid", "node", "busy")

    def __init__(self, handle, number):
        self.handle = handle
        self.number = number        # 1, 2, ... in start order (replacements included)
        self.pid = self.node = None
        self.busy = None            # (batch, index, job id) while a job runs


class RayExecutor(QueueExecutor):
    """Jobs to the actors of a RayBackend, one each; see the module docstring."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend
        self.ray = backend.ray
        self.name = backend.name
        self.slots = len(backend.actors)
        # one actor: no speculative work (it would only add to the one accelerator's queue)
        self.parallel = self.speculate = self.slots > 1
        self.stats.update(peak_busy=0, actors_lost=0, jobs_rerun=0)
        #: one line per thing that went wrong and was survived (or not), oldest first
        self.events = []
        self._numbers = itertools.count(1)
        self._actors = []
        for handle, (pid, node) in zip(backend.actors, backend.actor_info):
            actor = _Actor(handle, next(self._numbers))
            actor.pid, actor.node = pid, node
            self._actors.append(actor)
        self._starting = []         # replacement _Actors not ready yet
        self._retries = {}          # (id(batch), index) -> times run again, until it finishes
        self._lock = threading.Lock()
        self._pending = deque()     # (batch, index) not started
        self._inbox = queue.Queue()  # what the dispatcher acts on, from Ray's threads and ours
        self._closed = False
        self._thread = threading.Thread(target=self._dispatch, name=f"ray-{self.name}",
                                        daemon=True)
        self._thread.start()

    # --- the job interface -------------------------------------------------------------------

    def _notify(self):
        self._inbox.put(("wake",))

    def cancel_batch(self, batch):
        with self._lock:
            # its jobs not started leave the queue now, so they are counted once, at the cancel
            kept = deque(entry for entry in self._pending if entry[0] is not batch)
            dropped = len(self._pending) - len(kept)
            if dropped:
                self._pending = kept
                self.stats["cancelled_jobs"] += dropped
                for key in [key for key in self._retries if key[0] == id(batch)]:
                    del self._retries[key]
            for actor in self._actors:
                if actor.busy is not None and actor.busy[0] is batch:
                    try:
                        actor.handle.interrupt.remote(actor.busy[2])
                    except Exception:   # a dead actor: its death comes in as its job's error
                        pass
        self._notify()

    def actor_pids(self, busy_only=False):
        """``(pid, node address)`` of each live actor (``busy_only``: of those running a job),
        in start order. Not ``worker_pids``: these processes may be on other machines."""
        with self._lock:
            return [(actor.pid, actor.node) for actor in self._actors
                    if actor.busy is not None or not busy_only]

    # --- the executor's thread ---------------------------------------------------------------

    def _dispatch(self):
        while True:
            message = self._inbox.get()
            if self._closed:
                return
            try:
                kind = message[0]
                if kind == "done":
                    self._finished(*message[1:])
                elif kind == "ready":
                    self._started(*message[1:])
                with self._lock:
                    self._assign()
            except Exception as error:  # a bug here must fail the batches, not hang them
                self._break(ExecutorError(f"ray executor failed: {type(error).__name__}: "
                                          f"{first_line(error)}"))
                return

    def _break(self, error):
        with self._lock:
            self.broken = error
            batches = {b for b, _ in self._pending}
            batches |= {a.busy[0] for a in self._actors if a.busy is not None}
            self._pending.clear()
        for batch in batches:
            batch.fail(error)

    def _assign(self):
        """Give pending jobs to idle actors (under the lock)."""
        for actor in self._actors:
            if actor.busy is not None:
                continue
            while self._pending:
                batch, index = self._pending.popleft()
                if batch.cancelled:
                    self.stats["cancelled_jobs"] += 1
                    self._retries.pop((id(batch), index), None)
                    continue
                job_id = next(_job_ids)
                actor.busy = (batch, index, job_id)
                try:
                    ref = actor.handle.search.remote(job_id, batch.jobs[index])
                    future = ref.future()
                except Exception as error:  # noqa: BLE001 (Ray's errors): the actor is gone
                    self._inbox.put(("done", actor, job_id, None, error))
                    break
                future.add_done_callback(
                    lambda f, a=actor, j=job_id: self._inbox.put(("done", a, j, f, None)))
                break
        busy = sum(1 for actor in self._actors if actor.busy is not None)
        self.stats["peak_busy"] = max(self.stats["peak_busy"], busy)

    def _finished(self, actor, job_id, future, error):
        if error is None:
            try:
                status, payload = future.result()
            except Exception as raised:     # the actor died (or Ray lost it) mid-job
                error = raised
        with self._lock:
            busy = actor.busy
            if busy is None or busy[2] != job_id:
                return
            actor.busy = None
        batch, index, _ = busy
        with self._lock:
            if error is None:
                self._retries.pop((id(batch), index), None)
        if error is not None:
            exceptions = self.ray.exceptions
            if (isinstance(error, exceptions.RayTaskError)
                    and not isinstance(error, exceptions.RayActorError)):
                # the actor is alive; the call itself failed (a result that cannot be sent)
                if not batch.cancelled:
                    batch.fail(ExecutorError(f"{self.backend.inner} job failed on a Ray actor: "
                                             f"{first_line(error.cause or error)}"))
                return
            self._lost(actor, batch, index, error)
            return
        if status == "ok":
            self.count(payload)
            if not batch.cancelled:
                batch.deliver(index, payload)
        elif status == "aborted":
            self.stats["cancelled_jobs"] += 1
        elif not batch.cancelled:
            batch.fail(ExecutorError(f"{self.backend.inner} backend failed on a Ray actor: "
                                     f"{payload}"))

    def _lost(self, actor, batch, index, error):
        """``actor`` died running job ``index`` of ``batch``: run the job again, replace it."""
        with self._lock:
            if actor in self._actors:
                self._actors.remove(actor)
            self.stats["actors_lost"] += 1
            key = (id(batch), index)
            retries = self._retries.get(key, 0)
            rerun = not batch.cancelled and retries < MAX_JOB_RETRIES
            if rerun:
                self._retries[key] = retries + 1
                self._pending.appendleft((batch, index))
                self.stats["jobs_rerun"] += 1
        try:
            self.ray.kill(actor.handle)     # an actor only unreachable must not come back
        except Exception:   # already gone
            pass
        what = type(error).__name__
        where = f"pid {actor.pid}" + (f" on {actor.node}" if actor.node else "")
        if batch.cancelled:
            fate = "its job was no longer needed"
        elif rerun:
            fate = "its job runs again on another actor"
        else:
            fate = f"its job killed {retries + 1} actors and is given up"
        replacement, failure = self._replace()
        # the line first: whoever waits on the batch sees it before the failure
        self._event(f"ray: actor {actor.number} ({where}) died mid-job ({what}); {fate}; "
                    f"{replacement}")
        if not batch.cancelled and not rerun:
            batch.fail(ExecutorError(f"a {self.backend.inner} job killed {retries + 1} Ray "
                                     f"actors in a row ({what})"))
        if failure is not None:
            self._check_alive(failure)

    def _replace(self):
        """Start a replacement actor: (what happened in words, the BackendError if none could
        be started)."""
        if self._closed:
            return "no replacement (closing)", None
        try:
            handle, ready = self.backend.start_actor()
        except BackendError as error:
            return f"no replacement: {first_line(error)}", error
        actor = _Actor(handle, next(self._numbers))
        with self._lock:
            self._starting.append(actor)
        ready.future().add_done_callback(
            lambda f, a=actor: self._inbox.put(("ready", a, f)))
        return f"replacement actor {actor.number} starting", None

    def _started(self, actor, future):
        with self._lock:
            if actor not in self._starting:     # closed meanwhile
                return
            self._starting.remove(actor)
        try:
            actor.pid, actor.node = future.result()
        except Exception as error:      # Ray's or the backend's
            cause = getattr(error, "cause", None) or error
            line = f"ray: replacement actor {actor.number} failed to start: {first_line(cause)}"
            self._event(line)
            self._check_alive(ExecutorError(line))
            return
        with self._lock:
            self._actors.append(actor)

    def _check_alive(self, error):
        """No actor left and none starting: the executor is broken, its batches fail."""
        with self._lock:
            if self._actors or self._starting:
                return
            self.broken = error if isinstance(error, ExecutorError) else \
                ExecutorError(f"every Ray actor of {self.backend.inner} is dead: "
                              f"{first_line(error)}")
            batches = {b for b, _ in self._pending}
            self._pending.clear()
        for batch in batches:
            batch.fail(self.broken)

    def _event(self, line):
        self.events.append(line)
        log = self.backend.log
        if log is not None:
            try:
                log(line)
            except Exception:   # a log that fails must not take the dispatcher down
                pass

    # --- closing -----------------------------------------------------------------------------

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._inbox.put(("close",))
        self._thread.join(10)
        # the replacements started for this executor are the backend's to kill with the others
        with self._lock:
            self.backend.actors = [actor.handle for actor in self._actors + self._starting]
            self._starting = []
        self.backend.close()

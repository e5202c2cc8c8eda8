"""``ray:SPEC[@ADDRESS]``: any backend, one copy per Ray actor, on this machine or a cluster.

Ray (``pip install 'chessaccel[ray]'``) is the distributed runtime; the project adds no network
layer of its own. ``SPEC`` is any other backend's spec (``model``, ``opencl``,
``opencl:Portable``, ...), run by each actor as ``get_backend(SPEC)`` in its own process;
``ADDRESS`` says which Ray:

- ``ray:model``: a Ray instance of this machine's own, started for the backend and shut down
  with it (as many CPUs as the larger of the cores and the accelerators asked for);
- ``ray:model@auto``: the cluster that ``ray start --head`` (and ``ray start --address=HEAD``
  on the other machines) made, found the way Ray finds it (``RAY_ADDRESS``, then this
  machine's running head);
- ``ray:model@HOST:PORT`` or ``ray:model@ray://HOST:10001``: that cluster's head (GCS address
  or Ray Client address).

``@`` separates the two because an inner spec may itself hold ``:`` and ``/``
(``serial:/dev/ttyUSB0``, ``opencl:NVIDIA:1``). Every machine of a cluster needs chessaccel
installed with the same Python. The backend starts ``accelerators`` actors (one CPU each, so
Ray spreads them over the cluster's cores); the engine's ``RayExecutor``
(engine/executors/ray.py) feeds them job by job and survives their death. Used alone (``chessaccel
search --backend ray:model``), a search runs on the first actor.
"""

import os
import threading

from .base import Backend, BackendError, Capabilities, first_line
from .spec import parse_spec

__all__ = ["RayBackend", "RaySpec", "parse_ray_spec"]

#: Seconds an actor has to start its backend (a first OpenCL build can take a while).
ACTOR_START_SECONDS = 300
#: Seconds a cluster's head has to take a TCP connection.
CONNECT_SECONDS = 10
USAGE = "ray:SPEC[@ADDRESS]"


class RaySpec:
    """``inner`` (a BackendSpec) and ``address`` (None: a Ray of this machine's own)."""

    def __init__(self, inner, address):
        self.inner, self.address = inner, address


def parse_ray_spec(spec):
    """A RaySpec from ``ray:SPEC[@ADDRESS]`` (a BackendSpec of scheme ``ray``). BackendError with
    one line when the argument is missing, the address empty, or the inner spec not a backend."""
    usage = "ray:SPEC or ray:SPEC@ADDRESS, such as 'ray:model' or 'ray:model@auto'"
    if spec.argument is None or not spec.argument.strip():
        raise BackendError(f"backend 'ray' needs the spec its actors run: {usage}")
    inner, at, address = spec.argument.rpartition("@")
    if not at:
        inner, address = spec.argument, None
    elif not address.strip():
        raise BackendError(f"backend {spec.text!r}: nothing after '@' ({usage})")
    inner = parse_spec(inner)
    if inner.scheme == "ray":
        raise BackendError(f"backend {spec.text!r}: a ray actor cannot run another ray backend")
    from .registry import backend_class
    try:
        backend_class(inner)        # an unknown inner scheme is refused here, with its names
    except BackendError as error:
        raise BackendError(f"backend {spec.text!r}: {error}") from None
    return RaySpec(inner, address)


def import_ray():
    try:
        import ray
    except ImportError:
        raise BackendError("the ray backend needs Ray: pip install 'chessaccel[ray]'") from None
    return ray


def ray_failure(error):
    """One line for an exception out of Ray (its messages run to many lines)."""
    return f"{type(error).__name__}: {first_line(error)}"


class _Accelerator:
    """One accelerator: a Ray actor (``ray.remote`` is applied when Ray is imported) holding
    ``get_backend(spec)``. Two threads: ``search`` runs a job while ``interrupt`` may stop it
    (an exception raised in the searching thread, the way a signal stops a PoolExecutor's
    worker, but through Ray, so it crosses machines)."""

    def __init__(self, spec):
        from .registry import get_backend
        self._lock = threading.Lock()
        self._running = None            # (job id, thread id) while a job runs
        self._error = None
        try:
            self._backend = get_backend(spec)
        except BackendError as error:
            self._backend, self._error = None, first_line(error)
        # only a backend that runs in this process, job by job (the model), is stopped mid-job:
        # an exception inside a device's driver calls could leave the device half-way
        self._interruptible = (self._backend is not None
                               and self._backend.capabilities.worker_processes)

    def ready(self):
        """``(pid, node address)``, or raises BackendError when the backend did not start."""
        import ray
        if self._error is not None:
            raise BackendError(self._error)
        return os.getpid(), ray.util.get_node_ip_address()

    def search(self, job_id, job):
        """``("ok", JobResult)``, ``("aborted", None)`` or ``("error", line)``."""
        try:
            try:
                with self._lock:
                    self._running = (job_id, threading.get_ident())
                return "ok", self._backend.search_many([job])[0]
            finally:
                self._stop_interrupts()
        except _JobAborted:
            self._stop_interrupts()
            return "aborted", None
        except Exception as error:  # the backend's failure goes back as one line
            return "error", first_line(error)

    def _stop_interrupts(self):
        """No interrupt can reach this thread after this (one pending is dropped)."""
        with self._lock:
            if self._running is not None:
                _async_raise(self._running[1], None)
            self._running = None

    def interrupt(self, job_id):
        """Stop job ``job_id`` if it is the one running (a later job is never touched)."""
        with self._lock:
            if (self._interruptible and self._running is not None
                    and self._running[0] == job_id):
                _async_raise(self._running[1], _JobAborted)

    def call(self, method, *args):
        """``backend.method(*args)`` (moves, perft, describe)."""
        return getattr(self._backend, method)(*args)


class _JobAborted(Exception):
    pass


def _async_raise(thread_id, exception):
    """Raise ``exception`` in thread ``thread_id`` at its next Python instruction (None: cancel
    one not raised yet)."""
    import ctypes
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exception) if exception
                                               else None)


_remote_class = None
#: The Ray this module started or reached for its backends: how many use it, and its address
#: (None: a local one).
_OWN = {"users": 0, "address": None}
_OWN_LOCK = threading.Lock()


def _actor_class(ray):
    global _remote_class
    if _remote_class is None:
        _remote_class = ray.remote(num_cpus=1, max_concurrency=2, max_restarts=0)(_Accelerator)
    return _remote_class


def _reachable(address):
    """Raise ConnectionError unless ``HOST:PORT`` (or ``ray://HOST:PORT``) takes a TCP connection
    within CONNECT_SECONDS: Ray itself retries an address nobody listens on for minutes."""
    import socket
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return                          # "auto", or a form Ray reads itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as error:
        raise ConnectionError(f"nothing answers at {host}:{port} "
                              f"({error.strerror or type(error).__name__})") from None


def _keep_stdout_clean(ray):
    """Ray's driver prints what its raylets report (a worker that died, ...) on stdout, which is
    the UCI engine's protocol channel: send those lines to stderr. Ray has no option for it
    (``log_to_driver=False`` covers the workers' own output only), so the module function its
    listener thread calls is wrapped; a Ray without it is left as it is."""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "_chessaccel_stderr", False):
        return

    def to_stderr(data, *args, **kwargs):
        return original(dict(data, is_err=True), *args, **kwargs)

    to_stderr._chessaccel_stderr = True
    worker.print_to_stdstream = to_stderr


class RayBackend(Backend):
    """``accelerators`` Ray actors, each running the backend ``inner`` (see the module
    docstring). ``actors`` holds their handles in start order; ``start_actor()`` starts one
    more (the executor replaces a dead one so)."""

    name = "ray"
    #: the executor feeds the actors one job each (engine/executors/ray.py)
    capabilities = Capabilities(actors=True)

    @classmethod
    def usage(cls, scheme):
        return f"{scheme}:SPEC[@ADDRESS]"

    @classmethod
    def from_spec(cls, spec, *, accelerators=None, log=None):
        return cls(parse_ray_spec(spec), accelerators or 1, log=log)

    def __init__(self, spec, accelerators=1, log=None):
        self.ray = ray = import_ray()
        self.spec = spec
        self.inner = spec.inner.text
        self.address = spec.address
        self.name = f"ray:{self.inner}" + (f"@{spec.address}" if spec.address else "")
        self.log = log
        self.actors = []
        #: ``(pid, node address)`` of each of ``actors``, as they answered ``ready()``
        self.actor_info = []
        self._own_ray = False
        self._connect(accelerators)
        try:
            starting = [self.start_actor() for _ in range(accelerators)]
            for actor, ready in starting:
                self.actors.append(actor)
                self.actor_info.append(self.wait_ready(ready))
        except BaseException:
            self.close()
            raise

    def _connect(self, accelerators):
        """Join the Ray this process uses, or start / reach the one the spec names. A Ray this
        module started (``_OWN``) is shared by its backends (the UCI engine makes the next
        executor before closing the last) and shut down with the last of them."""
        ray = self.ray
        _keep_stdout_clean(ray)
        with _OWN_LOCK:
            if ray.is_initialized():
                if not _OWN["users"]:
                    return                  # joined by the caller (the tests): theirs to end
                if _OWN["address"] != self.address:
                    where = _OWN["address"] or "a local Ray"
                    raise BackendError(f"this process already runs its actors on {where}: "
                                       f"restart it to use {self.address or 'a local Ray'}")
            else:
                self._init(accelerators)
                _OWN["address"] = self.address
            _OWN["users"] += 1
            self._own_ray = True

    def _init(self, accelerators):
        ray = self.ray
        options = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                       configure_logging=True)
        try:
            if self.address is None:
                cpus = max(accelerators, os.cpu_count() or 1)
                ray.init(address="local", num_cpus=cpus, **options)
            else:
                _reachable(self.address)
                ray.init(address=self.address, **options)
        except Exception as error:      # Ray's own errors (ConnectionError, ValueError, ...)
            where = "start a local Ray" if self.address is None else \
                f"reach the Ray cluster at {self.address!r}"
            raise BackendError(f"cannot {where}: {ray_failure(error)}") from None

    def _local(self):
        """True when the actors run on this machine's own Ray (one node)."""
        if self.address is not None:
            return False
        try:
            return len(self.ray.nodes()) == 1
        except Exception:   # Ray cannot say: count CPUs, as on a cluster
            return False

    def start_actor(self):
        """A new actor and the ref of its ``ready()`` (``wait_ready`` or the executor's loop
        waits for it)."""
        try:
            # on a cluster one CPU each, so that Ray spreads the actors over the machines; on
            # this machine none: the cores are the actors' anyway, and the engine's next
            # executor (Accelerators changed) starts before the last one's actors are gone
            cpus = 0 if self._local() else 1
            actor = _actor_class(self.ray).options(num_cpus=cpus).remote(self.inner)
            return actor, actor.ready.remote()
        except Exception as error:
            raise BackendError(f"cannot start a Ray actor: {ray_failure(error)}") from None

    def wait_ready(self, ready):
        """``(pid, node)`` of a started actor; BackendError with its backend's line if it failed."""
        ray = self.ray
        try:
            return ray.get(ready, timeout=ACTOR_START_SECONDS)
        except ray.exceptions.GetTimeoutError:
            raise BackendError(f"a ray:{self.inner} actor did not start in "
                               f"{ACTOR_START_SECONDS} s (are the cluster's CPUs all taken?)") \
                from None
        except ray.exceptions.RayTaskError as error:
            raise BackendError(f"backend {self.name!r}: "
                               f"{first_line(error.cause or error)}") from None
        except Exception as error:
            raise BackendError(f"backend {self.name!r}: an actor failed to start: "
                               f"{ray_failure(error)}") from None

    def _call(self, method, *args):
        ray = self.ray
        try:
            return ray.get(self.actors[0].call.remote(method, *args))
        except ray.exceptions.RayTaskError as error:
            cause = error.cause or error
            if isinstance(cause, BackendError):
                raise BackendError(first_line(cause)) from None
            raise BackendError(f"{self.inner} on a Ray actor: {ray_failure(cause)}") from None
        except Exception as error:
            raise BackendError(f"ray:{self.inner}: {ray_failure(error)}") from None

    def moves(self, board):
        return self._call("moves", board)

    def perft(self, board, depth, divide=False):
        return self._call("perft", board, depth, divide)

    def search(self, board, depth, alpha, beta):
        return self._call("search", board, depth, alpha, beta)

    def search_many(self, jobs):
        return self._call("search_many", list(jobs))

    def describe(self):
        where = self.address or "a local Ray"
        return f"{len(self.actors)} Ray actor(s) of {self.inner} on {where}"

    def close(self):
        ray = self.ray
        for actor in self.actors:
            try:
                ray.kill(actor)
            except Exception:   # already dead, or Ray already gone
                pass
        self.actors = []
        if self._own_ray:
            self._own_ray = False
            with _OWN_LOCK:
                _OWN["users"] -= 1
                if not _OWN["users"] and ray.is_initialized():
                    ray.shutdown()

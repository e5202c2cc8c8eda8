"""Executors: how the engine's leaf jobs reach a backend's accelerators (base.py tells the
interface). ``make_executor(spec, accelerators)`` picks one from what the backend declares
(its ``Capabilities``, host/backends/base.py):

- ``PoolExecutor`` (pool.py; ``worker_processes``: the model): ``accelerators`` worker
  processes (engine/worker.py), each running the backend.
- ``LinkExecutor`` (link.py; ``link_cores``: ``verilator[:BOARDS]``, ``serial:PORT[,PORT...]``):
  the cores of one or more boards over the link protocol, one job per core; a board that fails
  is given up and its jobs run on the others; ``verilator`` starts a simulated board with
  ``accelerators`` cores (``verilator:BOARDS``, that many such boards).
- ``RayExecutor`` (ray.py; ``actors``: ``ray:SPEC[@ADDRESS]``): one Ray actor per
  accelerator, each running the backend SPEC, job by job; a dead actor's job runs again.
- ``BatchExecutor`` (batch.py; any other backend: ``rtl``, ``opencl``, ...): the batches queued
  at a moment merged into one ``Backend.search_many(jobs)`` call of up to ``launch_jobs`` jobs
  (one batch per call where the backend declares none); ``start_search`` with two runs in
  flight and jobs stopped on the device where the backend declares ``async_launches``.
"""

from chessaccel.contract.evalweights import DEFAULT_EVALUATION
from chessaccel.host.backends import (Backend, backend_class, check_backend_evaluation, get_backend,
                                      parse_spec)

from .base import Batch, Executor, ExecutorError, Job
from .batch import BatchExecutor
from .link import LinkExecutor
from .pool import PoolExecutor
from .ray import RayExecutor

__all__ = ["Job", "Batch", "Executor", "ExecutorError", "PoolExecutor", "LinkExecutor",
           "BatchExecutor", "RayExecutor", "make_executor"]


def make_executor(spec, accelerators=1, log=None, evaluation=DEFAULT_EVALUATION):
    """The executor for backend ``spec`` (any spec ``get_backend`` accepts) with
    ``accelerators`` worker processes (model) or simulated cores (verilator: of each board),
    searching with the static ``evaluation``. Raises BackendError with one line when the
    backend cannot start or cannot evaluate that way."""
    if not isinstance(accelerators, int) or accelerators < 1:
        raise ExecutorError(f"accelerators must be a positive integer, got {accelerators!r}")
    parsed = parse_spec(spec)
    capabilities = backend_class(parsed).capabilities
    check_backend_evaluation(parsed, evaluation)
    if capabilities.worker_processes:
        return PoolExecutor(parsed.text, accelerators, evaluation=evaluation)
    backend = get_backend(parsed, accelerators=accelerators, log=log, evaluation=evaluation)
    if not isinstance(backend, Backend):
        raise ExecutorError(f"backend {parsed.text!r} is not a Backend")
    if capabilities.link_cores:
        return LinkExecutor(backend)
    if capabilities.actors:
        return RayExecutor(backend)
    return BatchExecutor(backend)

"""Backends: one interface, several implementations of the search contract.

- base.py: ``Backend``, its typed results (``JobResult``, ``PerftResult``), its declared
  ``Capabilities`` and ``BackendError``;
- spec.py: the one parser of specs (``parse_spec``: ``SCHEME[:ARGUMENT]``);
- registry.py: the backends by scheme, built in or plugged in through the
  ``chessaccel.backends`` entry points (``get_backend``, ``backend_names``);
- the backends: ``model`` (model.py, the golden reference), ``rtl`` (rtl.py, the RTL
  simulated), ``verilator`` and ``serial:PORT`` (board/, the board behind the link protocol),
  ``opencl[:PLATFORM[:INDEX|I,J,...|all]]`` (opencl.py, registering host/opencl/), ``ray:SPEC[@ADDRESS]``
  (ray.py: any of them on Ray actors, this machine's or a cluster's).
"""

from .base import (Backend, BackendError, Capabilities, JobResult, PerftResult, first_line,
                   optional_module, evaluation_problem)
from .registry import (BUILTIN, ENTRY_POINT_GROUP, backend_class, backend_names, get_backend,
                       registered_backends, check_backend_evaluation)
from .spec import BackendSpec, parse_spec

__all__ = ["Backend", "BackendError", "Capabilities", "JobResult", "PerftResult", "first_line",
           "optional_module", "BackendSpec", "parse_spec", "BUILTIN", "ENTRY_POINT_GROUP",
           "backend_class", "backend_names", "get_backend", "registered_backends",
           "evaluation_problem", "check_backend_evaluation"]

"""The backends by scheme: the project's own from ``BUILTIN``, others from entry points.

``BUILTIN`` is the table pyproject.toml declares under ``[project.entry-points.
"chessaccel.backends"]`` (tests/test_backends.py holds the two equal), so the project's own
backends work from a checkout that was never installed. A backend in another package plugs in
the way Glasgow's applets do, with an entry point in that group::

    [project.entry-points."chessaccel.backends"]
    abacus = "mypackage.abacus:AbacusBackend"

naming a ``Backend`` subclass (host/backends/base.py) whose ``from_spec`` reads the spec. A
backend is imported only when a spec names it (or when the names are listed).
"""

import importlib
from importlib import metadata

from chessaccel.contract.evalweights import DEFAULT_EVALUATION

from .base import Backend, BackendError, evaluation_problem
from .spec import parse_spec

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "backend_class", "backend_names", "get_backend",
           "registered_backends", "check_backend_evaluation"]

ENTRY_POINT_GROUP = "chessaccel.backends"

#: scheme -> "module:Class", as pyproject.toml lists them.
BUILTIN = {
    "model": "chessaccel.host.backends.model:ModelBackend",
    "rtl": "chessaccel.host.backends.rtl:RtlBackend",
    "verilator": "chessaccel.host.backends.board:SimulatedBoardBackend",
    "serial": "chessaccel.host.backends.board:BoardBackend",
    "opencl": "chessaccel.host.backends.opencl:OpenCLBackend",
    "ray": "chessaccel.host.backends.ray:RayBackend",
}


def registered_backends():
    """scheme -> "module:Class": the built-in backends, then those other installed packages
    declare (a built-in scheme is never replaced)."""
    table = dict(BUILTIN)
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        table.setdefault(entry.name, entry.value)
    return table


def _load(scheme, target):
    module, _, attribute = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attribute)
    except ImportError as e:
        raise BackendError(f"the {scheme} backend is not available in this build ({e})") from None
    except AttributeError:
        raise BackendError(f"the {scheme} backend's entry point {target!r} names nothing") from None
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise BackendError(f"the {scheme} backend's entry point {target!r} is not a Backend")
    return cls


def backend_class(spec):
    """The Backend subclass registered for ``spec``'s scheme (a spec or a scheme); BackendError
    naming the spec and listing the known ones when none is."""
    parsed = parse_spec(spec)
    table = registered_backends()
    if parsed.scheme not in table:
        raise BackendError(f"unknown backend {parsed.text!r} "
                           f"(choose from: {', '.join(backend_names())})")
    return _load(parsed.scheme, table[parsed.scheme])


def backend_names():
    """How each registered backend's spec is written (its ``usage``), in registry order."""
    names = []
    for scheme, target in registered_backends().items():
        try:
            names.append(_load(scheme, target).usage(scheme))
        except BackendError:        # not installed here: still a name to choose
            names.append(scheme)
    return tuple(names)


def get_backend(spec, *, accelerators=None, log=None, evaluation=DEFAULT_EVALUATION):
    """The backend named by ``spec`` (a string or a BackendSpec): ``model``, ``rtl``,
    ``verilator``, ``serial:PORT``, ``opencl[:PLATFORM[:INDEX|I,J,...|all]]``, ``ray:SPEC[@ADDRESS]`` or a
    plugged-in one, searching with the static ``evaluation`` ("pst" or "terms": a backend that
    does not list it in its ``evaluations`` is refused).
    ``accelerators`` and ``log`` go to its ``from_spec``, and ``evaluation`` too when it is not
    the default (so a backend that knows only "pst" is never asked). Raises BackendError with
    one line."""
    parsed = parse_spec(spec)
    cls = backend_class(parsed)
    check_backend_evaluation(parsed, evaluation)
    options = {} if evaluation == DEFAULT_EVALUATION else {"evaluation": evaluation}
    return cls.from_spec(parsed, accelerators=accelerators, log=log, **options)


def check_backend_evaluation(spec, evaluation):
    """BackendError (one line) when the backend of ``spec`` cannot search with ``evaluation``."""
    parsed = parse_spec(spec)
    problem = evaluation_problem(parsed.text, backend_class(parsed).evaluations, evaluation)
    if problem:
        raise BackendError(problem)

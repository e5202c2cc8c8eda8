"""The one parser of backend specs: ``SCHEME[:ARGUMENT]``.

``model``, ``rtl``, ``verilator``, ``serial:/dev/ttyUSB0``, ``opencl``, ``opencl:NVIDIA``,
``opencl:NVIDIA:1``: the scheme names the backend (the registry's key, host/backends/registry.py)
and the argument, everything after the first colon, is the backend's to read (a port, a platform
and a device index). Every place that takes a spec (the command line, the UCI ``Backend`` option,
the engine's executors and workers) parses it here.
"""

from dataclasses import dataclass

from .base import BackendError

__all__ = ["BackendSpec", "parse_spec"]

@dataclass(frozen=True)
class BackendSpec:
    """A parsed spec: ``scheme`` and ``argument`` (None when there is no colon;
    it may be empty, which each backend refuses in its own words). ``text`` is the spec as
    written."""

    scheme: str
    argument: object = None

    @property
    def text(self):
        return self.scheme if self.argument is None else f"{self.scheme}:{self.argument}"

    def __str__(self):
        return self.text


def parse_spec(spec):
    """A BackendSpec from ``spec`` (a string, or a BackendSpec returned as it is). Raises
    BackendError with one line for what is not a spec at all; whether the scheme is known and
    the argument right is the registry's and the backend's to say."""
    if isinstance(spec, BackendSpec):
        return spec
    if not isinstance(spec, str):
        raise BackendError(f"a backend spec is a string such as 'model' or 'opencl:NVIDIA', "
                           f"got {spec!r}")
    scheme, colon, argument = spec.partition(":")
    if not scheme.strip() or scheme != scheme.strip():
        raise BackendError(f"not a backend spec: {spec!r} (SCHEME or SCHEME:ARGUMENT, such as "
                           f"'model' or 'opencl:NVIDIA')")
    return BackendSpec(scheme, argument if colon else None)

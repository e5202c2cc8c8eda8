"""What the simulation builds share: a cross-process lock for build caches, and the check that
the Verilator toolchain is present."""

import fcntl
import shutil
from contextlib import contextmanager

__all__ = ["locked", "verilator_missing"]


@contextmanager
def locked(path):
    """Hold an exclusive lock on ``path`` (created with its folder): one builder per cache
    entry, whatever the number of pytest-xdist workers or processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def verilator_missing(purpose="the Verilator simulation"):
    """A one-line reason a Verilator build cannot run here, or None when it can."""
    for tool in ("verilator", "make", "c++"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed ({purpose} needs Verilator, make and a C++ compiler)"
    return None

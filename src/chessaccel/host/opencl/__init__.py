"""The OpenCL backend (issue 10): the search contract in OpenCL C kernels, node for node.

``get_backend("opencl")``, ``get_backend("opencl:PLATFORM-SUBSTRING")`` and
``get_backend("opencl:PLATFORM-SUBSTRING:INDEX")`` return an ``OpenCLBackend`` (registered by
host/backends/opencl.py). docs/opencl.md explains the kernels.
"""

from .backend import COUNT_MODES, OpenCLBackend
from .device import OpenCLError

__all__ = ["OpenCLBackend", "OpenCLError", "COUNT_MODES"]

"""``opencl[:PLATFORM[:INDEX|I,J,...|all]]``: the OpenCL kernels on a GPU, or on the CPU through PoCL.

The backend itself lives in host/opencl/ (kernels, device, layout, split; docs/opencl.md); this
module is its registry entry. PLATFORM is a substring of the platform's name or vendor, INDEX
the device's place among that platform's devices (GPUs first), so that a second GPU is
``opencl:NVIDIA:1``.
"""

from chessaccel.host.opencl.backend import OpenCLBackend

__all__ = ["OpenCLBackend"]

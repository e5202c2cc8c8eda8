"""What one launch costs on PoCL's two CPU devices, and whether two `basic` devices run at once.

Run from the repository root, once per device kind (PoCL reads POCL_DEVICES when it loads):
`POCL_DEVICES="basic basic" python docs/benchmarks/engine-pocl-2026-11-30/pocl_launch.py` and
`POCL_DEVICES=pthread python docs/benchmarks/engine-pocl-2026-11-30/pocl_launch.py`. Prints the
microseconds of a launch of a one-work-item kernel that does nothing, queued and finished
through the OpenCL C API from the thread that times it (ctypes, the GIL released), and the
seconds of three long launches on one device, then on each device at once, each from its own
thread."""
import ctypes
import os
import threading
import time

import numpy as np
import pyopencl as cl

SOURCE = """__kernel void spin(__global ulong* out, ulong n) {
    ulong x = get_global_id(0) + 1;
    for (ulong i = 0; i < n; i++) x = x * 6364136223846793005UL + (x >> 7);
    out[get_global_id(0)] = x;
}"""

devices = cl.get_platforms()[0].get_devices()
library = next(line.split()[-1] for line in open(f"/proc/{os.getpid()}/maps") if "libOpenCL" in line)
ocl = ctypes.CDLL(library)
ocl.clEnqueueNDRangeKernel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint,
                                       ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                       ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint,
                                       ctypes.c_void_p, ctypes.c_void_p]
ocl.clFinish.argtypes = [ctypes.c_void_p]
kept = []


def kernel(device, n):
    context = cl.Context([device])
    program = cl.Program(context, SOURCE).build()
    queue = cl.CommandQueue(context)
    out = cl.Buffer(context, cl.mem_flags.READ_WRITE, 8)
    spin = cl.Kernel(program, "spin")
    spin.set_args(out, np.uint64(n))
    kept.append((context, program, queue, out, spin))
    return queue, spin


def run(queue, spin, times):
    one = (ctypes.c_size_t * 1)(1)
    for _ in range(times):
        assert ocl.clEnqueueNDRangeKernel(queue.int_ptr, spin.int_ptr, 1, None, one, one, 0,
                                          None, None) == 0
        ocl.clFinish(queue.int_ptr)


print(os.environ.get("POCL_DEVICES"), [d.name for d in devices])
tiny = kernel(devices[0], 1)
run(*tiny, 100)
start = time.perf_counter()
run(*tiny, 5000)
print(f"a launch of nothing, queued and finished: {(time.perf_counter() - start) / 5000 * 1e6:.1f} us")
long = [kernel(d, 100_000_000) for d in devices]
run(*long[0], 1)
start = time.perf_counter()
run(*long[0], 3)
alone = time.perf_counter() - start
threads = [threading.Thread(target=run, args=(*k, 3)) for k in long]
start = time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"three long launches on one device: {alone:.3f} s; three on each of the {len(long)} "
      f"device(s) at once, each from its own thread: {time.perf_counter() - start:.3f} s")

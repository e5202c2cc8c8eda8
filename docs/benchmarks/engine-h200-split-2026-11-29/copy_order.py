"""Does a read on queue B of a buffer stall behind a read of it queued on queue A after A's
running kernel?"""
import time, numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if "NVIDIA" in p.name][0]
ctx = cl.Context([plat.get_devices()[0]])
q = cl.CommandQueue(ctx); q2 = cl.CommandQueue(ctx)
src = r"""
__kernel void tick(__global volatile uint *out, const uint n) {
    if (get_global_id(0) != 0) return;
    ulong t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (uint i = 1; i <= n; i++) {
        ulong t;
        do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < (ulong)i * 50000000UL);
        out[0] = i;
        asm volatile("membar.sys;" ::: "memory");
    }
}"""
prg = cl.Program(ctx, src).build()
tick = cl.Kernel(prg, "tick")
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
other = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
for mode in ("final read of buf queued after the kernel", "final read of another buffer after the kernel", "nothing after the kernel"):
    cl.enqueue_fill_buffer(q, buf, np.uint32(0), 0, 4096).wait()
    final = np.zeros(1024, np.uint32); host = np.zeros(1024, np.uint32)
    tick.set_args(buf, np.uint32(10))
    k = cl.enqueue_nd_range_kernel(q2, tick, (1,), (1,))
    if mode.startswith("final read of buf"):
        last = cl.enqueue_copy(q2, final, buf, is_blocking=False)
    elif mode.startswith("final read of another"):
        last = cl.enqueue_copy(q2, final, other, is_blocking=False)
    else:
        last = k
    q2.flush()
    t0 = time.perf_counter(); seen = []
    while last.command_execution_status != cl.command_execution_status.COMPLETE:
        ev = cl.enqueue_copy(q, host, buf, is_blocking=False)
        q.flush()
        flag = []
        ev.set_callback(cl.command_execution_status.COMPLETE, lambda s: flag.append(time.perf_counter()))
        while not flag:
            time.sleep(0.0005)
            if time.perf_counter() - t0 > 5: break
        v = int(host[0])
        if not seen or seen[-1][1] != v:
            seen.append((round(time.perf_counter() - t0, 3), v))
        time.sleep(0.01)
    last.wait()
    print(mode, "->", seen[:12], flush=True)

"""Nsight Compute on the bulk perft kernel (docs/opencl.md, "Perft"): ncu does not profile
NVIDIA's OpenCL, so the kernel's PTX, as NVIDIA's OpenCL compiler writes it, is launched through
CUDA (CuPy) on the frontier the OpenCL backend expanded.

    python -m chessaccel.lab.perft_profile prepare DIR [NAME=SWITCHES ...]
        builds perft.cl on the NVIDIA OpenCL platform for each variant (SWITCHES as in
        perft_ab; "base" is the GPU default) with the reduction's scratch made a static
        local array of PROFILE_LOCAL words (CUDA cannot pass OpenCL's __local argument), writes
        DIR/NAME.ptx, and the start position's perft 7 frontier at two plies (perft 5's
        positions) as DIR/start5.npy with its leaf count in DIR/start5.txt (the root from the
        file $PERFT_ROOTS, default perft_roots.npz, as perft_ab --write-roots writes it, where it
        exists, else packed here; PROFILE_PLATFORM names another platform than nvidia, e.g. pocl
        to try the tool on a CPU)
    python -m chessaccel.lab.perft_profile launch PTX POSITIONS.npy EXPECTED
        launches perft_bulk_2 of PTX, one work-group of PROFILE_LOCAL per PROFILE_LOCAL
        positions (CuPy), twice, and prints each launch's count, check and time

``python -m chessaccel.lab.device perft-profile`` runs both steps and Nsight Compute.
"""
import json, os, re, sys, time
import numpy as np

PROFILE_LOCAL = 256


def _start_position():
    """The start position, packed: from the roots file PERFT_ROOTS names (default
    perft_roots.npz, as ``python -m chessaccel.lab.perft_ab pocl --write-roots`` writes it, for a
    GPU machine without python-chess) when it exists, else packed here."""
    import os
    path = os.environ.get("PERFT_ROOTS", "perft_roots.npz")
    if os.path.exists(path):
        z = np.load(path)
        return z["positions"][list(z["names"]).index("startpos")][None, :]
    from chessaccel.host.opencl.layout import pack_positions
    from chessaccel.model.position import parse_position
    return pack_positions([parse_position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")[0]])


def prepare(folder, specs):
    import os
    from chessaccel.host.opencl import OpenCLBackend
    from chessaccel.host.opencl.device import perft_source, default_perft_switch
    os.makedirs(folder, exist_ok=True)
    b = OpenCLBackend(os.environ.get("PROFILE_PLATFORM", "nvidia"))
    d = b.device
    cl = d.cl
    src = perft_source()
    pattern = r"__local ulong \*scratch, BULK_LINES_ARG\)(\s*\\\n)\{"
    assert re.search(pattern, src)
    src = re.sub(pattern, r"BULK_LINES_ARG)\1{ __local ulong scratch[%d];" % PROFILE_LOCAL, src)
    variants = {"base": {}}
    for spec in specs:
        name, _, kv = spec.partition("=")
        variants[name] = {k: int(v) for k, v in (x.split(":") for x in kv.split(",") if x)}
    for name, ov in variants.items():
        switches = {k: default_perft_switch(k, True)
                    for k in ("PERFT_LOCAL_LINES", "PERFT_SORT_LANES", "PERFT_COUNT", "PERFT_LEAF")}
        switches.update(ov)
        switches.setdefault("PERFT_MAGIC", default_perft_switch("PERFT_MAGIC", True,
                                                               switches["PERFT_LOCAL_LINES"]))
        options = ["-cl-std=CL1.2"] + (["-cl-nv-verbose"] if d.is_gpu else [])
        options += [f"-D {k}={v}" for k, v in switches.items() if v and k != "PERFT_MAXRREG"]
        prg = cl.Program(d.context, src).build(options=options, devices=[d.device])
        log = prg.get_build_info(d.device, cl.program_build_info.LOG) or ""
        ptx = prg.get_info(cl.program_info.BINARIES)[0]
        open(f"{folder}/{name}.ptx", "wb").write(ptx)
        with open(f"{folder}/{name}.switches.json", "w") as f:    # launch's tables follow them
            json.dump(switches, f)
        regs = re.findall(r"Compiling entry function '(perft_bulk_\d)'.*?Used (\d+) registers", log, re.S)
        print(name, switches, "registers:", regs, flush=True)
    start = _start_position()
    captured = {}
    leaves = b._leaves

    def grab(buf, n, remaining, mode):
        captured["positions"] = b._read(buf, np.uint64, n * 5).reshape(n, 5)
        captured["remaining"] = remaining
        return leaves(buf, n, remaining, mode)
    b._leaves = grab
    total = b.perft_positions(start, 7, "bulk")
    assert total == 3_195_901_860 and captured["remaining"] == 2, (total, captured.get("remaining"))
    np.save(f"{folder}/start5.npy", captured["positions"])
    open(f"{folder}/start5.txt", "w").write(str(total))
    print("frontier", captured["positions"].shape, "leaves", total, flush=True)


def _load_ptx(cp, text):
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    return cp.RawModule(path=f.name).get_function("perft_bulk_2")


def launch(ptx, positions_file, expected):
    import cupy as cp
    from chessaccel.host.opencl.magics import lines_with_magic_tables
    # NVIDIA's OpenCL reads the global offset and the group offset from %envreg registers, which
    # a CUDA launch does not set (the run of 2026-11-25 16:01 read 0 leaves back): they are 0 here
    text = re.sub(r"%envreg\d+", "0", open(ptx).read().replace("\x00", ""))
    f = _load_ptx(cp, text)
    pos = cp.asarray(np.ascontiguousarray(np.load(positions_file)))
    n = pos.shape[0]
    # PERFT_MAGIC's variants read past the lines; 2 reads the tables of fixed size
    switches_file = re.sub(r"\.ptx$", "", ptx) + ".switches.json"
    magic = json.load(open(switches_file)).get("PERFT_MAGIC", 1) if os.path.exists(switches_file) else 1
    lines = cp.asarray(lines_with_magic_tables(magic == 2))
    groups = -(-n // PROFILE_LOCAL)
    partial = cp.zeros(groups, dtype=cp.uint64)
    for rep in range(2):
        partial.fill(0)
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        f((groups,), (PROFILE_LOCAL,), (pos, np.uint32(n), partial, lines))
        cp.cuda.Device().synchronize()
        s = time.perf_counter() - t0
        total = int(partial.sum())
        print(f"{ptx}: launch {rep}: {total} {'ok' if total == expected else 'WRONG'} "
              f"{s * 1e3:.2f} ms {total / s / 1e9:.1f} G leaves/s", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3:])
    else:
        launch(sys.argv[2], sys.argv[3], int(sys.argv[4]))

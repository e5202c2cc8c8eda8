#!/bin/bash
# The H100 run of tools/opencl_perft_ab.py (docs/opencl.md, "Perft"): run on the device machine
# from the root of a checkout that holds a copy of this tree in .gpuwork/ (with perft_roots.npz
# from `opencl_perft_ab.py pocl --write-roots .gpuwork/perft_roots.npz`) and the py3.12 wheels in
# .whl/ (pyopencl, pytools, platformdirs, siphash24, typing_extensions, amaranth, jschon,
# rfc3986). Arguments: those of opencl_perft_ab.py after PLATFORM. Output: $OUT/perft_ab.log
# and $OUT/perft_ab.json.
source "$(dirname "$0")/opencl_device_setup.sh" || exit 1
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
    python3 -P tools/opencl_perft_ab.py nvidia "$@" --roots perft_roots.npz 2>&1
    nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
} | tee "$OUT/perft_ab.log"

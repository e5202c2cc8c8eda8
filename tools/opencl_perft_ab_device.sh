#!/bin/bash
# The H100 run of tools/opencl_perft_ab.py (docs/opencl.md, "Perft"): run on the device machine
# from the root of a checkout that holds a copy of this tree in .gpuwork/ (with perft_roots.npz
# from `opencl_perft_ab.py pocl --write-roots .gpuwork/perft_roots.npz`) and the py3.12 wheels in
# .whl/ (pyopencl, pytools, platformdirs, siphash24, typing_extensions, amaranth, jschon,
# rfc3986). Arguments: those of opencl_perft_ab.py after PLATFORM. Output: $OUT/perft_ab.log
# and $OUT/perft_ab.json.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/icd
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
W=$PWD/.gpuwork
# the package as pyproject's package-dir maps it: chessaccel/ with hdl, sim, host, synth inside
mkdir -p /tmp/pp
cp -r "$W/chessaccel" /tmp/pp/
for d in hdl sim host synth; do ln -sfn "$W/$d" "/tmp/pp/chessaccel/$d"; done
export PYTHONPATH=/tmp/pp:/tmp/site PYTHONUNBUFFERED=1
export CHESSACCEL_OPENCL_CACHE=/tmp/clcache
cd "$W" || exit 1
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
    python3 -P tools/opencl_perft_ab.py nvidia "$@" --roots perft_roots.npz 2>&1
    nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
} | tee "$OUT/perft_ab.log"

#!/bin/bash
# The H100 runs of tools/opencl_explore.py on 2026-11-25 03:04-03:33 (docs/opencl.md, logs in
# docs/benchmarks/opencl-h100-explore/2026-11-25-03*.log): run on the device machine from the
# root of a checkout that holds a copy of this tree in .gpuwork/ (with jobs.npz) and the py3.12
# wheels in .whl/ (pyopencl, pytools, platformdirs, ...). The kernels are chosen by the caller:
#   EXPLORE_BASE='{"SPLIT_PRIO":0}' EXPLORE_NEW='{...}' EXPLORE_KERNELS='{"NAME":{...}}' \
#       bash .gpuwork/tools/opencl_device_explore.sh CONFIG...   (CONFIG: see opencl_explore.py)
# The output goes to $OUT/explore.log and $OUT/explore.json.
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
    nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
    python3 -P tools/opencl_explore.py nvidia leaf jobs.npz "$@" 2>&1
} | tee "$OUT/explore.log"

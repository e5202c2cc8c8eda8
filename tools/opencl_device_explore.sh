#!/bin/bash
# The H100 runs of tools/opencl_explore.py on 2026-11-25 03:04-03:33 (docs/opencl.md, logs in
# docs/benchmarks/opencl-h100-explore/2026-11-25-03*.log): run on the device machine from the
# root of a checkout that holds a copy of this tree in .gpuwork/ (with jobs.npz) and the py3.12
# wheels in .whl/ (pyopencl, pytools, platformdirs, ...). The kernels are chosen by the caller:
#   EXPLORE_BASE='{"SPLIT_PRIO":0}' EXPLORE_NEW='{...}' EXPLORE_KERNELS='{"NAME":{...}}' \
#       bash .gpuwork/tools/opencl_device_explore.sh CONFIG...   (CONFIG: see opencl_explore.py)
# The output goes to $OUT/explore.log and $OUT/explore.json.
source "$(dirname "$0")/opencl_device_setup.sh" || exit 1
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
    python3 -P tools/opencl_explore.py nvidia leaf jobs.npz "$@" 2>&1
} | tee "$OUT/explore.log"

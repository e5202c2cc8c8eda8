#!/bin/bash
# The compiled search's launches with long jobs split on the device (SplitBudget) on the H200:
# fixed-depth searches of the first bench positions, split against whole, then (ENGINEBENCH=1)
# the engine through UCI at 5 s a move.
set -u
REPO=$PWD
# PoCL (.poclmin/pocl.zip) may have been unpacked into /tmp/site by an earlier call: merge
mkdir -p /tmp/site /tmp/whl && python3 -m pip install -q --no-deps --target /tmp/whl .whl/*.whl 2>&1 | tail -2
cp -rn /tmp/whl/. /tmp/site/
mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
cp /tmp/site/pyopencl/.libs/pocl.icd /tmp/icd/ 2>/dev/null || true
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src
cd /tmp
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('hostsearch ok')" || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader
if [ -n "${DIAG:-}" ]; then
  timeout ${DIAG_LIMIT:-400} python3 -P $REPO/docs/benchmarks/engine-h200-split-2026-11-29/split_diag.py ${DIAG_SPEC:-opencl:NVIDIA} ${DIAG_POS:-4} $DIAG 2>&1 | tee $OUT/split_diag.log
fi
if [ -n "${CONFIGS:-}" ]; then
  eval "timeout ${LIMIT:-500} python3 -P -m chessaccel.lab.enginebench --movetime 5000 --positions ${POS:-10} --out $OUT/enginebench-split.json $CONFIGS" \
    2>&1 | tee $OUT/enginebench.log | grep -v "^  "
fi

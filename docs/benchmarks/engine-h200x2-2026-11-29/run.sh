#!/bin/bash
# One H200 against two (opencl:NVIDIA:0 against opencl:NVIDIA:all) on a machine with two:
# fixed-depth searches of the first bench positions (engine-h200-split-2026-11-29/split_diag.py; IN_FLIGHT launches in
# flight, the engine's 16 unless set), then the engine through UCI at 5 s a move (enginebench).
# Run from the repository root with the wheels of .whl/ carried (docs/benchmarks/*/run.sh).
set -u
REPO=$PWD
mkdir -p /tmp/site && python3 -m pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src
cd /tmp
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('hostsearch ok')" || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader
if [ -n "${DIAG:-}" ]; then
  for spec in ${DIAG_SPECS:-opencl:NVIDIA:0 opencl:NVIDIA:all}; do
    echo "== $spec IN_FLIGHT=${IN_FLIGHT:-16}"
    timeout ${DIAG_LIMIT:-200} python3 -P $REPO/docs/benchmarks/engine-h200-split-2026-11-29/split_diag.py $spec ${DIAG_POS:-4} $DIAG 2>&1 | tee -a $OUT/split_diag.log
  done
fi
if [ -n "${CONFIGS:-}" ]; then
  eval "timeout ${LIMIT:-400} python3 -P -m chessaccel.lab.enginebench --movetime 5000 --positions ${POS:-10} --out $OUT/enginebench-${TAG:-2gpu}.json $CONFIGS" \
    2>&1 | tee $OUT/enginebench-${TAG:-2gpu}.log | grep -v "^  "
fi

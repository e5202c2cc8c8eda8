#!/bin/bash
# A second perftpeer run with the committed GPU defaults of ../perft-peer-h200-2026-11-30e
# (PERFT_LEAF 425401 since ac70f15; perft_gpu at cb18c41, -nott), on a fresh H200 machine, five
# runs a root, no A/B before it: does Kiwipete's 1.005x hold? Set-up as in that folder's run.sh
# (perft_gpu's checkout in the ignored folder .peer/perft_gpu and the wheels in out/whl, both
# carried with the call):
#   bash docs/benchmarks/perft-peer-h200-2026-11-30f/run.sh
set -o pipefail
export REPO=$PWD PEER=${PEER:-$PWD/.peer/perft_gpu} WHEELS=${WHEELS:-$PWD/out/whl}
mkdir -p /tmp/site /tmp/icd
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHEELS"/*.whl
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src PYTHONUNBUFFERED=1
cd /tmp
python3 -P -m chessaccel.lab.perftpeer --peer-source "$PEER" --build /tmp/pbuild \
  --backend opencl:nvidia --root startpos:7,8 --root kiwipete:6,7 \
  --suite "$REPO/tests/data/perftsuite.epd" --suite-depth 5 --runs 5 --processes --out "$OUT" \
  > "$OUT/perftpeer.log" 2>&1
echo "perftpeer exit $?"
head -n 12 "$OUT/perftpeer.log"

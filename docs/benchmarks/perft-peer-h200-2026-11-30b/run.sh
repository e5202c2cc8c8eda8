#!/bin/bash
# Our OpenCL perft beside perft_gpu on one H200 (2026-11-30, the kernels of 078d5ae: PERFT_LEAF=185,
# PERFT_COUNT=31, work-groups of 512 the GPU defaults; perft_gpu at cb18c41), run on the GPU
# machine from a checkout with perft_gpu's checkout (git clone https://github.com/ankan-ban/perft_gpu_2026,
# here an ignored folder .peer/perft_gpu carried with the call) and the wheels of
# ../shared/docs/gpu-machine.md in an ignored folder .whln (carried), as one command:
#   bash docs/benchmarks/perft-peer-h200-2026-11-30b/run.sh
# on a fresh machine (our program built and cached by perftpeer's first open, ~25 s).
# (perftpeer.json's ours_commit reads 22d27f4, what git said in the device's copy of the
# checkout; the working tree sent was 078d5ae's with this folder's run.sh.)
set -o pipefail
export REPO=$PWD PEER=${PEER:-$PWD/.peer/perft_gpu}
mkdir -p /tmp/site /tmp/icd
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$REPO"/.whln/*.whl
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src PYTHONUNBUFFERED=1
cd /tmp
python3 -P -m chessaccel.lab.perftpeer --peer-source "$PEER" --build /tmp/pbuild \
  --backend opencl:nvidia --root startpos:7,8 --root kiwipete:6,7 \
  --suite "$REPO/tests/data/perftsuite.epd" --suite-depth 5 --runs 3 --processes --out "$OUT" \
  > "$OUT/perftpeer.log" 2>&1
echo "perftpeer exit $?"
/tmp/pbuild/perft_gpu-* "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 8 -nott \
  > "$OUT/perft_gpu-startpos-8.txt"
# The A/B runs before it (ab/perft_ab-N.log, .json; "base" the GPU default of the time: N = 1-3
# PERFT_LEAF=57, PERFT_COUNT=15, work-groups of 256; N = 4 the new default), each in one process,
# three rounds, with the set-up above and then:
#   python3 -P -m chessaccel.lab.device --platform nvidia --out "$OUT" perft-ab VARIANTS... --rounds 3
# with VARIANTS as each JSON's argv records, e.g. for N = 4:
#   old=PERFT_LEAF:57,PERFT_COUNT:15@256 b256=@256 K=PERFT_MAGIC:2 K256=PERFT_MAGIC:2@256
# (PERFT_MAGIC=2, the rooks from the kindergarten tables, and PERFT_MAGIC=2 of run 2, the magic
# entries loaded as two 16-byte words, were kernels of the working tree between 99a2607 and
# 078d5ae that lost and were deleted: docs/opencl.md, "Beside perft_gpu").

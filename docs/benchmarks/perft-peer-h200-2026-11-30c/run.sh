#!/bin/bash
# Our OpenCL perft beside perft_gpu on one H200 (2026-11-30, later: the GPU defaults PERFT_COUNT=63,
# PERFT_MAGIC=2, PERFT_LEAF=1465, PERFT_MAXRREG=40, work-groups of 512; perft_gpu at cb18c41,
# source digest 9a24f2e8311e5f2b as in ../perft-peer-h200-2026-11-30b), run on the GPU machine from
# a checkout with perft_gpu's checkout (git clone https://github.com/ankan-ban/perft_gpu_2026, here
# an ignored folder .peer/perft_gpu carried with the call) and the wheels of
# ../shared/docs/gpu-machine.md in an ignored folder ($WHEELS, default out/whl, carried), as one
# command:
#   bash docs/benchmarks/perft-peer-h200-2026-11-30c/run.sh
# on a fresh machine (our program built and cached by the A/B run before it, as below; perftpeer's
# own open then takes the cached binary: 0.7 s).
# (perftpeer.json's ours_commit reads 45a0d5a, what git said in the device's copy of the checkout.
# The working tree sent had PERFT_LEAF_GPU = 953 in device.py, set to 1977 in that copy once the A/B
# of run 4 below had measured 1977 the faster. In that tree PERFT_LEAF 256 made the leaf's children
# without the victim's type by clearing the to-square and toggling the mover's planes, and 512
# (with 256) wrote each plane in one pass instead; 512 won (run 3) and was folded into 256
# afterwards, the same code: this commit's 1465 is what the runs built as 1977, its 441 what they
# built as 953, and the build perftpeer measured is this commit's default.)
set -o pipefail
export REPO=$PWD PEER=${PEER:-$PWD/.peer/perft_gpu} WHEELS=${WHEELS:-$PWD/out/whl}
mkdir -p /tmp/site /tmp/icd
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHEELS"/*.whl
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
# The A/B runs (ab/perft_ab-N.log, .json), each in one process on a fresh machine, three rounds,
# with the set-up above and then:
#   python3 -P -m chessaccel.lab.device --platform nvidia --out "$OUT" perft-ab VARIANTS... --rounds 3
# with VARIANTS as each JSON's argv records. "base" is the GPU default of the time: runs 1-3 the
# defaults of 078d5ae (PERFT_COUNT=31, PERFT_MAGIC=1, PERFT_LEAF=185, PERFT_MAXRREG=64), run 4
# PERFT_COUNT=63, PERFT_MAGIC=2, PERFT_LEAF=953 (today's 441), PERFT_MAXRREG=40; the PERFT_LEAF
# values below are those of the tree sent (256 without 512 is no build any more):
#   1: Z=PERFT_COUNT:63 E=PERFT_COUNT:95 M=PERFT_MAGIC:2 ZEM=PERFT_COUNT:127,PERFT_MAGIC:2
#      ZEM40=PERFT_COUNT:127,PERFT_MAGIC:2,PERFT_MAXRREG:40
#   2: ZM=PERFT_COUNT:63,PERFT_MAGIC:2 ZM40=...,PERFT_MAXRREG:40 ZMC=...,PERFT_LEAF:441
#      ZMC40=...,PERFT_LEAF:441,PERFT_MAXRREG:40 ZMC48=...,PERFT_LEAF:441,PERFT_MAXRREG:48@256
#   3: C40=PERFT_COUNT:63,PERFT_MAGIC:2,PERFT_LEAF:441,PERFT_MAXRREG:40 P40=(PERFT_LEAF:953)
#      R40=(PERFT_LEAF:445) PR40=(PERFT_LEAF:957) P64=PERFT_COUNT:63,PERFT_MAGIC:2,PERFT_LEAF:953
#   4: S=PERFT_LEAF:1977
# (PERFT_COUNT 64, E: count_evasions' squares between the checker and the king from the between
# table, was a kernel of the working tree that measured even and was deleted: docs/opencl.md,
# "Beside perft_gpu".)

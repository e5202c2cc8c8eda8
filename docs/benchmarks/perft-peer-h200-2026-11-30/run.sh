#!/bin/bash
# Our OpenCL perft beside perft_gpu on one H200 (2026-11-30 05:19-05:22 UTC, the kernels of 7a2ba84,
# a comment rewrapped since: PERFT_LEAF=57 with PERFT_MAXRREG=64 the GPU default; perft_gpu at
# cb18c41), run
# on the GPU machine from a checkout set up as ../shared/docs/gpu-machine.md says (the wheels
# installed into /tmp/site, NVIDIA's OpenCL driver registered through OCL_ICD_VENDORS,
# PYTHONPATH=/tmp/site:$REPO/src, run from /tmp) and perft_gpu's checkout
# (git clone https://github.com/ankan-ban/perft_gpu_2026) in $PEER. The same command ran right
# after the A/B of ab/perft_ab-5.log (which had built and cached our program: "opened in 0.7 s").
python3 -P -m chessaccel.lab.perftpeer --peer-source "$PEER" --build /tmp/pbuild \
  --backend opencl:nvidia --root startpos:7,8 --root kiwipete:6,7 \
  --suite "$REPO/tests/data/perftsuite.epd" --suite-depth 5 --runs 3 --processes --out "$OUT" \
  > "$OUT/perftpeer.log" 2>&1
/tmp/pbuild/perft_gpu-* "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 8 -nott \
  > "$OUT/perft_gpu-startpos-8.txt"
# The A/B runs (ab/perft_ab-N.log, .json; "base" is the GPU default of the time: N = 1 the
# default before this work (PERFT_LEAF 0, no register cap), 2 and 3 PERFT_LEAF=1, 4 PERFT_LEAF=25
# with 64 registers, 5 PERFT_LEAF=57 with 64 registers), each in one process, three rounds:
#   python3 -m chessaccel.lab.device --platform nvidia --out "$OUT" perft-ab VARIANTS... --rounds 3
# with VARIANTS as each JSON's argv records, e.g. for N = 4:
#   L0=PERFT_LEAF:0,PERFT_MAXRREG:0 L1=PERFT_LEAF:1,PERFT_MAXRREG:0 L57=PERFT_LEAF:57 \
#   L61=PERFT_LEAF:61 L59=PERFT_LEAF:59 L57r48=PERFT_LEAF:57,PERFT_MAXRREG:48
# steps/: perftpeer the same way with the defaults PERFT_LEAF=1 (after ab 2) and PERFT_LEAF=25 with
# 64 registers (after ab 4). ab/profile-2.log: perft-profile, which failed (below).

#!/bin/bash
# Our OpenCL perft beside perft_gpu on one H200 (2026-11-29, the kernels of ce1e870, perft_gpu at
# cb18c41), run on the GPU machine from a checkout set up as ../shared/docs/gpu-machine.md says
# and perft_gpu's checkout (git clone https://github.com/ankan-ban/perft_gpu_2026) in $PEER:
#   NVIDIA's OpenCL driver registered through OCL_ICD_VENDORS, the package on PYTHONPATH.
python3 -P -m chessaccel.lab.perftpeer --peer-source "$PEER" --build /tmp/pbuild \
  --backend opencl:nvidia --root startpos:7,8 --root kiwipete:6,7 \
  --suite tests/data/perftsuite.epd --suite-depth 5 --runs 3 --processes --out "$OUT/perftpeer" \
  2>&1 | tee "$OUT/perftpeer.log"
# perft_gpu's own output for the start position (tests/data/perft_gpu-startpos-8.txt):
/tmp/pbuild/perft_gpu-* "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 8 -nott \
  > "$OUT/perft_gpu-startpos-8.txt"

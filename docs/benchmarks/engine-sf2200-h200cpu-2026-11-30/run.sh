#!/bin/bash
# The engine with inline launches (3d3cc65) against Debian's stockfish 15.1 at UCI_Elo 2200,
# 10 s + 0.1 s, 100 games, on the two-GPU machine's 32 Xeon cores through PoCL: sixteen games at
# once, every engine on two of PoCL's basic devices (POCL_DEVICES="basic basic": two cores while
# it thinks; stockfish one thread). A cross-check of the 100 games on the 2-core development
# machine (the engine issue's figure), not a replacement for them.
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh); SF: the
# folder of stockfish_15.1-4_amd64.deb (`apt-get download stockfish`).
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
export POCL_DEVICES="basic basic"
nproc; lscpu | grep "Model name"
mkdir -p /tmp/sf && dpkg -x $SF/stockfish_*.deb /tmp/sf
timeout ${LIMIT:-540} python3 -P -m chessaccel.host.cli match --opponent /tmp/sf/usr/games/stockfish \
    --opponent-option UCI_LimitStrength=true --opponent-option UCI_Elo=2200 \
    --opponent-option "Move Overhead=100" --backend opencl --games 100 --tc 10+0.1 \
    --concurrency 16 --name sf2200-xeon --out $OUT/sf2200-xeon.json --pgn $OUT/sf2200-xeon.pgn \
    > $OUT/sf2200-xeon.log 2>&1
echo "exit $?" >> $OUT/sf2200-xeon.log
tail -n 6 $OUT/sf2200-xeon.log

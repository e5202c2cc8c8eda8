#!/bin/bash
# HardwarePlies 2 and 3 against Debian's stockfish 15.1 at UCI_Elo 2200 (UCI_LimitStrength,
# Move Overhead 100), 10 s + 0.1 s, both matches at once on the GPU machine's 16 Xeon cores
# through PoCL, so that both meet the same machine and the same minutes: each match pinned to
# half of the cores with a quarter of them as games at once, every engine on two of PoCL's basic
# devices (inline launches), the engine's defaults otherwise.
# Why: in the middlegame of the 2-core record (sf2200-inline) the engine moved after a median
# 0.2 s at depth 8; its 63 blunders of the Xeon record searched again cold for 2 s keep 21 (0.25 s:
# 49), and at 0.2 s a move HardwarePlies 2 reaches 2.3 plies more than 3 on 150 middlegame
# positions of those games (docs/engine.md, "Depth in the middlegame").
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh); SF: the
# folder of stockfish_15.1-4_amd64.deb. The matches are kept in /tmp/state between calls to a
# machine still held and resumed from there; LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
export POCL_DEVICES="basic basic"
nproc; lscpu | grep "Model name"
[ -x /tmp/sf/usr/games/stockfish ] || { mkdir -p /tmp/sf && dpkg -x $SF/stockfish_*.deb /tmp/sf; }
mkdir -p /tmp/state
half=$(( $(nproc) / 2 ))
play() {   # NAME CPUS ARGS...
  local name=$1 cpus=$2 resume=""; shift 2
  [ -f /tmp/state/$name.json ] && resume=--resume
  timeout ${LIMIT:-540} taskset -c $cpus python3 -P -m chessaccel.host.cli match \
      --opponent /tmp/sf/usr/games/stockfish --opponent-option UCI_LimitStrength=true \
      --opponent-option UCI_Elo=2200 --opponent-option "Move Overhead=100" \
      --backend opencl --concurrency $(( half / 2 )) --games 100 --tc 10+0.1 \
      --name $name --out /tmp/state/$name.json --pgn /tmp/state/$name.pgn $resume "$@" \
      >> /tmp/state/$name.log 2>&1
  echo "exit $?" >> /tmp/state/$name.log
}
play sf2200-hp3 0-$(( half - 1 )) --hardware-plies 3 &
play sf2200-hp2 $half-$(( 2 * half - 1 )) --hardware-plies 2 &
wait
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

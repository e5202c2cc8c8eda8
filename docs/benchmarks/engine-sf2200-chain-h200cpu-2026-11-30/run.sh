#!/bin/bash
# HardwarePlies 1 and 2, with chained inline launches (JOB_CHAIN), against Debian's stockfish
# 15.1 at UCI_Elo 2200 (UCI_LimitStrength, Move Overhead 100), 10 s + 0.1 s, both matches at
# once on the GPU machine's 16 Xeon cores through PoCL, so that both meet the same machine and
# the same minutes: each match pinned to half of the cores with a quarter of them as games at
# once, every engine on two of PoCL's basic devices (inline launches), the engine's defaults
# otherwise.
# Why: a frontier parent's jobs now go out in one inline launch that ends at the first job the
# search must see, which makes small jobs cheaper; with one-at-a-time launches 1 and 2 were
# alike at 0.2 s a move (docs/engine.md, "Depth in the middlegame").
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
play sf2200-chain-hp2 0-$(( half - 1 )) --hardware-plies 2 &
play sf2200-chain-hp1 $half-$(( 2 * half - 1 )) --hardware-plies 1 &
wait
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

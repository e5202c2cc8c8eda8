#!/bin/bash
# Two self-play SPRTs of HardwarePlies at once on the GPU machine's CPU cores through PoCL
# (2026-11-30, afternoon), each pinned to half of the cores with a quarter of them as games at
# once, every engine's PoCL on 2 threads (as in ../engine-sprt-h200cpu-2026-11-30/), 10 s + 0.1 s,
# SPRT(0, 50), the engine's defaults otherwise:
#   hp2-vs-hp3: HardwarePlies 2 against 3, resumed from the 86 games of
#     ../engine-pocl-2026-11-30/hp2-vs-hp3.json (played on the 2-core development machine with
#     `chessaccel match --backend opencl --hardware-plies 2 --opponent-engine-option
#     HardwarePlies=3 --sprt 0,50 --games 200 --tc 10+0.1`; the same search code since);
#   hp1-vs-hp2: HardwarePlies 1 against 2 (a fresh SPRT).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh).
# Resumes from $STATE/NAME.json when present. LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
nproc; lscpu | grep "Model name"
half=$(( $(nproc) / 2 ))
play() {   # NAME CPUS START ARGS...
  local name=$1 cpus=$2 start=$3 resume=""; shift 3
  if [ -f ${STATE:-/nonexistent}/$name.json ]; then start=$STATE/$name.json; fi
  if [ -n "$start" ]; then
    cp $start $OUT/$name.json && cp ${start%.json}.pgn $OUT/$name.pgn && resume=--resume
  fi
  timeout ${LIMIT:-540} taskset -c $cpus python3 -P -m chessaccel.host.cli match \
      --backend opencl --concurrency $(( half / 2 )) --sprt 0,50 --games 400 --tc 10+0.1 \
      --name $name --out $OUT/$name.json $resume "$@" > $OUT/$name.log 2>&1
  echo "exit $?" >> $OUT/$name.log
}
play hp2-vs-hp3 0-$(( half - 1 )) $REPO/docs/benchmarks/engine-pocl-2026-11-30/hp2-vs-hp3.json \
    --hardware-plies 2 --opponent-engine-option HardwarePlies=3 &
play hp1-vs-hp2 $half-$(( 2 * half - 1 )) "" \
    --hardware-plies 1 --opponent-engine-option HardwarePlies=2 &
wait
tail -n 4 $OUT/*.log

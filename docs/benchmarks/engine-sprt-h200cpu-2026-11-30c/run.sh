#!/bin/bash
# Two self-play SPRTs at once on the GPU machine's CPU cores through PoCL (2026-11-30, evening),
# each pinned to half of the cores with a quarter of them as games at once, every engine's PoCL
# on 2 threads (as in ../engine-sprt-h200cpu-2026-11-30b/), 10 s + 0.1 s, SPRT(0, 50), the
# engine's defaults otherwise:
#   jrp2-vs-1: JobReductionPlies 2 against 1 (late quiet moves' jobs up to two plies shallower);
#   nulleval: NullMoveEval on against off (the null move a ply shallower per 200 cp above beta).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh).
# Resumes from $STATE/NAME.json when present. LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
nproc; lscpu | grep "Model name"
half=$(( $(nproc) / 2 ))
play() {   # NAME CPUS ARGS...
  local name=$1 cpus=$2 resume=""; shift 2
  if [ -f ${STATE:-/nonexistent}/$name.json ]; then
    cp $STATE/$name.json $OUT/$name.json && cp $STATE/$name.pgn $OUT/$name.pgn && resume=--resume
  fi
  timeout ${LIMIT:-540} taskset -c $cpus python3 -P -m chessaccel.host.cli match \
      --backend opencl --concurrency $(( half / 2 )) --sprt 0,50 --games 600 --tc 10+0.1 \
      --name $name --out $OUT/$name.json --pgn $OUT/$name.pgn $resume "$@" > $OUT/$name.log 2>&1
  echo "exit $?" >> $OUT/$name.log
}
play jrp2-vs-1 0-$(( half - 1 )) \
    --engine-option JobReductionPlies=2 --opponent-engine-option JobReductionPlies=1 &
play nulleval $half-$(( 2 * half - 1 )) \
    --engine-option NullMoveEval=true --opponent-engine-option NullMoveEval=false &
wait
tail -n 4 $OUT/*.log

#!/bin/bash
# Two self-play SPRTs at once on the GPU machine's CPU cores through PoCL (2026-11-30), each
# pinned to half of the cores with a quarter of them as games at once, every engine's PoCL on
# 2 threads (the threads a core of ../engine-sprt-h200cpu-2026-11-29/ and ../eval-v4-2026-11-30/),
# 10 s + 0.1 s, the engine's defaults otherwise:
#   counter: CounterMoves on against off (a fresh SPRT(0, 50));
#   v4-vs-v2: weights version 4 (the package's) against version 2 (v2.json beside this script,
#     evalweights.json of d2f70a4), SPRT(0, 50), resumed from the 101 games of
#     ../eval-v4-2026-11-30/v4-vs-v2.json (played on the 2-core development machine against the
#     build of d2f70a4 itself; here the opponent is this tree with v2.json as its weights, the
#     same search: nothing but the weights and docs changed between d2f70a4 and 22d27f4).
# The wheels and pocl.tar.xz (a first call on the warm machine: `REPO=$PWD WHL=$PWD/.whlm .
# docs/benchmarks/pocl-on-gpu-machine.sh`) are more than one call may carry with the tree.
# Resumes from $STATE/NAME.json when present. LIMIT: seconds for the matches in this call.
# ONLY=counter: that match alone, on all the cores (half of them as games at once).
set -u
REPO=$PWD
HERE=$REPO/docs/benchmarks/engine-sprt-h200cpu-2026-11-30
rm -rf /tmp/v2 && mkdir -p /tmp/v2 && cp -r $REPO/src /tmp/v2/ && cp $HERE/v2.json /tmp/v2/src/chessaccel/contract/evalweights.json
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
nproc; lscpu | grep "Model name"
PYTHONPATH=/tmp/site:/tmp/v2/src python3 -c "from chessaccel.contract.evalweights import WEIGHTS; from chessaccel.host.engine.hostsearch import library; library(); print('opponent weights version', WEIGHTS['version'])"
half=$(( $(nproc) / 2 ))
[ "${ONLY:-}" = counter ] && half=$(nproc)
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
play counter 0-$(( half - 1 )) "" --engine-option CounterMoves=true \
    --opponent-engine-option CounterMoves=false &
[ "${ONLY:-}" = counter ] || play v4-vs-v2 $half-$(( 2 * half - 1 )) $REPO/docs/benchmarks/eval-v4-2026-11-30/v4-vs-v2.json \
    --opponent "env PYTHONPATH=/tmp/site:/tmp/v2/src python3 -P -m chessaccel.host.cli uci" \
    --opponent-option Backend=opencl &
wait
tail -n 4 $OUT/*.log

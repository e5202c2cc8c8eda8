#!/bin/bash
# Two self-play SPRTs at once on the GPU machine's CPU cores through PoCL (2026-11-30, late),
# each pinned to half of the cores with a quarter of them as games at once, every engine on two
# of PoCL's basic devices (inline launches, the engine of 9422126), 10 s + 0.1 s, SPRT(0, 50),
# the engine's defaults otherwise:
#   hp2-vs-hp3: HardwarePlies 2 against 3 (with inline launches a job costs the host ~5 us, so
#     one more host ply, where the selective steps act, may now pay: 10.6 against 9.2 plies at
#     0.3 s a move on the 10 bench positions);
#   hp1-vs-hp3: HardwarePlies 1 against 3 (10.8 plies there).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh).
# Resumes from $STATE/NAME.json when present. LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
export POCL_DEVICES="basic basic"
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
play hp2-vs-hp3 0-$(( half - 1 )) \
    --hardware-plies 2 --opponent-engine-option HardwarePlies=3 &
play hp1-vs-hp3 $half-$(( 2 * half - 1 )) \
    --hardware-plies 1 --opponent-engine-option HardwarePlies=3 &
wait
tail -n 4 $OUT/*.log

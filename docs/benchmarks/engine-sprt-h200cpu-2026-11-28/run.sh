#!/bin/bash
# Self-play matches on the GPU machine's 16 CPU cores through PoCL, each match pinned to its own
# cores (taskset) and every engine's PoCL to 2 threads, so each game is played as on the 2-core
# development machine. EXP1..EXP4: "NAME|CPUS|CONCURRENCY|match arguments".
set -u
REPO=$PWD
mkdir -p /tmp/site /tmp/whl && python3 -m pip install -q --no-deps --target /tmp/whl .whl/*.whl 2>&1 | tail -2
cp -rn /tmp/whl/. /tmp/site/
ls /tmp/site/pocl_binary_distribution* -d >/dev/null || { echo "PoCL not installed: run the .pocl call first"; exit 1; }
mkdir -p /tmp/icd && cp /tmp/site/pyopencl/.libs/pocl.icd /tmp/icd/ 2>/dev/null || true
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src POCL_CPU_MAX_CU_COUNT=2
[ -d .sf ] && { dpkg -x .sf/stockfish_*.deb /tmp/sf || true; }
cd /tmp
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('hostsearch ok')" || exit 1
python3 -c "import pyopencl as cl; print([p.name for p in cl.get_platforms()])"
nproc; lscpu | grep "Model name"
pids=()
for var in EXP1 EXP2 EXP3 EXP4; do
  spec="${!var:-}"; [ -z "$spec" ] && continue
  IFS='|' read -r name cpus conc margs <<< "$spec"
  ( timeout ${LIMIT:-540} taskset -c $cpus python3 -P -m chessaccel.host.cli match --backend opencl \
      --concurrency $conc --tc 10+0.1 --name $name --out $OUT/$name.json $margs \
      > $OUT/$name.log 2>&1; echo "$name exit $?" >> $OUT/$name.log ) &
  pids+=($!)
done
wait "${pids[@]}"
for f in $OUT/*.log; do echo "== $f"; tail -4 $f; done

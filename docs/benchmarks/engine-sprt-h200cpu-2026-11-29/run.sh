#!/bin/bash
# Self-play SPRT on the GPU machine's 16 CPU cores through PoCL, every engine's PoCL on 2 threads.
# NAME, CONC, LIMIT, MARGS; resumes from .whl/state/$NAME.json when present.
set -u
REPO=$PWD
mkdir -p /tmp/site && python3 -m pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
[ -d /tmp/site/pocl_binary_distribution ] || tar xJf .whl/pocl.tar.xz -C /tmp/site
mkdir -p /tmp/icd && cp /tmp/site/pyopencl/.libs/pocl.icd /tmp/icd/ 2>/dev/null || ls /tmp/site/pyopencl/.libs/
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src POCL_CPU_MAX_CU_COUNT=2
cd /tmp
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('hostsearch ok')" || exit 1
python3 -c "import pyopencl as cl; print([p.name for p in cl.get_platforms()])"
nproc; lscpu | grep "Model name"
resume=""
if [ -f $REPO/.whl/state/$NAME.json ]; then
  cp $REPO/.whl/state/$NAME.json $OUT/; cp $REPO/.whl/state/$NAME.pgn $OUT/ 2>/dev/null; resume=--resume
fi
timeout ${LIMIT:-540} python3 -P -m chessaccel.host.cli match --backend opencl \
    --concurrency ${CONC:-8} --tc 10+0.1 --name $NAME --out $OUT/$NAME.json $resume $MARGS \
    > $OUT/$NAME.log 2>&1
echo "exit $?" >> $OUT/$NAME.log
tail -5 $OUT/$NAME.log

#!/bin/bash
# Self-play SPRT on the GPU machine's 16 CPU cores through PoCL, every engine's PoCL on 2 threads.
# NAME, CONC, LIMIT, MARGS; resumes from .whl/state/$NAME.json when present.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
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

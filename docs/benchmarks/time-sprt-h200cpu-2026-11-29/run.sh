#!/bin/bash
# Self-play SPRT of the time plan on the GPU machine's 16 CPU cores through PoCL: this tree's
# engine against the tree in .whl/old/src (the commit before the change: `mkdir -p .whl/old &&
# git archive 1bb7da6 src | tar x -C .whl/old`),
# every engine's PoCL on 2 threads, CONC games at once, 10 s + 0.1 s. Resumes from
# .whl/state/$NAME.json when present (copy the record back there between calls).
# NAME, CONC, LIMIT, MARGS. Run from the repository root with .whl/ carried (its wheels and
# pocl.tar.xz: docs/benchmarks/pocl-on-gpu-machine.sh).
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
PYTHONPATH=/tmp/site:$REPO/.whl/old/src python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('old hostsearch ok')" || exit 1
nproc; lscpu | grep "Model name"
resume=""
if [ -f $REPO/.whl/state/$NAME.json ]; then
  cp $REPO/.whl/state/$NAME.json $OUT/; cp $REPO/.whl/state/$NAME.pgn $OUT/ 2>/dev/null; resume=--resume
fi
timeout ${LIMIT:-540} python3 -P -m chessaccel.host.cli match --backend opencl \
    --opponent "env PYTHONPATH=/tmp/site:$REPO/.whl/old/src python3 -P -m chessaccel.host.cli uci" \
    --opponent-option Backend=opencl \
    --concurrency ${CONC:-8} --tc 10+0.1 --name $NAME --out $OUT/$NAME.json $resume ${MARGS:-} \
    > $OUT/$NAME.log 2>&1
echo "exit $?" >> $OUT/$NAME.log
tail -5 $OUT/$NAME.log

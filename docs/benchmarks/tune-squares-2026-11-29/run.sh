#!/bin/bash
# Self-play SPRT of a weights file with its own material + piece-square tables (`chessaccel tune
# fit --squares`) on the GPU machine's 16 CPU cores through PoCL: this tree's engine (the
# candidate copied over src/chessaccel/contract/evalweights.json) against the tree in
# .whl/old/src (the commit before: `rm -rf .whl/old && mkdir -p .whl/old && git archive HEAD src
# | tar x -C .whl/old`), every engine's PoCL on 2 threads, CONC games at once, 10 s + 0.1 s,
# both sides on the engine's defaults (Evaluation auto: terms on OpenCL). Resumes from
# .whl/state/$NAME.json when present (copy the record back there between calls).
# NAME, CONC, LIMIT, MARGS; NEW: the candidate's tree instead of src (a copy under .whl/, so that
# the checkout can change between calls). Run from the repository root with .whl/ carried (its wheels and
# pocl.tar.xz: docs/benchmarks/pocl-on-gpu-machine.sh).
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
export PYTHONPATH=/tmp/site:$REPO/${NEW:-src}
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('new hostsearch ok')" || exit 1
PYTHONPATH=/tmp/site:$REPO/.whl/old/src python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('old hostsearch ok')" || exit 1
python3 -c "import json; from importlib import resources; w = json.loads(resources.files('chessaccel.contract').joinpath('evalweights.json').read_text()); print('weights version', w['version'], 'with squares' if 'squares' in w else 'without squares')"
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

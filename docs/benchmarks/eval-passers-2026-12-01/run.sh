#!/bin/bash
# Self-play of weights version 6 (the tree of 19158cc: the passed pawns' king distances and the
# knight and bishop outposts, docs/engine.md "Version 6, tried and withdrawn") against version 5
# (the tree of 0f72781) on the GPU machine's 16 Xeon cores through PoCL, eight games at once,
# every engine on two of PoCL's basic devices, 10 s + 0.1 s, the engine's defaults otherwise.
# The trees: `for c in 19158cc:v6 0f72781:old; do rm -rf out/${c#*:} && mkdir -p out/${c#*:} &&
# git archive ${c%:*} src | tar x -C out/${c#*:}; done`. NAME (default passers) and MARGS
# (default --sprt 0,50 --games 600): the records passers.* (the SPRT) and passers-200.* (NAME=
# passers-200 MARGS="--games 200", stopped by LIMIT at 120 games). TREE (default out/v6): the
# engine's tree, e.g. 19158cc with knight_outpost and bishop_outpost set to [0, 0] in its
# evalweights.json (the passed pawns' king distances alone: played on the 2-core machine
# instead, passed-king-only-2core.*, docs/engine.md); the records passers.* and passers-200.*
# were played with the engine of 19158cc's own tree, run as this script's default engine then.
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# match is kept in /tmp/state between calls to a machine still held and resumed from there, or
# from out/state (the files a call before brought back) on a fresh machine; LIMIT: seconds for
# the match in this call.
set -u
REPO=$PWD
if [ -d $REPO/out/state ] && [ ! -f /tmp/state/passers.json ]; then
  mkdir -p /tmp/state && cp $REPO/out/state/* /tmp/state/
fi
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
TREE=$REPO/${TREE:-out/v6}
for tree in $TREE/src $REPO/out/old/src; do
  PYTHONPATH=/tmp/site:$tree python3 -c "from chessaccel.host.engine.hostsearch import library; library()
from chessaccel.contract.evalweights import WEIGHTS as w
print('$tree', 'version', w['version'], [w.get(k) for k in ('passed_pawn_enemy_king', 'knight_outpost', 'tempo')])" || exit 1
done
CONC=$half play ${NAME:-passers} 0-$(( 2 * half - 1 )) ${MARGS:---sprt 0,50 --games 600} \
    --engine "env PYTHONPATH=/tmp/site:$TREE/src python3 -P -m chessaccel.host.cli uci" \
    --opponent "env PYTHONPATH=/tmp/site:$REPO/out/old/src python3 -P -m chessaccel.host.cli uci" \
    --opponent-option Backend=opencl
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

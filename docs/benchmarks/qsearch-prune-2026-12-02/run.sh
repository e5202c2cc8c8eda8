#!/bin/bash
# Is pruning losing captures in quiescence worth a change of the contract? Self-play on the GPU
# machine's 16 Xeon cores through PoCL, eight games at once, every engine on two of PoCL's basic
# devices, 10 s + 0.1 s, SPRT(0, 50), the engine's defaults otherwise:
# - ours: the OpenCL kernels with bad-captures.patch (beside this script): in quiescence a
#   capture, not a promotion, whose mover is worth more than its victim (100, 320, 330, 500,
#   950, king 20000) onto a square the opponent attacks is not searched. A kernel-only
#   experiment: the model and the RTL do not have it, so its jobs are not the contract's.
# - theirs: the same commit without it.
# The trees: `rm -rf out/qp && mkdir -p out/qp && git archive COMMIT src | tar x -C out/qp &&
# patch -d out/qp -p1 < docs/benchmarks/qsearch-prune-2026-12-02/bad-captures.patch`, run from a
# checkout of COMMIT (theirs is the checkout's own src/).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# match is kept in /tmp/state between calls to a machine still held and resumed from there, or
# from out/state (the files a call before brought back) on a fresh machine; LIMIT: seconds for
# the match in this call; NAME (default badcaptures) and MARGS (default --sprt 0,50 --games 800).
set -u
REPO=$PWD
NAME=${NAME:-badcaptures}
if [ -d $REPO/out/state ] && [ ! -f /tmp/state/$NAME.json ]; then
  mkdir -p /tmp/state && cp $REPO/out/state/* /tmp/state/
fi
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
for tree in $REPO/out/qp/src $REPO/src; do
  PYTHONPATH=/tmp/site:$tree python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('$tree ok')" || exit 1
done
CONC=$half play $NAME 0-$(( 2 * half - 1 )) ${MARGS:---sprt 0,50 --games 800} \
    --engine "env PYTHONPATH=/tmp/site:$REPO/out/qp/src python3 -P -m chessaccel.host.cli uci" \
    --opponent "env PYTHONPATH=/tmp/site:$REPO/src python3 -P -m chessaccel.host.cli uci" \
    --opponent-option Backend=opencl
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

#!/bin/bash
# Self-play SPRT of the threats term (docs/semantics.md 6.1, `threats`; the weights of version 5)
# on the GPU machine's 16 Xeon cores through PoCL: this tree's engine against the tree of
# 5c99686 (the evaluation of version 4, without threats) in out/old/src (`rm -rf out/old &&
# mkdir -p out/old && git archive 5c99686 src | tar x -C out/old`), both on the engine's
# defaults, every engine on two of PoCL's basic devices, eight games at once on all the cores,
# 10 s + 0.1 s, SPRT(0, 50).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# match is kept in /tmp/state between calls to a machine still held and resumed from there;
# LIMIT: seconds for the match in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
export PYTHONPATH=/tmp/site:$REPO/src
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('new hostsearch ok')" || exit 1
PYTHONPATH=/tmp/site:$REPO/out/old/src python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('old hostsearch ok')" || exit 1
python3 -c "from chessaccel.contract.evalweights import WEIGHTS as w; print('weights version', w['version'], 'threats', [w[k] for k in ('threat_by_pawn', 'threat_by_minor', 'threat_by_rook', 'hanging_piece')])"
play threats 0-$(( 2 * half - 1 )) --sprt 0,50 --games 600 --concurrency $half \
    --opponent "env PYTHONPATH=/tmp/site:$REPO/out/old/src python3 -P -m chessaccel.host.cli uci" \
    --opponent-option Backend=opencl
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

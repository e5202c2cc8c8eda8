#!/bin/bash
# Self-play SPRT of weights version 6 (docs/semantics.md 6.1: the passed pawns' king distances
# and the outposts) on the GPU machine's 16 Xeon cores through PoCL: this tree's engine against
# the tree of 0f72781 (version 5) in out/old/src (`rm -rf out/old && mkdir -p out/old && git
# archive 0f72781 src | tar x -C out/old`), both on the engine's defaults, every engine on two
# of PoCL's basic devices, eight games at once on all the cores, 10 s + 0.1 s, SPRT(0, 50).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# match is kept in /tmp/state between calls to a machine still held and resumed from there;
# LIMIT: seconds for the match in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
export PYTHONPATH=/tmp/site:$REPO/src
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('new hostsearch ok')" || exit 1
PYTHONPATH=/tmp/site:$REPO/out/old/src python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('old hostsearch ok')" || exit 1
python3 -c "from chessaccel.contract.evalweights import WEIGHTS as w; print('weights version', w['version'], [w[k] for k in ('passed_pawn_enemy_king', 'passed_pawn_own_king', 'knight_outpost', 'bishop_outpost')])"
play passers 0-$(( 2 * half - 1 )) --sprt 0,50 --games 600 --concurrency $half \
    --opponent "env PYTHONPATH=/tmp/site:$REPO/out/old/src python3 -P -m chessaccel.host.cli uci" \
    --opponent-option Backend=opencl
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

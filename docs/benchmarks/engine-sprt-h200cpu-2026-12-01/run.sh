#!/bin/bash
# Two self-play SPRTs at once on the GPU machine's 16 Xeon cores through PoCL (2026-12-01),
# each pinned to half of the cores with a quarter of them as games at once, every engine on two
# of PoCL's basic devices, 10 s + 0.1 s, SPRT(0, 50), the engine's defaults otherwise:
# - twofold: the repetition rule of 2026-12-01 (a position seen once before the root is not a
#   draw; after the root, or a third time, it is) against the rule before it (`TwofoldDraws`:
#   every repetition a draw). Why: of the 41 games lost to stockfish 2200 in sf2200-time, about
#   15 show a move scored exactly 0 (a repetition found, often at depth 17-24) followed by a
#   score 80-340 cp lower a move later: stockfish turned aside, the engine had played for a draw
#   that was not there.
# - nulleval: `NullMoveEval` on (the null move's reply a ply shallower per 200 cp above beta)
#   against off (the default), the match its table row waits for.
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# matches are kept in /tmp/state between calls to a machine still held and resumed from there;
# LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
export POCL_DEVICES="basic basic"
nproc; lscpu | grep "Model name"
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
play twofold 0-$(( half - 1 )) --sprt 0,50 --games 600 \
    --opponent-engine-option TwofoldDraws=true &
play nulleval $half-$(( 2 * half - 1 )) --sprt 0,50 --games 600 \
    --engine-option NullMoveEval=true &
wait
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

#!/bin/bash
# Two self-play SPRTs at once on the GPU machine's 16 Xeon cores through PoCL (2026-12-01,
# later), each pinned to half of the cores with a quarter of them as games at once, every engine
# on two of PoCL's basic devices, 10 s + 0.1 s, SPRT(0, 50), the engine's defaults otherwise:
# - both: `DeepFutility` (reverse futility at every null-window node of depth <= 8, not only
#   the three plies above the frontier) and `NonPvReductions` (late-move reductions a ply more
#   at null-window nodes) against neither. Why: the games against stockfish 2200 are lost in the
#   middlegame, where more depth removes most blunders ("Depth in the middlegame"), and engines
#   prune and reduce far from the leaves where ours stops three plies above its jobs.
# - nonpv: `NonPvReductions` alone against off; (a second call, SECOND=1, once nonpv was
#   decided) deep: `DeepFutility` alone against off.
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# matches are kept in /tmp/state between calls to a machine still held and resumed from there;
# LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
play both 0-$(( half - 1 )) --sprt 0,50 --games 600 \
    --engine-option DeepFutility=true --engine-option NonPvReductions=true \
    --opponent-engine-option DeepFutility=false --opponent-engine-option NonPvReductions=false &
if [ "${SECOND:-0}" = 1 ]; then
  play deep $half-$(( 2 * half - 1 )) --sprt 0,50 --games 600 \
      --engine-option DeepFutility=true --opponent-engine-option DeepFutility=false &
else
  play nonpv $half-$(( 2 * half - 1 )) --sprt 0,50 --games 600 \
      --engine-option NonPvReductions=true --opponent-engine-option NonPvReductions=false &
fi
wait
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

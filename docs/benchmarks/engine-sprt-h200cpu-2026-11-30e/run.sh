#!/bin/bash
# Two self-play SPRTs at once on the GPU machine's 16 Xeon cores through PoCL (2026-11-30,
# night), each pinned to half of the cores with a quarter of them as games at once, every engine
# on two of PoCL's basic devices (chained inline launches), 10 s + 0.1 s, SPRT(0, 50), against
# the engine's defaults (HardwarePlies auto = 1 there; self-play's opponent takes our
# --hardware-plies unless it is set for it):
#   fplmp-hp1: FutilityPruning and LateMovePruning at HardwarePlies 1 (both lost at 3, where a
#     frontier parent had four plies left: at 1 it has two, as in a software engine);
#   fplmp-hp0: the same with HardwarePlies 0 (jobs of quiescence alone, the last full-width ply
#     the host's, where futility prunes the quiet moves of a hopeless frontier parent before any
#     job goes out: depth 13 on the 10 bench positions in 2.4 s against 3.4 s at 1).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# matches are kept in /tmp/state between calls to a machine still held and resumed from there;
# LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
FPLMP="--engine-option FutilityPruning=true --engine-option LateMovePruning=true
       --opponent-engine-option FutilityPruning=false --opponent-engine-option LateMovePruning=false"
play fplmp-hp1 0-$(( half - 1 )) --sprt 0,50 --games 600 $FPLMP &
play fplmp-hp0 $half-$(( 2 * half - 1 )) --sprt 0,50 --games 600 --hardware-plies 0 \
    --opponent-engine-option HardwarePlies=-1 $FPLMP &
wait
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

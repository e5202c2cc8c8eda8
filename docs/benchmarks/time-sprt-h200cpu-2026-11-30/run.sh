#!/bin/bash
# Slow Mover (the planned time in percent) 150 and 200 against the plan as it is (100),
# two self-play SPRTs at once on the GPU machine's 16 Xeon cores through PoCL (2026-11-30,
# night), each pinned to half of the cores with a quarter of them as games at once, every engine
# on two of PoCL's basic devices, 10 s + 0.1 s, SPRT(0, 50), the engine's defaults otherwise.
# Why: against stockfish 2200 the engine ended its games with a median 3.8 s of its clock unused
# and thought 0.21-0.24 s a move over the first 40 plies (sf2200-chain-auto), where its blunders
# were; a search's depth there is what its middlegame lacked ("Depth in the middlegame").
# Played with the tree of 7836716, whose plan had the soft deadline at half the target and the
# hard one at 2.5 times it (since 9d9a12e the whole target and 5 times: Slow Mover 200 then).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# matches are kept in /tmp/state between calls to a machine still held and resumed from there;
# LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
play slow150 0-$(( half - 1 )) --sprt 0,50 --games 600 \
    --engine-option "Slow Mover=150" --opponent-engine-option "Slow Mover=100" &
play slow200 $half-$(( 2 * half - 1 )) --sprt 0,50 --games 600 \
    --engine-option "Slow Mover=200" --opponent-engine-option "Slow Mover=100" &
wait
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

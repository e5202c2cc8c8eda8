#!/bin/bash
# A self-play SPRT on the GPU machine's 16 Xeon cores through PoCL (2026-12-02), all 16 cores,
# eight games at once, every engine on two of PoCL's basic devices, 10 s + 0.1 s, SPRT(0, 50),
# the engine's defaults otherwise:
# - singular: `SingularExtension` on (the hash move a ply deeper where no other move, searched
#   half as deep, reaches the table's score less 2 cp a ply; multi-cut where that bound is at
#   or above beta) against off, the default. Played in one call of 530 s after a call that
#   carried the first half of pocl.tar.xz (pocl-on-gpu-machine.sh): H0 accepted after 73 games.
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# match is kept in /tmp/state between calls to a machine still held and resumed from there (or
# from the records carried in STATE); LIMIT: seconds for the match in this call.
set -u
REPO=$PWD
if [ -n "${STATE:-}" ] && [ ! -d /tmp/state ]; then mkdir -p /tmp/state && cp $REPO/$STATE/* /tmp/state/; fi
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
CONC=$(( $(nproc) / 2 )) play singular 0-$(( $(nproc) - 1 )) --sprt 0,50 --games 600 \
    --engine-option SingularExtension=true --opponent-engine-option SingularExtension=false
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

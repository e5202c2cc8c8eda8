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
# - (a second call) stability: `TimeStability` on (the soft deadline 150 % of the plan after an
#   iteration whose best move changed, 70 % once it stood three, 130 % of that after a fall of
#   30 cp; timeman.py's soft_percent) against off, the default; and slow150: `Slow Mover` 150
#   against 100 (the local record slow150-vs-100 stood at 0 +- 74 in 56 games). The first call
#   played twofold only (its twin, NullMoveEval, had been rejected already: 2026-11-30c).
# WHL: the folder of the wheels and pocl.tar.xz (docs/benchmarks/pocl-on-gpu-machine.sh). The
# matches are kept in /tmp/state between calls to a machine still held and resumed from there;
# LIMIT: seconds for the matches in this call.
set -u
REPO=$PWD
. $REPO/docs/benchmarks/match-on-gpu-machine.sh
if [ "${SECOND:-0}" = 1 ]; then
  play stability 0-$(( half - 1 )) --sprt 0,50 --games 600 \
      --engine-option TimeStability=true --opponent-engine-option TimeStability=false &
  play slow150 $half-$(( 2 * half - 1 )) --sprt 0,50 --games 600 \
      --engine-option "Slow Mover=150" --opponent-engine-option "Slow Mover=100" &
else
  play twofold 0-$(( half - 1 )) --sprt 0,50 --games 600 \
      --engine-option TwofoldDraws=false --opponent-engine-option TwofoldDraws=true &
fi
wait
cp /tmp/state/* $OUT/
tail -n 4 $OUT/*.log

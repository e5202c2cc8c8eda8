#!/bin/bash
# FiftyMoveScaling on and off from the positions of positions.epd (won-looking positions the
# engine drew against stockfish 2200, the fifty-move counter at 16 or more), each played with
# both colours against stockfish 2200 (UCI_LimitStrength, Move Overhead 100) at 3 s + 0.1 s,
# one game at a time, the engine's defaults otherwise. Run from the repository root on an
# otherwise idle machine; FIRST: how many of the positions (default all).
set -eu
HERE=docs/benchmarks/fifty-2026-11-30
n=$(grep -c . $HERE/positions.epd)
first=${FIRST:-$n}
head -n $first $HERE/positions.epd > /tmp/fifty-positions.epd
for on in true false; do
  chessaccel match --opponent /usr/games/stockfish --opponent-option UCI_LimitStrength=true \
      --opponent-option UCI_Elo=2200 --opponent-option "Move Overhead=100" --backend opencl \
      --openings /tmp/fifty-positions.epd --games $(( 2 * first )) --tc 3+0.1 \
      --engine-option FiftyMoveScaling=$on --name fifty-$on \
      --out $HERE/fifty-$on.json --pgn $HERE/fifty-$on.pgn
done

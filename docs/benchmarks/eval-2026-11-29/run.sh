#!/bin/bash
# the issue-30 pair: terms and pst against one UCI_Elo, 100 games each, played in
# alternating chunks of 10 games so that both see the same hours of the machine
cd "$(git rev-parse --show-toplevel)" && mkdir -p out
ELO=${ELO:-1900}
for n in 10 20 30 40 50 60 70 80 90 100; do
  for ev in terms pst; do
    out=docs/benchmarks/eval-2026-11-29/sf$ELO-$ev.json
    resume=; [ -e $out ] && resume=--resume
    .venv/bin/chessaccel match --opponent /usr/games/stockfish --opponent-option UCI_LimitStrength=true \
      --opponent-option UCI_Elo=$ELO --opponent-option "Move Overhead=100" --backend opencl \
      --engine-option Evaluation=$ev --games $n --tc 10+0.1 --name sf$ELO-$ev \
      --out $out $resume >> out/sf$ELO-$ev.log 2>&1
  done
done

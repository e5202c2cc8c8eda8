#!/bin/bash
# the terms side of issue 30's stockfish pair again, after the kernels' terms got faster
# (fec701e): 100 games against UCI_Elo 1900 as in ../eval-2026-11-29/run.sh; the pst side is
# that folder's record (its code unchanged since)
cd "$(git rev-parse --show-toplevel)" && mkdir -p out
ELO=${ELO:-1900}
out=docs/benchmarks/eval-fastterms-2026-11-29/sf$ELO-terms.json
resume=; [ -e $out ] && resume=--resume
.venv/bin/chessaccel match --opponent /usr/games/stockfish --opponent-option UCI_LimitStrength=true \
  --opponent-option UCI_Elo=$ELO --opponent-option "Move Overhead=100" --backend opencl \
  --engine-option Evaluation=terms --games ${GAMES:-100} --tc 10+0.1 --name sf$ELO-terms-fast \
  --out $out $resume >> out/sf$ELO-terms-fast.log 2>&1

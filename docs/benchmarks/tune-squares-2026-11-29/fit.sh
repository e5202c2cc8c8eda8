#!/bin/bash
# The third fit of the terms evaluation (2026-11-29, issue 30): every project game then under
# docs/benchmarks/ (2,309 finished games), scored by Debian's stockfish 15.1 at depth 8, the
# weights and the terms evaluation's own material + piece-square tables fitted together from
# version 1 (--squares), the result adopted as version 2 (then played against version 1: run.sh).
set -e
chessaccel tune data docs/benchmarks/*/*.pgn --out out/tune3/games.npz          # 181,972 positions, 7.5 min
chessaccel tune label out/tune3/games.npz --engine /usr/games/stockfish --depth 8 --workers 2 \
  --out out/tune3/labelled.npz                                                    # 22 min
git show a4998dd:src/chessaccel/contract/evalweights.json > out/tune3/v1.json    # version 1
chessaccel tune fit out/tune3/labelled.npz --start out/tune3/v1.json --target engine \
  --prior-sd 10 --squares 25 --out out/tune3/sq25.json     # 50 iterations, 5 min; its plot and summary
# are committed as fit-sq25.png and fit-sq25-summary.json
cp out/tune3/sq25.json src/chessaccel/contract/evalweights.json

#!/bin/bash
# The second fit of the terms' weights (2026-11-29, issue 30): every project game then under
# docs/benchmarks/ (1,464 finished games), scored by Debian's stockfish 15.1 at depth 6, fitted to
# its scores (--target engine), then each candidate against version 1 in self-play on PoCL.
set -e
chessaccel tune data docs/benchmarks/*/*.pgn --out out/tune2/games.npz        # 107,851 positions, 6 min
chessaccel tune label out/tune2/games.npz --engine /usr/games/stockfish --depth 6 --workers 2 \
  --out out/tune2/labelled.npz                                                   # 5.5 min
# the first candidate (prior 40 cp) and the second (prior 10 cp), both from version 1
chessaccel tune fit out/tune2/labelled.npz --start src/chessaccel/contract/evalweights.json \
  --target engine --prior-sd 40 --out out/tune2/tuned-engine.json
chessaccel tune fit out/tune2/labelled.npz --start src/chessaccel/contract/evalweights.json \
  --target engine --prior-sd 10 --out out/tune2/tuned-engine-10.json
# self-play: the candidate copied over src/chessaccel/contract/evalweights.json (uncommitted),
# version 1 as the commit before it
chessaccel match --backend opencl --opponent-commit HEAD --games 160 --sprt 0,40 --tc 10+0.1 \
  --name v2sf-vs-v1 --out docs/benchmarks/tune-2026-11-29/v2sf-vs-v1.json   # prior 40, at 4e44e1d
chessaccel match --backend opencl --opponent-commit HEAD --games 200 --sprt 0,40 --tc 10+0.1 \
  --name v3sf-vs-v1 --out docs/benchmarks/tune-2026-11-29/v3sf-vs-v1.json   # prior 10, at 21ea8bb

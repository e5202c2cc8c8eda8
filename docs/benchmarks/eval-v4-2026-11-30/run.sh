#!/bin/bash
# Issue 30's stockfish match with the candidate weights version 4 (v4.json beside this script:
# version 2 with the king's and the rooks' first-rank middlegame entries changed, docs/engine.md
# "What the games against stockfish show"): the engine's defaults with `Evaluation terms`,
# 100 games against Debian's stockfish 15.1 at UCI_Elo 1900, 10 s + 0.1 s, on the GPU machine's
# CPU cores through PoCL: every engine's PoCL on 2 threads, nproc / 2 games at once (the same
# threads a core as the pairs of ../eval-squares-2026-11-29/ and ../eval-v3-2026-11-30/: 16 of
# our threads and 8 of stockfish's on 16 cores there), the opponent's settings as there.
# The wheels and pocl.tar.xz (WHL, a first call on the warm machine: `REPO=$PWD
# WHL=$PWD/.whlm . docs/benchmarks/pocl-on-gpu-machine.sh`) and Debian's stockfish package
# (SF_DEB, this call) are more than one call may carry with the tree (64 MiB). Resumes from
# $STATE/sf1900-v4.json when present. LIMIT: seconds for the match in this call.
set -u
REPO=$PWD
WEIGHTS=$REPO/docs/benchmarks/eval-v4-2026-11-30/v4.json
cp $WEIGHTS $REPO/src/chessaccel/contract/evalweights.json || exit 1
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
[ -x /tmp/sf/usr/games/stockfish ] || dpkg -x ${SF_DEB:-$REPO/.whld/stockfish_15.1-4_amd64.deb} /tmp/sf
nproc; lscpu | grep "Model name"
python3 -c "from chessaccel.contract.evalweights import WEIGHTS; print('weights version', WEIGHTS['version'])"
name=sf1900-v4 resume=""
if [ -f ${STATE:-/nonexistent}/$name.json ]; then
  cp $STATE/$name.json $STATE/$name.pgn $OUT/ && resume=--resume
fi
timeout ${LIMIT:-540} python3 -P -m chessaccel.host.cli match \
    --opponent /tmp/sf/usr/games/stockfish --opponent-option UCI_LimitStrength=true \
    --opponent-option UCI_Elo=1900 --opponent-option "Move Overhead=100" \
    --backend opencl --engine-option Evaluation=terms --concurrency $(( $(nproc) / 2 )) \
    --games 100 --tc 10+0.1 --name $name --out $OUT/$name.json $resume > $OUT/$name.log 2>&1
echo "exit $?" >> $OUT/$name.log
tail -n 4 $OUT/$name.log

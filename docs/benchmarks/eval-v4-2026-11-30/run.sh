#!/bin/bash
# Issue 30's stockfish pair with the candidate weights version 4 (v4.json beside this script:
# version 2 with the king's and the rooks' first-rank middlegame entries changed, docs/engine.md
# "What the games against stockfish show"): the engine's defaults with `Evaluation terms` (the
# candidate's weights and tables) and with `Evaluation pst`, 100 games each against Debian's
# stockfish 15.1 at UCI_Elo 1900, 10 s + 0.1 s, both matches at once on the GPU machine's CPU
# cores through PoCL, each pinned to half of them with a quarter of them as games at once, every
# engine's PoCL on 2 threads: the threads a core of the pairs of ../eval-squares-2026-11-29/ and
# ../eval-v3-2026-11-30/ (on 16 cores there, here on whatever nproc says).
# The wheels and pocl.tar.xz (WHL, a first call on the warm machine: `REPO=$PWD
# WHL=$PWD/.whlm . docs/benchmarks/pocl-on-gpu-machine.sh`) and Debian's stockfish package
# (SF_DEB, this call) are more than one call may carry with the tree (64 MiB). Resumes from
# $STATE/sf1900-v4-*.json when present. LIMIT: seconds for the match in this call.
set -u
REPO=$PWD
WEIGHTS=$REPO/docs/benchmarks/eval-v4-2026-11-30/v4.json
cp $WEIGHTS $REPO/src/chessaccel/contract/evalweights.json || exit 1
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
[ -x /tmp/sf/usr/games/stockfish ] || dpkg -x ${SF_DEB:-$REPO/.whld/stockfish_15.1-4_amd64.deb} /tmp/sf
nproc; lscpu | grep "Model name"
python3 -c "from chessaccel.contract.evalweights import WEIGHTS; print('weights version', WEIGHTS['version'])"
half=$(( $(nproc) / 2 ))
play() {   # EVALUATION CPUS
  local name=sf1900-v4-$1 resume=""
  if [ -f ${STATE:-/nonexistent}/$name.json ]; then
    cp $STATE/$name.json $STATE/$name.pgn $OUT/ && resume=--resume
  fi
  timeout ${LIMIT:-540} taskset -c $2 python3 -P -m chessaccel.host.cli match \
      --opponent /tmp/sf/usr/games/stockfish --opponent-option UCI_LimitStrength=true \
      --opponent-option UCI_Elo=1900 --opponent-option "Move Overhead=100" \
      --backend opencl --engine-option Evaluation=$1 --concurrency $(( half / 2 )) \
      --games 100 --tc 10+0.1 --name $name --out $OUT/$name.json $resume > $OUT/$name.log 2>&1
  echo "exit $?" >> $OUT/$name.log
}
play terms 0-$(( half - 1 )) &
play pst $half-$(( 2 * half - 1 )) &
wait
tail -n 4 $OUT/sf1900-v4-terms.log $OUT/sf1900-v4-pst.log

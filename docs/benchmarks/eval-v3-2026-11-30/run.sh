#!/bin/bash
# Issue 30's stockfish pair with the candidate weights version 3 (fit.sh): the engine's defaults
# with `Evaluation terms` (the candidate's weights and material + piece-square tables) and with
# `Evaluation pst`, 100 games each against Debian's stockfish 15.1 at UCI_Elo 1900, 10 s + 0.1 s,
# both matches at once on the GPU machine's 16 CPU cores (each pinned to 8 of them, four games at
# once, every engine's PoCL on 2 threads), so that both meet the same machine and hours; the same
# set-up as ../eval-squares-2026-11-29/run.sh (version 2). Resumes from .whl/state/ when present
# (copy the records back there between calls). LIMIT: seconds per call.
# WEIGHTS (default: v3.json beside this script) is copied over src/chessaccel/contract/
# evalweights.json of the checkout it runs in (on the GPU machine: the call's copy), so that every
# engine the matches start reads it.
# Run from the repository root with .whl/ carried: its wheels, pocl.tar.xz
# (docs/benchmarks/pocl-on-gpu-machine.sh) and Debian's stockfish package (`apt-get download
# stockfish`, unpacked there with dpkg -x).
# The wheels, pocl.tar.xz and the stockfish package are more than a call may carry (64 MiB with
# the tree): a first call carried the wheels and pocl.tar.xz and installed them, then two calls of
# this script on the same warm machine (/tmp kept) carried the package and .whl/state.
set -u
REPO=$PWD
WEIGHTS=${WEIGHTS:-$REPO/docs/benchmarks/eval-v3-2026-11-30/v3.json}
cmp -s $WEIGHTS $REPO/src/chessaccel/contract/evalweights.json || \
  cp $WEIGHTS $REPO/src/chessaccel/contract/evalweights.json || exit 1
. $REPO/docs/benchmarks/pocl-on-gpu-machine.sh
[ -x /tmp/sf/usr/games/stockfish ] || dpkg -x $REPO/.whl/stockfish_*.deb /tmp/sf
nproc; lscpu | grep "Model name"
python3 -c "from chessaccel.contract.evalweights import WEIGHTS; print('weights version', WEIGHTS['version'])"
sha256sum $WEIGHTS $REPO/src/chessaccel/contract/evalweights.json
play() {   # EV CPUS
  local name=sf1900-$1 resume=""
  if [ -f $REPO/.whl/state/$name.json ]; then
    cp $REPO/.whl/state/$name.json $REPO/.whl/state/$name.pgn $OUT/ 2>/dev/null; resume=--resume
  fi
  timeout ${LIMIT:-540} taskset -c $2 python3 -P -m chessaccel.host.cli match \
      --opponent /tmp/sf/usr/games/stockfish --opponent-option UCI_LimitStrength=true \
      --opponent-option UCI_Elo=1900 --opponent-option "Move Overhead=100" \
      --backend opencl --engine-option Evaluation=$1 --concurrency 4 --games 100 --tc 10+0.1 \
      --name $name --out $OUT/$name.json $resume > $OUT/$name.log 2>&1
  echo "exit $?" >> $OUT/$name.log
}
play terms 0-7 &
play pst 8-15 &
wait
tail -n 4 $OUT/sf1900-terms.log $OUT/sf1900-pst.log

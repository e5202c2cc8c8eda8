#!/bin/bash
# The expansion above the leaf, A/B on one H200, then our OpenCL perft beside perft_gpu with the
# faster variant (2026-11-30, later still; perft_gpu at cb18c41, source digest 9a24f2e8311e5f2b
# as in ../perft-peer-h200-2026-11-30c), run on the GPU machine from a checkout with perft_gpu's
# checkout (git clone https://github.com/ankan-ban/perft_gpu_2026, here an ignored folder
# .peer/perft_gpu carried with the call) and the wheels of ../shared/docs/gpu-machine.md in an
# ignored folder ($WHEELS, default out/whl, carried), as one command on a fresh machine:
#   bash docs/benchmarks/perft-peer-h200-2026-11-30d/run.sh
# This is the second of two such calls; run1/ holds the first's files and its run.sh (the A/B of
# PERFT_LEAF's bits 2048, 4096 and 8192 against the default of 0782daf, and a perftpeer with the
# fastest, 15801, the default since).
# 1. The A/B (ab/perft_ab.log, .json: three rounds, alternating, every count checked). "base" is
#    the default PERFT_LEAF_GPU = 15801 (with PERFT_COUNT=63, PERFT_MAGIC=2, PERFT_MAXRREG=40,
#    work-groups of 512); S adds PERFT_LEAF 16384 (perft.cl: expand_moves' children gathered in
#    local memory and written by the whole work-group of 64). Then each launch's own time on a
#    profiling queue (--kernel-times).
# 2. The variant faster over the start position's perft 8 and Kiwipete's perft 7 (the sum of
#    each one's fastest run) is made PERFT_LEAF_GPU in the machine's copy of the checkout, and
#    perftpeer runs with it (our program from the cache the A/B filled).
# (perftpeer.json's ours_commit reads 45a0d5a, what git said in the device's copy of the checkout;
# the tree sent was 66ff692 with the changes of 19ca599 uncommitted and PERFT_LEAF_GPU = 15801,
# which the step 2 below set to 32185 (S won, ab/perft_ab.log): the build perftpeer measured is
# 19ca599's default. Run 1's tree had PERFT_LEAF_GPU = 1465 and no bit 16384; its step 2 set
# 15801.)
set -o pipefail
export REPO=$PWD PEER=${PEER:-$PWD/.peer/perft_gpu} WHEELS=${WHEELS:-$PWD/out/whl}
mkdir -p /tmp/site /tmp/icd "$OUT/ab"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHEELS"/*.whl
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src PYTHONUNBUFFERED=1
cd /tmp
python3 -P -m chessaccel.lab.device --platform nvidia --out "$OUT/ab" perft-ab \
  S=PERFT_LEAF:32185 --rounds 3 --kernel-times base,S > /dev/null 2>&1
echo "perft-ab exit $?"
grep -A 30 "^variant" "$OUT/ab/perft_ab.log"
LEAF=$(python3 - "$OUT/ab/perft_ab.json" "$REPO" <<'PY'
import json, re, sys
record = json.load(open(sys.argv[1]))
best = {}
for r in record["runs"]:
    if (r["root"], r["depth"]) in (("startpos", 8), ("kiwipete", 7)) and r["correct"]:
        key = (r["variant"], r["root"])
        best[key] = min(best.get(key, 1e9), r["seconds"])
score = {v: best[(v, "startpos")] + best[(v, "kiwipete")] for v in record["variants"]
         if (v, "startpos") in best and (v, "kiwipete") in best}
winner = min(score, key=score.get)
default = re.search(r"^PERFT_LEAF_GPU = (\d+)", open(sys.argv[2] + "/src/chessaccel/host/opencl/device.py").read(), re.M)
print(record["variants"][winner].get("PERFT_LEAF", int(default.group(1))))
print(f"the fastest: {winner}", {v: round(s, 4) for v, s in score.items()}, file=sys.stderr)
PY
)
echo "PERFT_LEAF_GPU = $LEAF for perftpeer"
sed -i "s/^PERFT_LEAF_GPU = .*/PERFT_LEAF_GPU = $LEAF/" "$REPO/src/chessaccel/host/opencl/device.py"
python3 -P -m chessaccel.lab.perftpeer --peer-source "$PEER" --build /tmp/pbuild \
  --backend opencl:nvidia --root startpos:7,8 --root kiwipete:6,7 \
  --suite "$REPO/tests/data/perftsuite.epd" --suite-depth 5 --runs 3 --processes --out "$OUT" \
  > "$OUT/perftpeer.log" 2>&1
echo "perftpeer exit $?"
head -n 8 "$OUT/perftpeer.log"
/tmp/pbuild/perft_gpu-* "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 8 -nott \
  > "$OUT/perft_gpu-startpos-8.txt"

#!/bin/bash
# The expansion above the leaf, A/B on one H200, then our OpenCL perft beside perft_gpu with the
# faster variant (2026-11-30, later still; perft_gpu at cb18c41, source digest 9a24f2e8311e5f2b
# as in ../perft-peer-h200-2026-11-30c), run on the GPU machine from a checkout with perft_gpu's
# checkout (git clone https://github.com/ankan-ban/perft_gpu_2026, here an ignored folder
# .peer/perft_gpu carried with the call) and the wheels of ../shared/docs/gpu-machine.md in an
# ignored folder ($WHEELS, default out/whl, carried), as one command on a fresh machine:
#   bash docs/benchmarks/perft-peer-h200-2026-11-30e/run.sh MODE NAME=SWITCHES...
# 1. The A/B ($OUT/MODE/perft_ab.log, .json: five rounds, alternating, every count checked).
#    "base" is the checkout's default (PERFT_LEAF_GPU = 32185, with PERFT_COUNT=63,
#    PERFT_MAGIC=2, PERFT_MAXRREG=40, work-groups of 512); each NAME=SWITCHES a variant as
#    lab/perft_ab.py takes them. Then each launch's own time on a profiling queue (--kernel-times)
#    for every variant.
# 2. MODE "final" only: the variant faster over the start position's perft 8 and Kiwipete's
#    perft 7 (the sum of each one's fastest run) is made PERFT_LEAF_GPU in the machine's copy of
#    the checkout, and perftpeer runs with it, five runs a root.
# The first call (ab1/; that call's run.sh had the same steps with --out "$OUT/ab") was "ab" with
# D=PERFT_LEAF:64953 (32768: the levels sized on the device) DP=PERFT_LEAF:130489 (and 65536: the
# lanes sorted by pseudo-legal moves) D32=PERFT_LEAF:64953,PERFT_MAXRREG:32 and
# D32x=PERFT_LEAF:64953,PERFT_MAXRREG:32@1024, on the tree of 578bab3 with those two bits
# uncommitted (since deleted: none won; docs/opencl.md, "The levels sized on the device"). The
# second (final/ and the perftpeer files here) was "final" with T=PERFT_LEAF:163257 (131072:
# expand_top) X=PERFT_LEAF:294329 (262144: expand in several lanes a position)
# TX=PERFT_LEAF:425401, on the tree of 578bab3 with the changes of cf5642c uncommitted and
# PERFT_LEAF_GPU = 32185; TX was the fastest, step 2 set PERFT_LEAF_GPU = 425401 (the default of
# the commit after cf5642c), and perftpeer measured that build. (perftpeer.json's ours_commit
# reads 45a0d5a: what git said in the device's copy of the checkout.)
set -o pipefail
MODE=$1; shift
export REPO=$PWD PEER=${PEER:-$PWD/.peer/perft_gpu} WHEELS=${WHEELS:-$PWD/out/whl}
mkdir -p /tmp/site /tmp/icd "$OUT/$MODE"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHEELS"/*.whl
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src PYTHONUNBUFFERED=1
cd /tmp
NAMES=base$(for v in "$@"; do printf ',%s' "${v%%=*}"; done)
python3 -P -m chessaccel.lab.device --platform nvidia --out "$OUT/$MODE" perft-ab \
  "$@" --rounds 5 --kernel-times "$NAMES" > /dev/null 2>&1
echo "perft-ab exit $?"
grep -A 30 "^variant" "$OUT/$MODE/perft_ab.log"
grep "^kernel times\|  expand \|expand_top\|expand_moves\|perft_fused_2 " "$OUT/$MODE/perft_ab.log"
[ "$MODE" = final ] || exit 0
LEAF=$(python3 - "$OUT/$MODE/perft_ab.json" "$REPO" <<'PY'
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
print(f"the fastest: {winner}", {v: round(s, 5) for v, s in score.items()}, file=sys.stderr)
PY
)
echo "PERFT_LEAF_GPU = $LEAF for perftpeer"
sed -i "s/^PERFT_LEAF_GPU = .*/PERFT_LEAF_GPU = $LEAF/" "$REPO/src/chessaccel/host/opencl/device.py"
python3 -P -m chessaccel.lab.perftpeer --peer-source "$PEER" --build /tmp/pbuild \
  --backend opencl:nvidia --root startpos:7,8 --root kiwipete:6,7 \
  --suite "$REPO/tests/data/perftsuite.epd" --suite-depth 5 --runs 5 --processes --out "$OUT" \
  > "$OUT/perftpeer.log" 2>&1
echo "perftpeer exit $?"
head -n 8 "$OUT/perftpeer.log"
/tmp/pbuild/perft_gpu-* "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 8 -nott \
  > "$OUT/perft_gpu-startpos-8.txt"

#!/bin/bash
# The command line on the H100 (issue 10: `chessaccel moves|search|perft|bench --backend
# opencl` work there): run from the root of a checkout holding a copy of this tree in .gpuwork/
# (or the folder GPUWORK names) and the wheels in .whl/; writes $OUT/cli.log, each command's
# output under "== what it checks", and a failing platform name's one-line error and status.
source tools/opencl_device_setup.sh || exit 1
KIWI="r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
BK01="1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1"
cli() { python3 -P -c "import sys; from chessaccel.host.cli import main; sys.exit(main())" "$@"; }
{
  echo "== commit $(cat COMMIT 2>/dev/null)"
  echo "== moves"; cli moves startpos --backend opencl:nvidia
  echo "== search"; cli search "$KIWI" --backend opencl:nvidia --depth 4 --json
  echo "== search bk"; cli search "$BK01" --backend opencl:nvidia --depth 5 --json
  echo "== perft 7"; cli perft startpos --backend opencl:nvidia --depth 7 --json
  echo "== perft kiwi 6"; cli perft "$KIWI" --backend opencl:nvidia --depth 6 --json
  echo "== perft make"; cli perft startpos --backend opencl:nvidia --depth 6 --count-mode make --json
  echo "== divide"; cli perft "$KIWI" --backend opencl:nvidia --depth 3 --divide --json
  echo "== bench"; cli bench --backend opencl:nvidia --json --out /tmp/bench-opencl.json
  echo "== bad platform"; cli search startpos --backend opencl:nosuch --depth 2; echo "rc=$?"
} > "$OUT/cli.log" 2>&1
cat "$OUT/cli.log" | cut -c1-300

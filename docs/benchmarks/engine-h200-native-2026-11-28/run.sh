#!/bin/bash
# The engine through UCI at 5 s a move on the bench positions with the compiled search's native
# launches (hostlaunch.cpp) on the H200, beside the same engine on the machine's 16 CPU cores
# through PoCL.
set -u
REPO=$PWD
# PoCL's wheel went to /tmp/site in an earlier call (it puts files under pyopencl/ too): merge
mkdir -p /tmp/site /tmp/whl && python3 -m pip install -q --no-deps --target /tmp/whl .whl/*.whl 2>&1 | tail -2
cp -rn /tmp/whl/. /tmp/site/
ls /tmp/site/pocl_binary_distribution* -d >/dev/null || { echo "PoCL not installed: run the .pocl call first"; exit 1; }
mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
cp /tmp/site/pyopencl/.libs/pocl.icd /tmp/icd/ 2>/dev/null || true
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/site:$REPO/src
cd /tmp
python3 -c "from chessaccel.host.engine.hostsearch import library; library(); print('hostsearch ok')" || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader
G="Backend=opencl:NVIDIA,Hash=1024,CompiledSearch=true"
P="Backend=opencl:Portable,Hash=1024,CompiledSearch=true"
timeout ${LIMIT:-560} python3 -P -m chessaccel.lab.enginebench --movetime 5000 --positions 10 --out $OUT/enginebench-native.json \
  ${CONFIGS:---config "h200-native-t1-hp3:$G,HardwarePlies=3,Threads=1" \
  --config "h200-native-t4096-hp3:$G,HardwarePlies=3,Threads=4096" \
  --config "h200-native-t4096-hp2:$G,HardwarePlies=2,Threads=4096" \
  --config "pocl16-native-t64-hp3:$P,HardwarePlies=3,Threads=64" \
  --config "pocl16-native-t64-hp2:$P,HardwarePlies=2,Threads=64"} \
  2>&1 | tee $OUT/enginebench.log | grep -v "^  "

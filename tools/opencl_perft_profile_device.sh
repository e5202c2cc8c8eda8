#!/bin/bash
# The H100 run of tools/opencl_perft_profile.py: builds perft.cl's PTX for "base" (the GPU default)
# and the variants named (NAME=SWITCHES, as opencl_perft_ab.py takes them), times each through
# CUDA on the start position's perft 7 frontier, and profiles perft_bulk_2 of base and of the
# first variant under Nsight Compute (one launch, --clock-control none). Run like
# opencl_perft_ab_device.sh (tools/opencl_device_setup.sh: GPUWORK names the tree's copy).
# Output: $OUT/profile.log (the timings, ncu's details page), $OUT/NAME_source.csv (ncu's source
# page: every SASS instruction with its executions and stall samples), $OUT/NAME.ptx.
source "$(dirname "$0")/opencl_device_setup.sh" || exit 1
P=/tmp/perft_profile
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
first=${1%%=*}
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    python3 -P tools/opencl_perft_profile.py prepare $P "$@" || exit 1
    for v in $P/*.ptx; do
        python3 -P tools/opencl_perft_profile.py launch $v $P/start5.npy "$(cat $P/start5.txt)"
    done
    for name in base $first; do
        [ -f $P/$name.ptx ] || continue
        "$NCU" --clock-control none -k perft_bulk_2 --launch-count 1 \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats \
            --section WarpStateStats --section SchedulerStats --section Occupancy \
            --section LaunchStats --section SourceCounters --section MemoryWorkloadAnalysis \
            -f -o $P/$name python3 -P tools/opencl_perft_profile.py launch $P/$name.ptx \
            $P/start5.npy "$(cat $P/start5.txt)"
        "$NCU" -i $P/$name.ncu-rep --page details
        "$NCU" -i $P/$name.ncu-rep --page source --csv --print-source sass >"$OUT/${name}_source.csv" 2>&1
        cp $P/$name.ptx "$OUT/"
    done
} 2>&1 | tee "$OUT/profile.log"

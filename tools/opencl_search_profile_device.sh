#!/bin/bash
# The H100 run of tools/opencl_search_profile.py: builds search_jobs' PTX ("base", and the variants
# named as NAME=OVERRIDES), runs the job file (JOBS, default jobs.npz in the tree's copy) once
# through OpenCL for the node counts, times each PTX through CUDA on the "mixed" and "uniform"
# job sets, and profiles base on both under Nsight Compute (one launch, --clock-control none).
# Run like opencl_perft_ab_device.sh (tools/opencl_device_setup.sh: GPUWORK names the tree's copy).
# Output: $OUT/profile.log (timings, ncu's details pages), $OUT/base_{mixed,uniform}_source.csv
# (ncu's source page: every SASS instruction with its executions, thread executions and stall
# samples), $OUT/*.ptx. NCU_SETS: the job sets profiled (default "mixed uniform"); AB_ROUNDS > 0:
# then the A/B of base and the variants through OpenCL (opencl_search_profile.py ab) on JOBS.
source "$(dirname "$0")/opencl_device_setup.sh" || exit 1
P=/tmp/search_profile
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    if [ -n "$AB_ONLY" ]; then     # AB_ONLY=1: the A/B alone (variants as opencl_search_profile.py ab takes them)
        python3 -P tools/opencl_search_profile.py ab "${JOBS:-jobs.npz}" "${AB_ROUNDS:-2}" "$@"
        exit
    fi
    python3 -P tools/opencl_search_profile.py prepare $P "${JOBS:-jobs.npz}" "$@" || exit 1
    for v in $P/*.ptx; do
        for set in mixed uniform; do
            python3 -P tools/opencl_search_profile.py launch $v $P/$set.npz
        done
    done
    for set in ${NCU_SETS-mixed uniform}; do
        "$NCU" --clock-control none -k search_jobs --launch-count 1 \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats \
            --section WarpStateStats --section SchedulerStats --section Occupancy \
            --section LaunchStats --section SourceCounters --section MemoryWorkloadAnalysis \
            --section MemoryWorkloadAnalysis_Tables \
            -f -o $P/base_$set python3 -P tools/opencl_search_profile.py launch $P/base.ptx $P/$set.npz
        "$NCU" -i $P/base_$set.ncu-rep --page details
        "$NCU" -i $P/base_$set.ncu-rep --page source --csv --print-source sass >"$OUT/base_${set}_source.csv" 2>&1
    done
    cp $P/*.ptx "$OUT/"
    if [ "${AB_ROUNDS:-0}" -gt 0 ]; then
        python3 -P tools/opencl_search_profile.py ab "${JOBS:-jobs.npz}" "$AB_ROUNDS" base= "$@"
    fi
} 2>&1 | tee "$OUT/profile.log"

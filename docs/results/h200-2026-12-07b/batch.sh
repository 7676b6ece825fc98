#!/usr/bin/env bash
# GPU calls of the second session of 2026-12-07, main at 460387d (CI passed), two commands on one warm machine:
#   bash batch.sh 1   build; the reduction sweep (sweeps/reduction-h200.json at ten sizes, CUB in the same run);
#                     CUPTI against ncu for cuBLAS bf16/fp32 at 512-8192^3; the published tensor sweep (both
#                     baselines, step 13) in what is left of the call
#   bash batch.sh 2   the published fp32 GEMM sweep (CUPTI, the default); the lab at 1024^3 again under held-stream
#                     events
# Run from an unpacked `git archive` of the commit measured (the device gets the working tree as it is); the
# prologue and the build are tools/gpu_call.sh's, from the working tree this script lies in.
# QUICK=1 builds only the runner and the plugins of the reduction sweep and the ncu comparison, and stops after them.
set -uo pipefail
part=${1:-1}
source "$(dirname "${BASH_SOURCE[0]}")/../../../tools/gpu_call.sh" "$part"
if [[ $part == 1 ]]; then
    # With little device time left (QUICK=1): only what the reduction sweep and the ncu comparison run.
    targets=(); [[ -n ${QUICK:-} ]] && targets=(runner cuda_r1_atomic cuda_r2_tree cuda_r3_sequential cuda_r4_first_add
        cuda_r5_warp_shuffle cuda_r6_grid_stride cuda_r7_one_pass cub_reduce cublas_reference cuda_copy)
    gpu_call_build "${targets[@]}" || exit 1
    timeout 180 $R --config configs/sweeps/reduction-h200.json --sizes 1,33,257,1000003,1048576,4194304,16777216,67108864,67108865,268435456 \
      --json $OUT/reduction.json --csv $OUT/reduction.csv > $LOG/reduction-sweep.log 2>&1
    el "reduction sweep rc=$?"; tail -3 $LOG/reduction-sweep.log; bundle
    timeout 170 python3 tools/cupti_vs_ncu.py --build build-gpu --out $LOG/cupti-vs-ncu > $LOG/cupti-vs-ncu.txt 2> $LOG/cupti-vs-ncu.err
    el "cupti vs ncu rc=$?"; cat $LOG/cupti-vs-ncu.txt; bundle
    left=$(( ${BUDGET:-590} - $(gpu_call_elapsed) ))
    [[ -n ${QUICK:-} ]] && exit 0
    timeout $left $R --config configs/sweeps/h200-tensor.json --json $OUT/tensor.json --csv $OUT/tensor.csv > $LOG/tensor.log 2>&1
    el "tensor sweep rc=$?"; tail -30 $LOG/tensor.log; bundle
else
    timeout 320 $R --config configs/sweeps/h200.json --json $OUT/h200.json --csv $OUT/h200.csv > $LOG/h200.log 2>&1
    el "fp32 sweep rc=$?"; tail -30 $LOG/h200.log; bundle
    timeout 60 $R --config configs/sweeps/h200.json --sizes 1024 --timer events --json $OUT/lab1024-events.json > $LOG/lab1024-events.log 2>&1
    el "lab 1024 events rc=$?"; bundle
fi

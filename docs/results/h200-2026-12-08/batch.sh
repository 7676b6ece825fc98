#!/usr/bin/env bash
# GPU calls of 2026-12-08, each on main as committed: from the repository root on the device,
# SHA=<commit> bash docs/results/h200-2026-12-08/batch.sh PART
# PART 1, with gemv-deep.patch applied to the tree first (it is not on main: written on 2026-12-08 when this
#   session had 196 s of device time, too little to start a call): cuda_gemv's deep row path (M <= 2: 32 columns
#   and all of K per block of 512 threads, no workspace) and warps sharing a row of A on the column path (N = 1).
#   Build the fp32 split kernels, dispatch, cuBLAS and the
#   kernel tests; gemv's and dispatch's GPU tests, same bits twice; memcheck and racecheck on gemv at the shapes
#   where each new path runs with scalar loads and a ragged edge; gemv against cuBLAS at vector-like shapes (the
#   check sweep's seven and more) with ncu's DRAM figures at 1x4096x4096; the check sweep's fp32 shapes with the
#   dispatch kernel (on an H100, routed by the H100 table of 2026-12-07c); the sandbox's and grader's GPU tests,
#   after the confined spawn's identity change, in what is left of the call.
set -uo pipefail
part=${1:-1}
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/../../../tools/gpu_call.sh" "$part"
if [[ $part == 1 ]]; then
    git apply "$here/gemv-deep.patch" 2>/dev/null || patch -p1 < "$here/gemv-deep.patch" || { el "patch failed"; exit 1; }
    el "gemv-deep.patch applied"
fi
four=cuda_09_warptiled,cuda_splitk,cuda_small_tile,cuda_gemv
gpu_call_build runner cublas_reference cuda_gemv cuda_splitk cuda_small_tile cuda_09_warptiled cuda_dispatch_fp32 \
    cuda_kernels_test split_plans_test || exit 1
for shape in 2x2500x1000 517x1x3001 1x4096x4096; do
    for tool in memcheck racecheck; do
        KREG_SANITIZER_SHAPE=$shape KREG_SANITIZER_KERNELS='^cuda_gemv$' timeout 60 \
          tests/sanitizer/run_sanitizer.sh $tool $R $LOG/$tool-$shape > $LOG/$tool-$shape.txt 2>&1 &
    done
done
timeout 150 ctest --test-dir build-gpu -L gpu -j2 --output-on-failure \
  -R 'AllCudaKernels.*(cuda_gemv|cuda_dispatch_fp32)|SplitKernels|GemvPlans|Dispatch' > $LOG/ctest-gemv.log 2>&1
el "gemv and dispatch correctness rc=$?"; tail -3 $LOG/ctest-gemv.log
wait
for f in $LOG/memcheck-*.txt $LOG/racecheck-*.txt; do el "$(basename $f): $(grep -c '^ok' $f) ok, $(grep -c '^FAIL' $f) FAIL"; done
rm -f $LOG/*check-*/*.json $LOG/*check-*/*.csv; bundle
shapes=()
for s in 1x3000x5000 1x4096x4096 1x6000x1500 6x5000x3000 1500x1x6000 4096x1x4096 5000x1x3000 \
         1x8192x8192 2x4096x4096 1x2048x8192 1x1024x4096 8192x1x8192 600x1x600; do shapes+=(--shape $s); done
timeout 120 $R --kernels cuda_gemv,cublas_sgemm --dtype fp32 "${shapes[@]}" --json $OUT/vector-fp32.json \
  > $LOG/vector.log 2>&1
el "vector shapes rc=$?"; tail -3 $LOG/vector.log; bundle
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for shape in 1x4096x4096 1500x1x6000; do
  for k in cublas_sgemm cuda_gemv; do
    timeout 40 ncu --clock-control none --metrics $M --nvtx --nvtx-include "$k/" --csv --print-units base \
      $R --profile --isolation none --kernels $k --shape $shape --dtype fp32 \
      > $LOG/ncu-$k-$shape.csv 2> $LOG/ncu-$k-$shape.err
  done
done
el "ncu rc=$?"; bundle
table=()
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100; then
    gunzip -c docs/results/h200-2026-12-07c/call-2-h100/table-fp32.json.gz > $OUT/table-h100.json
    table=(env KREG_DISPATCH_TABLE=$OUT/table-h100.json)
fi
"${table[@]}" timeout 150 $R --config configs/sweeps/check-h200.json --dtype fp32 \
  --kernels cuda_dispatch_fp32,$four,cublas_sgemm --json $OUT/check-fp32.json --csv $OUT/check-fp32.csv \
  > $LOG/check-sweep.log 2>&1
el "check sweep rc=$?"; tail -3 $LOG/check-sweep.log; bundle
left=$(( 585 - $(gpu_call_elapsed) ))
cmake --build build-gpu -j16 --target sandbox_test gpu_sweep_defences_test grade_gpu_test > $LOG/build-rest.log 2>&1
timeout $left ctest --test-dir build-gpu -L gpu -LE sanitizer -j1 --output-on-failure \
  -R 'Sandbox|GpuSweepDefences|GradeGpu\.(Gpu|Harness|OnEvery|ABlock)' > $LOG/ctest-rest.log 2>&1
el "sandbox and grader gpu tests rc=$? (limit $left s)"; tail -4 $LOG/ctest-rest.log; bundle

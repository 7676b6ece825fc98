#!/usr/bin/env bash
# GPU call 3 of 2026-12-03 (afternoon), after the merges of h-ops (operation table, ABI 1.3's generic entry),
# h-red (the reduction lab) and h-win (platform layer): every CUDA call now goes through plugin/kernel_call.
# One call, each step capped so the whole fits the device time left (~600 s): build; the reduction kernels'
# tests; memcheck of the reduction kernels through the runner; the reduction sweep with CUB in the same run
# (fewer sizes than the shipped config: 2^20..2^28 by 4x, 2^26 + 1, and small odd n); a GEMM smoke sweep and the
# CUPTI/strict/pipeline/grading GPU tests on the new call path.
set -uo pipefail
LOG=$OUT/logs; mkdir -p $LOG
bundle() { tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $LOG/steps.txt; }
env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKREG_GIT_SHA=${SHA:-unknown} > $LOG/configure.log 2>&1 || { tail -20 $LOG/configure.log; bundle; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -40
el built; bundle
export CXX=/usr/bin/g++
R=build-gpu/bin/runner
red="cuda_r1_atomic,cuda_r2_tree,cuda_r3_sequential,cuda_r4_first_add,cuda_r5_warp_shuffle,cuda_r6_grid_stride,cuda_r7_one_pass,cub_reduce_sum"
timeout 90 build-gpu/bin/reduction_kernels_test > $LOG/reduction_kernels_test.log 2>&1
el "reduction_kernels_test rc=$?"; tail -3 $LOG/reduction_kernels_test.log; grep -E "^\[  FAILED" $LOG/reduction_kernels_test.log | head; bundle
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 70 $cs --tool memcheck --error-exitcode 9 $R --isolation none --operation reduction --kernels "$red" \
  --sizes 1,257,1000003 --warmup 0 --repeat 2 > $LOG/memcheck-reduction.log 2>&1
el "memcheck reduction rc=$?"; grep -E "ERROR SUMMARY" $LOG/memcheck-reduction.log | tail -2; bundle
timeout 200 $R --config sweeps/reduction-h200.json --sizes 1,33,257,1000003,1048576,4194304,16777216,67108864,67108865,268435456 \
  --json $OUT/reduction-h200.json --csv $OUT/reduction-h200.csv > $LOG/reduction-sweep.log 2>&1
el "reduction sweep rc=$?"; tail -4 $LOG/reduction-sweep.log; bundle
timeout 45 $R --kernels "cuda_0*,cuda_1*,cublas_sgemm,cublas_bf16" --sizes 1024 --dtype fp32 --json $OUT/gemm-smoke.json > $LOG/gemm-smoke.log 2>&1
el "gemm smoke rc=$?"; tail -3 $LOG/gemm-smoke.log; bundle
timeout 110 ctest --test-dir build-gpu -L gpu -LE sanitizer -R "GpuCupti|GpuStrict|GpuPipeline|ProfileDriverGpu|GradeGpu.GpuCorpus|GpuTranspose" -j1 --output-on-failure > $LOG/ctest-gpu.log 2>&1
el "gpu suite rc=$?"; tail -4 $LOG/ctest-gpu.log; grep -E "\(Failed\)|\(Timeout\)|Not Run|\*\*\*Skipped" $LOG/ctest-gpu.log | head -30; bundle

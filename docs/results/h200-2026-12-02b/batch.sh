#!/usr/bin/env bash
# Lead's GPU call 1 of 2026-12-02 (second session): merged tree with h-tune, h-splitk, h-lt, h-struct.
set -uo pipefail
LOG=$OUT/logs; mkdir -p $LOG
bundle() { tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $LOG/steps.txt; }
env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $LOG/configure.log 2>&1 || { tail -20 $LOG/configure.log; bundle; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -40
el built; bundle
R=build-gpu/bin/runner
timeout 150 ctest --test-dir build-gpu -L gpu -LE sanitizer -R 'cuda_splitk|cuda_small_tile|cuda_gemv|cuda_dispatch_fp32|cuda_13_wgmma_persistent|cublaslt|SplitKernels|CudaKernelRegistry|split_plans|tile_scheduler|CudaPluginArgs' -j1 --output-on-failure > $LOG/ctest-new.log 2>&1
el newtests; tail -3 $LOG/ctest-new.log; grep -E "\(Failed\)|\(Timeout\)|Not Run" $LOG/ctest-new.log | head -30; bundle
timeout 170 $R --config configs/sweeps/tune-h200.json --dtype fp32 --json $OUT/tune-h200-fp32.json > $LOG/tune-fp32.log 2>&1
el "tune sweep rc=$?"; tail -5 $LOG/tune-fp32.log; bundle
timeout 70 compute-sanitizer --tool memcheck --error-exitcode 1 $R --isolation none --no-calibrate \
  --kernels 'cuda_splitk,cuda_small_tile,cuda_gemv,cuda_dispatch_fp32,cuda_13_wgmma_persistent,cublaslt_fp32,cublaslt_bf16' \
  --dtype fp32,bf16 --shape 517x33x4099 --shape 1x517x3001 --shape 300x520x136 --warmup 0 --repeat 2 > $LOG/memcheck.log 2>&1
el "memcheck rc=$?"; tail -4 $LOG/memcheck.log; bundle
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left $R --config configs/sweeps/h200-tensor.json --json $OUT/tensor.json > $LOG/tensor.log 2>&1
el "tensor rc=$?"; tail -25 $LOG/tensor.log; bundle

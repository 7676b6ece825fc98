#!/usr/bin/env bash
set -uo pipefail
LOG=$OUT/logs; mkdir -p $LOG
env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $LOG/configure.log 2>&1
cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -20
timeout 170 ctest --test-dir build-gpu -L gpu -LE sanitizer -R 'cuda_09_warptiled|cublas_sgemm|cublas_tf32|cublas_bf16|cuda_13_wgmma|cuda_dispatch_fp32|CudaKernelRegistry' -j1 --output-on-failure > $LOG/ctest.log 2>&1
tail -3 $LOG/ctest.log; grep -E "\(Failed\)|\(Timeout\)" $LOG/ctest.log | head

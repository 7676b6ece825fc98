#!/usr/bin/env bash
# Lead's GPU call 2 of 2026-12-03: h-user's GPU sweep defences as root and nobody, the dispatch kernel with the
# table of the four-neighbour model (correctness on the suite's shapes, then the check sweep's fp32 shapes).
set -uo pipefail
LOG=$OUT/logs; mkdir -p $LOG
bundle() { tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $LOG/steps.txt; }
env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKREG_GIT_SHA=${SHA:-unknown} > $LOG/configure.log 2>&1 || { tail -20 $LOG/configure.log; bundle; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -40
el built; bundle
export CXX=/usr/bin/g++
timeout 260 ctest --test-dir build-gpu -R 'GpuSweepDefences|GradeGpu\.HarnessStateAndOutcomeFixturesAsAnUnprivilegedUser' -j1 --output-on-failure > $LOG/ctest-sweep-defences.log 2>&1
el "sweep defences rc=$?"; tail -4 $LOG/ctest-sweep-defences.log; grep -E "\(Failed\)|\(Timeout\)|Not Run|\*\*\*Skipped" $LOG/ctest-sweep-defences.log | head -40; bundle
timeout 60 ctest --test-dir build-gpu -R 'AllCudaKernels.*cuda_dispatch_fp32|Dispatch' -L gpu -j4 --output-on-failure > $LOG/ctest-dispatch.log 2>&1
el "dispatch correctness rc=$?"; tail -3 $LOG/ctest-dispatch.log; grep -E "\(Failed\)|\(Timeout\)" $LOG/ctest-dispatch.log | head; bundle
left=$(( 580 - ($(date +%s) - t0) ))
timeout $left build-gpu/bin/runner --config configs/sweeps/check-h200.json --dtype fp32 \
  --kernels cuda_dispatch_fp32,cuda_09_warptiled,cuda_splitk,cuda_small_tile,cuda_gemv,cublas_sgemm \
  --json $OUT/check-h200-fp32-knn.json --csv $OUT/check-h200-fp32-knn.csv > $LOG/check.log 2>&1
el "check sweep rc=$?"; tail -4 $LOG/check.log; bundle

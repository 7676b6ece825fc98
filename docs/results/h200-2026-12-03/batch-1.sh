#!/usr/bin/env bash
# Lead's GPU call 1 of 2026-12-03: main at c9409c6 (protocol 4), the serial GPU suite and memcheck.
set -uo pipefail
LOG=$OUT/logs; mkdir -p $LOG
bundle() { tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $LOG/steps.txt; }
nvidia-smi -L > $LOG/machine.txt 2>&1
env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKREG_GIT_SHA=${SHA:-unknown} > $LOG/configure.log 2>&1 || { tail -20 $LOG/configure.log; bundle; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -40
el built; bundle
export CXX=/usr/bin/g++
timeout 360 ctest --test-dir build-gpu -L gpu -LE sanitizer -E "^AllCuda|^cmake" -j1 --output-on-failure > $LOG/ctest-gpu.log 2>&1
el "gpu suite rc=$?"; tail -4 $LOG/ctest-gpu.log; grep -E "\(Failed\)|\(Timeout\)|Not Run" $LOG/ctest-gpu.log | head -30; bundle
left=$(( 570 - ($(date +%s) - t0) ))
timeout $left ctest --test-dir build-gpu -R sanitizer_memcheck --output-on-failure > $LOG/sanitizer-memcheck.log 2>&1
el "memcheck rc=$?"; tail -4 $LOG/sanitizer-memcheck.log; bundle

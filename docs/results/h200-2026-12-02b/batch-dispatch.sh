#!/usr/bin/env bash
# Lead GPU call 3: tuning sweep with the corrected lost-record guard, table, check sweep.
set -uo pipefail
LOG=$OUT/logs; mkdir -p $LOG
bundle() { tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $LOG/steps.txt; }
env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $LOG/configure.log 2>&1 || { tail -20 $LOG/configure.log; bundle; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -40
el built
R=build-gpu/bin/runner
timeout 170 $R --config configs/sweeps/tune-h200.json --dtype fp32 --json $OUT/tune-h200-fp32.json > $LOG/tune-fp32.log 2>&1
el "tune sweep rc=$?"; tail -3 $LOG/tune-fp32.log; bundle
mkdir -p configs/dispatch; rm -f configs/dispatch/h200.json
$R tune $OUT/tune-h200-fp32.json --kernels 'cuda_09_warptiled,cuda_splitk,cuda_small_tile,cuda_gemv' --out configs/dispatch/h200.json > $LOG/tune.log 2>&1
el "tune rc=$?"; cat $LOG/tune.log; cp configs/dispatch/h200.json $OUT/h200-table.json
cmake -S . -B build-gpu > $LOG/reconfigure.log 2>&1; cmake --build build-gpu -j16 --target cuda_dispatch_fp32 > $LOG/build-dispatch.log 2>&1; el "dispatch rebuilt rc=$?"
left=$(( 520 - ($(date +%s) - t0) ))
timeout $left $R --config configs/sweeps/check-h200.json --dtype fp32 --json $OUT/check-h200-fp32.json > $LOG/check-fp32.log 2>&1
el "check sweep rc=$?"; tail -4 $LOG/check-fp32.log; bundle
left=$(( 585 - ($(date +%s) - t0) ))

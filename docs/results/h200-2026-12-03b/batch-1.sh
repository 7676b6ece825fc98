#!/usr/bin/env bash
# GPU call 1 of 2026-12-03 (afternoon): the tree the morning left untested on the H200 (e19297b) with the least sampling span (5d78d6e): the m = 1 / n = 1 rows
# tests of the paths h-len moved (profile driver, grading, devices) and of the timer.
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
timeout 60 $R --kernels cuda_gemv,cuda_dispatch_fp32,cuda_small_tile,cublas_sgemm --dtype fp32 --shape 1x4096x4096 \
  --shape 1x3000x5000 --shape 4096x1x4096 --shape 1x6000x1500 --shape 2048x2048x2048 --no-calibrate \
  --json $OUT/gemv-window.json > $LOG/gemv-window.log 2>&1
el "gemv window sweep rc=$?"; tail -3 $LOG/gemv-window.log
python3 -c "
import json
for x in json.load(open('$OUT/gemv-window.json'))['records']:
    kt = (x.get('extra') or {}).get('kernel_time') or {}
    print(x['kernel'], x['m'], x['n'], x['k'], x['status'], 'span', kt.get('span_ms_median'), 'events', kt.get('event_ms_median'),
          'kernels', kt.get('kernels_median'), 'late', kt.get('late_record_calls'), 'no_rec', kt.get('calls_without_records'), 'calls', kt.get('calls'))
" | tee $LOG/gemv-window.txt; bundle
timeout 130 ctest --test-dir build-gpu -L gpu -LE sanitizer -R "GpuCupti|ProfileDriverGpu|ProfileCommandGpu|GradeGpu.GpuCorpus|GpuPipeline|GpuFaults|GpuHarnessState.EveryFixture|GpuStrict|GpuDevices" -j1 --output-on-failure > $LOG/ctest-gpu.log 2>&1
el "gpu suite rc=$?"; tail -4 $LOG/ctest-gpu.log; grep -E "\(Failed\)|\(Timeout\)|Not Run|\*\*\*Skipped" $LOG/ctest-gpu.log | head -30; bundle
bundle
for tool in memcheck racecheck; do
  timeout 170 ctest --test-dir build-gpu -R "sanitizer_$tool" --output-on-failure > $LOG/sanitizer-$tool.log 2>&1
  el "sanitizer $tool rc=$?"; tail -3 $LOG/sanitizer-$tool.log; bundle
done

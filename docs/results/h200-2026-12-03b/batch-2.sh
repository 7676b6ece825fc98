#!/usr/bin/env bash
# GPU call 2 of 2026-12-03 (afternoon): call 1 found the CUPTI timer's flush at start() moved CUPTI's buffer
# request into every timed call (events of a 20 us cuBLAS call read 0.36 ms, two-kernel spans +0.15 ms, two
# side-stream tests failing). This call checks the primer and buffer pool that take it out: the same window
# sweep, the CUPTI/strict/pipeline GPU tests, and the paths h-len moved.
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
timeout 150 $R --kernels cuda_gemv,cuda_dispatch_fp32,cublas_sgemm --dtype fp32 --shape 1x4096x4096 \
  --shape 1x3000x5000 --shape 4096x1x4096 --shape 1x6000x1500 --shape 512x512x512 --shape 2048x2048x2048 \
  --json $OUT/window.json > $LOG/window.log 2>&1
el "window sweep rc=$?"; tail -3 $LOG/window.log
python3 -c "
import json
for x in json.load(open('$OUT/window.json'))['records']:
    kt = (x.get('extra') or {}).get('kernel_time') or {}; s = (x.get('extra') or {}).get('sampling') or {}
    print(x['kernel'], x['m'], x['n'], x['k'], x['status'], 'span', kt.get('span_ms_median'), 'events', kt.get('event_ms_median'),
          'kernels', kt.get('kernels_median'), 'late', kt.get('late_record_calls'), 'no_rec', kt.get('calls_without_records'),
          'calls', kt.get('calls'), 'launch', (x.get('extra') or {}).get('launch_overhead_ms'), 'span_s', s.get('span_s'), s.get('stop'))
" | tee $LOG/window.txt; bundle
timeout 240 ctest --test-dir build-gpu -L gpu -LE sanitizer -R "GpuCupti|GpuStrict|GpuPipeline|ProfileDriverGpu|ProfileCommandGpu|GradeGpu.GpuCorpus|GpuHarnessState.EveryFixture|GpuDevices" -j1 --output-on-failure > $LOG/ctest-gpu.log 2>&1
el "gpu suite rc=$?"; tail -4 $LOG/ctest-gpu.log; grep -E "\(Failed\)|\(Timeout\)|Not Run|\*\*\*Skipped" $LOG/ctest-gpu.log | head -30; bundle

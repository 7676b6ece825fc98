#!/usr/bin/env bash
# GPU call 2 of 2026-12-07, the session's merged tree, in two commands on one warm machine:
#   bash batch-2.sh 1   build; the reduction sweep (sweeps/reduction-h200.json at ten sizes, CUB in the same
#                       run) and its bar; the serial GPU suite but the two published-rubric grading tests
#   bash batch-2.sh 2   the two published-rubric grading tests and the per-kernel correctness cases (AllCuda*)
set -uo pipefail
part=${1:-1}
LOG=$OUT/logs; mkdir -p $LOG
bundle() { tar -czf "$OUT/logs-$part.tar.gz" -C "$OUT" logs; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $LOG/steps-$part.txt; }
export CXX=/usr/bin/g++
R=build-gpu/bin/runner
rubrics='^GradeGpu\.ThePublished'
if [[ $part == 1 ]]; then
    { nvidia-smi; nvcc --version; } > $LOG/machine.txt 2>&1
    env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKREG_GIT_SHA=${SHA:-unknown} > $LOG/configure.log 2>&1 || { tail -20 $LOG/configure.log; bundle; exit 1; }
    cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -40
    el built; bundle
    timeout 170 $R --config sweeps/reduction-h200.json --sizes 1,33,257,1000003,1048576,4194304,16777216,67108864,67108865,268435456 \
      --json $OUT/reduction-h200.json --csv $OUT/reduction-h200.csv > $LOG/reduction-sweep.log 2>&1
    el "reduction sweep rc=$?"; tail -3 $LOG/reduction-sweep.log
    python3 - $OUT/reduction-h200.json <<'PY' | tee $LOG/bar.txt
import json, sys
report = json.load(open(sys.argv[1]))
print("copy bandwidth:", report.get("meta", {}).get("gpu", {}).get("ceilings", {}).get("dram_copy_gbps"), "GB/s")
rows = [r for r in report["records"] if r.get("status") == "ok" and r["n"] >= 1 << 20]
for n in sorted({r["n"] for r in rows}):
    at = sorted((r["extra"]["roofline"].get("fraction_of_copy_bandwidth", 0), r["kernel"]) for r in rows if r["n"] == n)
    print(n, " ".join(f"{k}={f:.3f}" for f, k in sorted(at, key=lambda t: t[1])))
PY
    bundle
    timeout 300 ctest --test-dir build-gpu -L gpu -LE sanitizer -E "^AllCuda|$rubrics" -j1 --output-on-failure > $LOG/ctest-gpu.log 2>&1
    el "serial gpu suite rc=$?"; tail -4 $LOG/ctest-gpu.log; grep -E "\(Failed\)|\(Timeout\)|Not Run|\*\*\*Skipped" $LOG/ctest-gpu.log | head -30
    bundle
else
    timeout 120 ctest --test-dir build-gpu -L gpu -LE sanitizer -R "^AllCuda" -j4 --output-on-failure > $LOG/ctest-gpu-kernels.log 2>&1
    el "AllCuda rc=$?"; tail -3 $LOG/ctest-gpu-kernels.log; grep -E "\(Failed\)|\(Timeout\)" $LOG/ctest-gpu-kernels.log | head; bundle
    timeout 280 ctest --test-dir build-gpu -L gpu -R "$rubrics" -j1 --output-on-failure > $LOG/ctest-gpu-rubrics.log 2>&1
    el "rubric grading tests rc=$?"; tail -4 $LOG/ctest-gpu-rubrics.log; bundle
fi

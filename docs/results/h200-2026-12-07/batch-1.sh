#!/usr/bin/env bash
# GPU call 1 of 2026-12-07 (SKIP_SWEEP=1 leaves the sweep out: an H100 ran it so, when no H200 came): the reduction lab's open measurements and racecheck to its end, on main as the
# session found it plus the sanitizer script that runs reductions and several kernels at a time.
# build; reduction kernel tests; compute-sanitizer racecheck and memcheck over every CUDA kernel of the
# registry (10 and 4 at a time); the published reduction sweep with CUB in the same run and the 0.9 bar;
# the published reduction rubric graded on the GPU.
set -uo pipefail
LOG=$OUT/logs; mkdir -p $LOG
bundle() { tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs; }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $LOG/steps.txt; }
{ nvidia-smi; nvcc --version; } > $LOG/machine.txt 2>&1
env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKREG_GIT_SHA=${SHA:-unknown} > $LOG/configure.log 2>&1 || { tail -20 $LOG/configure.log; bundle; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $LOG/build.log 2>&1 || grep -E "error|FAILED" -A5 $LOG/build.log | head -40
el built; bundle
export CXX=/usr/bin/g++
R=build-gpu/bin/runner
timeout 60 build-gpu/bin/reduction_kernels_test > $LOG/reduction_kernels_test.log 2>&1
el "reduction_kernels_test rc=$?"; tail -2 $LOG/reduction_kernels_test.log; bundle
# Both sanitizers at once over the whole registry (GEMMs at 67x45x33, transposes through the driver, reductions
# at n = 1, 257, 1000003).
KREG_SANITIZER_JOBS=10 timeout 230 tests/sanitizer/run_sanitizer.sh racecheck $R $LOG/racecheck > $LOG/racecheck.txt 2>&1 &
rp=$!
KREG_SANITIZER_JOBS=4 timeout 230 tests/sanitizer/run_sanitizer.sh memcheck $R $LOG/memcheck > $LOG/memcheck.txt 2>&1
el "memcheck rc=$?"; grep -c "^ok" $LOG/memcheck.txt; grep "^FAIL" $LOG/memcheck.txt | head
wait $rp; el "racecheck rc=$?"; grep -c "^ok" $LOG/racecheck.txt; grep "^FAIL" $LOG/racecheck.txt | head
rm -f $LOG/racecheck/*.json $LOG/racecheck/*.csv $LOG/memcheck/*.json $LOG/memcheck/*.csv; bundle
if [[ -z ${SKIP_SWEEP:-} ]]; then
timeout 190 $R --config sweeps/reduction-h200.json --json $OUT/reduction-h200.json --csv $OUT/reduction-h200.csv > $LOG/reduction-sweep.log 2>&1
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
fi
timeout 100 build-gpu/bin/grade_gpu_test --gtest_filter='GradeGpu.ThePublishedReductionRubric*' > $LOG/grade-reduction.log 2>&1
el "grade reduction rc=$?"; tail -3 $LOG/grade-reduction.log; bundle

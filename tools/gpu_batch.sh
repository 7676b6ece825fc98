#!/usr/bin/env bash
# One call on the GPU machine: configure, build, GPU tests, compute-sanitizer, a sweep; everything
# that matters lands in $OUT (at most 8 files come back, so logs are bundled).
#
#   bash tools/gpu_batch.sh [sweep-config] [extra runner args...]
#
# Steps can be skipped with KREG_SKIP="tests sanitizer sweep". A carried GoogleTest (see README,
# "Running on a GPU machine") is used when the machine has none.
set -uo pipefail
OUT=${OUT:-/tmp/kreg-out}
mkdir -p "$OUT/logs"
LOG=$OUT/logs
config=${1:-sweeps/h200.json}
shift || true
skip=" ${KREG_SKIP:-} "
arch=${KREG_CUDA_ARCH:-90}
build=${KREG_BUILD_DIR:-build-gpu}
prefix_path=()
[[ -d .carry/gtest ]] && prefix_path=(-DCMAKE_PREFIX_PATH="$PWD/.carry/gtest")

step() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

step "machine"
{ nvidia-smi; nvcc --version; uname -a; nproc; } >"$LOG/machine.txt" 2>&1
head -20 "$LOG/machine.txt"

step "configure + build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" "${prefix_path[@]}" \
    >"$LOG/configure.log" 2>&1 || { tail -30 "$LOG/configure.log"; exit 1; }
# Keep going past a target that fails: the rest can still be tested.
cmake --build "$build" -j"$(nproc)" -- -k 0 >"$LOG/build.log" 2>&1 || grep -E "error|FAILED" -A5 "$LOG/build.log" | head -60
echo "build finished"

if [[ $skip != *" tests "* ]]; then
    step "GPU tests (ctest -L gpu -LE sanitizer)"
    timeout 300 ctest --test-dir "$build" -L gpu -LE sanitizer -j4 --output-on-failure >"$LOG/ctest-gpu.log" 2>&1
    tail -5 "$LOG/ctest-gpu.log"
    grep -E "\(Failed\)|\(Timeout\)|Not Run" "$LOG/ctest-gpu.log" | head -30
fi

if [[ $skip != *" sanitizer "* ]]; then
    step "compute-sanitizer memcheck + racecheck"
    timeout 420 ctest --test-dir "$build" -L sanitizer -j2 --output-on-failure >"$LOG/sanitizer.log" 2>&1
    grep -E "^(ok|FAIL) |SKIP|tests passed|Failed|Passed" "$LOG/sanitizer.log" | head -60
fi

if [[ $skip != *" sweep "* ]]; then
    step "sweep $config"
    start=$(date +%s)
    timeout 480 "$build/bin/runner" --config "$config" --json "$OUT/report.json" --csv "$OUT/report.csv" "$@" \
        >"$LOG/sweep.out" 2>"$LOG/sweep.err"
    echo "runner exit $? after $(( $(date +%s) - start )) s"
    cat "$LOG/sweep.out" | tail -120
    tail -3 "$LOG/sweep.err"
fi

tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOG"

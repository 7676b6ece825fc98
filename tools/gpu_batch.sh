#!/usr/bin/env bash
# One call on the GPU machine: configure, build, GPU tests, compute-sanitizer, a sweep; everything
# that matters lands in $OUT (at most 8 files come back, so logs are bundled).
#
#   bash tools/gpu_batch.sh [sweep-config] [extra runner args...]
#
# Steps can be skipped with KREG_SKIP="confine tests cupti sweep compare devices tensor transpose default grade lab3 lab sanitizer reportbench". A carried GoogleTest (see docs/CONTRIBUTING.md,
# "Running on a GPU machine") is used when the machine has none.
# KREG_PROFILE_BLOCKS="7 9": the blocks the transpose step profiles with ncu (default 1..20).
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
# Logs travel back as one archive (few files may come back), refreshed after every step so that a
# call cut short still returns what ran.
bundle() { tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs; }
trap 'bundle; rm -rf "$LOG"' EXIT  # only the archive and the reports travel back

step "machine"
{ nvidia-smi; nvcc --version; uname -a; nproc; env | grep -iE "flags|^CC=|^CXX=" ; command -v g++ c++;
  ls /opt/gcc/lib64 2>/dev/null | grep -E "stdc" ; } >"$LOG/machine.txt" 2>&1
head -20 "$LOG/machine.txt"

step "configure + build"
# The image's default compiler (/opt/gcc) links libstdc++ statically into every plugin, and that copy
# imports syscall, which the grading audit refuses; the system compiler links it dynamically.
compiler=()
[[ -x /usr/bin/g++ && ${KREG_SYSTEM_COMPILER:-1} == 1 ]] && compiler=(-DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++)
# A snapshot without .git (git archive) names its commit through KREG_GIT_SHA, so its reports say it.
sha=(); [[ -n ${KREG_GIT_SHA:-} ]] && sha=(-DKREG_GIT_SHA="$KREG_GIT_SHA")
env -u LDFLAGS cmake -S . -B "$build" -G Ninja "${compiler[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" "${prefix_path[@]}" "${sha[@]}" \
    >"$LOG/configure.log" 2>&1 || { tail -30 "$LOG/configure.log"; exit 1; }
# Keep going past a target that fails: the rest can still be tested.
cmake --build "$build" -j"$(nproc)" -- -k 0 >"$LOG/build.log" 2>&1 || grep -E "error|FAILED" -A5 "$LOG/build.log" | head -60
echo "build finished"

if [[ $skip != *" confine "* ]]; then
    step "confinement and grading tests that need no GPU, on this machine's kernel and cgroup v2, as root"
    # Source-folder submissions are built with CXX from the environment: the system compiler, as above.
    [[ -x /usr/bin/g++ ]] && export CXX=/usr/bin/g++
    timeout 240 ctest --test-dir "$build" -R "Sandbox|WorkerProtocol|Confined|WorkerCgroup|MemoryLimit|^Grade\\.|GradeAttack" \
        -LE gpu -j4 --output-on-failure >"$LOG/ctest-confine.log" 2>&1
    tail -5 "$LOG/ctest-confine.log"
    grep -E "\(Failed\)|\(Timeout\)|Not Run|Skipped" "$LOG/ctest-confine.log" | head -30
    bundle
fi

if [[ $skip != *" tests "* ]]; then
    step "GPU tests (ctest -L gpu -LE sanitizer)"
    # Serial: the strict-mode timing cross-check reads GPU time-slicing between test processes as escaped work.
    # The per-kernel correctness cases (AllCuda*: hundreds, no timing) run four at a time afterwards.
    if [[ $skip != *" serialtests "* ]]; then
        timeout 300 ctest --test-dir "$build" -L gpu -LE sanitizer -E "^AllCuda" -R "${KREG_CTEST_FILTER:-.}" -j1 --output-on-failure \
            >"$LOG/ctest-gpu.log" 2>&1
        tail -5 "$LOG/ctest-gpu.log"
        grep -E "\(Failed\)|\(Timeout\)|Not Run|Error" "$LOG/ctest-gpu.log" | head -30
    fi
    timeout 300 ctest --test-dir "$build" -L gpu -LE sanitizer -R "^AllCuda" -j4 --output-on-failure >"$LOG/ctest-gpu-kernels.log" 2>&1
    tail -5 "$LOG/ctest-gpu-kernels.log"
    grep -E "\(Failed\)|\(Timeout\)|Not Run|Error" "$LOG/ctest-gpu-kernels.log" | head -30
    bundle
fi

if [[ $skip != *" cupti "* ]]; then
    step "CUPTI timer against ncu (cuBLAS bf16/fp32 512-8192^3), then $config at 1024^3 under both timers"
    timeout 540 python3 tools/cupti_vs_ncu.py --build "$build" --out "$LOG/cupti" >"$LOG/cupti-vs-ncu.txt" 2>"$LOG/cupti-vs-ncu.err"
    echo "cupti_vs_ncu exit $? (0: every shape within 3 %)"; cat "$LOG/cupti-vs-ncu.txt"; tail -3 "$LOG/cupti-vs-ncu.err"
    for timer in cupti events; do
        timeout 300 "$build/bin/runner" --config "$config" --sizes 1024 --timer "$timer" --force \
            --json "$LOG/lab1024-$timer.json" >"$LOG/lab1024-$timer.out" 2>&1
        echo "$config at 1024^3, --timer $timer: exit $?"; grep -E "^(cuda|cublas)" "$LOG/lab1024-$timer.out" | head -40
    done
    bundle
fi

if [[ $skip != *" sweep "* ]]; then
    step "sweep $config"
    start=$(date +%s)
    timeout 300 "$build/bin/runner" --config "$config" --json "$OUT/report.json" --csv "$OUT/report.csv" "$@" \
        >"$LOG/sweep.out" 2>"$LOG/sweep.err"
    echo "runner exit $? after $(( $(date +%s) - start )) s"
    cat "$LOG/sweep.out" | tail -120
    tail -3 "$LOG/sweep.err"
    bundle
fi

if [[ $skip != *" compare "* && $skip != *" sweep "* ]]; then
    step "runner compare: the same sweep again (expect every row same), then cuda_09_warptiled made 3 % slower"
    timeout 300 "$build/bin/runner" --config "$config" --json "$OUT/report-b.json" --csv "$LOG/report-b.csv" "$@" \
        >"$LOG/sweep-b.out" 2>"$LOG/sweep-b.err"
    echo "second sweep exit $?"
    "$build/bin/runner" compare "$OUT/report.json" "$OUT/report-b.json" --json "$LOG/compare-same.json" >"$LOG/compare-same.out" 2>&1
    echo "runner compare A B exit $? (0: no regression)"; tail -4 "$LOG/compare-same.out"
    # The slowed copy replaces the real plugin; cuBLAS stays for the config's baseline.
    timeout 120 "$build/bin/runner" --config "$config" --kernels cuda_09_warptiled --no-default-plugins \
        --plugin "$build/tests/fixture-plugins/fixture_cuda_09_slowed.so" --plugin "$build/lib/kreg/plugins/cublas_reference.so" \
        --json "$LOG/report-slowed.json" --csv "$LOG/report-slowed.csv" "$@" >"$LOG/sweep-slowed.out" 2>&1
    echo "slowed sweep exit $?"
    "$build/bin/runner" compare "$OUT/report.json" "$LOG/report-slowed.json" --threshold 2% --json "$LOG/compare-slowed.json" \
        >"$LOG/compare-slowed.out" 2>&1
    echo "runner compare A slowed --threshold 2% exit $? (1: regression)"; grep -E "slower|faster|status" "$LOG/compare-slowed.out" | head -20
    tail -3 "$LOG/compare-slowed.out"
    bundle
fi

if [[ $skip != *" reportbench "* ]]; then
    # CPU only: started now, in the background, on cores the GPU steps leave idle; read at the end.
    (bash tools/bench_report_writing.sh "$build" "${KREG_BENCH_ROWS:-100000}" >"$LOG/reportbench.out" 2>&1; echo "exit $?" >>"$LOG/reportbench.out") &
    reportbench_pid=$!
fi

if [[ $skip != *" devices "* && $skip != *" sweep "* ]]; then
    step "the same sweep on every GPU at once (--devices all), compared with the single-GPU run"
    start=$(date +%s)
    timeout 300 "$build/bin/runner" --config "$config" --devices all --json "$OUT/report-devices.json" --csv "$LOG/report-devices.csv" "$@" \
        >"$LOG/sweep-devices.out" 2>"$LOG/sweep-devices.err"
    echo "runner --devices all exit $? after $(( $(date +%s) - start )) s"
    grep -E "^runner: device" "$LOG/sweep-devices.err"; tail -2 "$LOG/sweep-devices.err"
    "$build/bin/runner" compare "$OUT/report.json" "$OUT/report-devices.json" --json "$LOG/compare-devices.json" >"$LOG/compare-devices.out" 2>&1
    echo "runner compare single all-devices exit $? (0: no regression)"; tail -4 "$LOG/compare-devices.out"
    bundle
fi

if [[ $skip != *" tensor "* ]]; then
    step "tensor-core sweep sweeps/h200-tensor.json (bf16, tf32 against their cuBLAS kernels)"
    start=$(date +%s)
    timeout 300 "$build/bin/runner" --config sweeps/h200-tensor.json --force --json "$OUT/tensor.json" --csv "$LOG/tensor.csv" \
        >"$LOG/tensor.out" 2>"$LOG/tensor.err"
    echo "runner exit $? after $(( $(date +%s) - start )) s"; grep -E "^(cuda|cublas)" "$LOG/tensor.out" | grep -v skipped | head -80
    tail -3 "$LOG/tensor.err"
    bundle
fi

if [[ $skip != *" transpose "* ]]; then
    step "transpose sweeps (transpose-h200.json, block-transpose-h200.json) and the bank-conflict profile of every block 1-20"
    start=$(date +%s)
    timeout 240 "$build/bin/runner" --config sweeps/transpose-h200.json --force --json "$OUT/transpose.json" --csv "$LOG/transpose.csv" \
        >"$LOG/transpose.out" 2>"$LOG/transpose.err"
    echo "runner (transpose) exit $? after $(( $(date +%s) - start )) s"; grep -E "^cuda" "$LOG/transpose.out" | head -60; tail -3 "$LOG/transpose.err"
    start=$(date +%s)
    timeout 240 "$build/bin/runner" --config sweeps/block-transpose-h200.json --force --json "$OUT/block-transpose.json" \
        --csv "$LOG/block-transpose.csv" >"$LOG/block-transpose.out" 2>"$LOG/block-transpose.err"
    echo "runner (block transpose) exit $? after $(( $(date +%s) - start )) s"; grep -cE " ok " "$LOG/block-transpose.out"; tail -3 "$LOG/block-transpose.err"
    # ncu needs a shape that is a multiple of the block: each block at the largest square multiple <= 4096.
    for b in ${KREG_PROFILE_BLOCKS:-$(seq 1 20)}; do
        s=$(( 4096 / b * b ))
        timeout 60 "$build/bin/runner" --profile --kernels 'cuda_block_transpose*' --blocks "$b" --shape "${s}x${s}" 2>&1 \
            | grep -E "^cuda_block_transpose" >>"$LOG/profile-blocks.out"
    done
    echo "ncu per block:"; cat "$LOG/profile-blocks.out"
    bundle
fi

if [[ $skip != *" default "* ]]; then
    step "built-in default sweep (runner, no arguments)"
    (mkdir -p /tmp/kreg-default && cd /tmp/kreg-default && timeout 120 "$OLDPWD/$build/bin/runner" >"$LOG/default.out" 2>"$LOG/default.err")
    echo "runner exit $?"; tail -3 "$LOG/default.out"; grep -c " ok " "$LOG/default.out"
    bundle
fi

if [[ $skip != *" grade "* ]]; then
    step "grade: the GPU half (honest kernels, GPU faults and cheats) with tests/data/grading/gpu-demo-rubric.json"
    subs=/tmp/kreg-gpu-subs; rm -rf "$subs"; mkdir -p "$subs"
    plugins=$build/lib/kreg/plugins fixtures=$build/tests/fixture-plugins
    cp "$plugins/cuda_09_warptiled.so" "$subs/warptiled.so"; cp "$plugins/cuda_01_naive.so" "$subs/naive.so"
    for f in fixture_illegal_address fixture_infinite_kernel fixture_cuda_writes_past_c cheat_cuda_other_stream \
             cheat_cuda_caches cheat_cuda_modifies_input cheat_cuda_big_shapes cheat_calls_cublas cheat_pins_l2 \
             honest_cuda; do cp "$fixtures/$f.so" "$subs/$f.so"; done
    timeout 400 "$build/bin/runner" grade --rubric tests/data/grading/gpu-demo-rubric.json --submissions "$subs" \
        --out "$OUT/logs/grades" --allow-static-libstdcxx >"$LOG/grade.out" 2>"$LOG/grade.err"
    echo "runner grade exit $?"; cat "$LOG/grade.out"; grep -E "^\[" "$LOG/grade.err" | cut -c1-220
    bundle
fi

if [[ $skip != *" lab3 "* ]]; then
    step "grade: the CUDA student template as a source folder, with the published grading/lab3.json"
    # Built by the grader inside the sandbox against this build tree, exactly as a submitted folder is.
    subs=/tmp/kreg-lab3-subs; rm -rf "$subs"; mkdir -p "$subs"
    cp -r plugins/template_cuda "$subs/template_cuda"
    timeout 400 "$build/bin/runner" grade --rubric grading/lab3.json --submissions "$subs" \
        --out "$OUT/logs/grades-lab3" --allow-static-libstdcxx >"$LOG/lab3.out" 2>"$LOG/lab3.err"
    echo "runner grade exit $?"; cat "$LOG/lab3.out"; grep -E "^\[" "$LOG/lab3.err" | cut -c1-300
    bundle
fi

if [[ $skip != *" lab "* ]]; then
    step "--stress and --profile"
    timeout 60 "$build/bin/runner" --stress 3 --kernels cuda_09_warptiled --shape 4096x4096x4096 --no-calibrate \
        --json "$LOG/stress.json" --csv "$LOG/stress.csv" >"$LOG/stress.out" 2>&1; echo "stress exit $?"; tail -3 "$LOG/stress.out"
    timeout 60 "$build/bin/runner" --profile --isolation none --kernels 'cuda_0[79]*' --shape 2048x2048x2048 --no-calibrate \
        --json "$LOG/profile.json" --csv "$LOG/profile.csv" >"$LOG/profile.out" 2>&1; echo "profile exit $?"; tail -4 "$LOG/profile.out"
    # The bank-conflict table under ncu (runner --profile without --isolation none).
    timeout 400 "$build/bin/runner" --profile --kernels 'cuda_03_*,cuda_t*,cuda_copy' \
        --shape 2048x2048x2048 --shape 8192x8192 >"$LOG/profile-ncu.out" 2>&1; echo "profile (ncu) exit $?"; cat "$LOG/profile-ncu.out"
    bundle
fi

if [[ $skip != *" sanitizer "* ]]; then
    step "compute-sanitizer memcheck + racecheck"
    timeout 200 ctest --test-dir "$build" -L sanitizer -j4 --output-on-failure >"$LOG/sanitizer.log" 2>&1
    grep -E "^(ok|FAIL) |SKIP|tests passed|Failed|Passed" "$LOG/sanitizer.log" | head -60
    bundle
fi

if [[ -n ${reportbench_pid:-} ]]; then
    step "report writing in a ${KREG_BENCH_ROWS:-100000}-row CPU sweep (tools/bench_report_writing.sh)"
    timeout 900 tail --pid="$reportbench_pid" -f /dev/null
    cat "$LOG/reportbench.out"
    bundle
fi

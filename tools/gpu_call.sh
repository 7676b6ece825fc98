#!/usr/bin/env bash
# Sourced by a GPU call's script (docs/results/<day>/batch*.sh), which runs on the device machine in the tree it
# measures, with $OUT the folder whose files come back:
#   source tools/gpu_call.sh PART   logs in $OUT/logs, bundled into $OUT/logs-PART.tar.gz by `bundle`
#                                   (few files come back, so logs travel as one archive, refreshed after each step);
#                                   `el WHAT` logs a step with the seconds since the call began
#   gpu_call_build [TARGET...]      configures build-gpu (Release, sm_90, system g++, KREG_GIT_SHA=$SHA) and builds
#                                   the targets given, or everything; the machine's facts go to machine.txt
# R is the runner it builds. Run by itself, it says how to use it.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0" >&2
    echo "tools/gpu_call.sh is sourced by a GPU call's script, not run: source tools/gpu_call.sh PART" >&2
    exit 2
fi
gpu_call_part=${1:-1}
LOG=$OUT/logs
mkdir -p "$LOG"
gpu_call_t0=$(date +%s)
bundle() { tar -czf "$OUT/logs-$gpu_call_part.tar.gz" -C "$OUT" logs; }
el() { echo "[$(( $(date +%s) - gpu_call_t0 )) s] $*" | tee -a "$LOG/steps-$gpu_call_part.txt"; }
gpu_call_elapsed() { echo $(( $(date +%s) - gpu_call_t0 )); }
export CXX=/usr/bin/g++
R=build-gpu/bin/runner

gpu_call_build() {
    local targets=()
    (( $# )) && targets=(--target "$@")
    { nvidia-smi; nvcc --version; ncu --version; } > "$LOG/machine.txt" 2>&1
    env -u LDFLAGS cmake -S . -B build-gpu -G Ninja -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DKREG_GIT_SHA="${SHA:-unknown}" > "$LOG/configure.log" 2>&1 ||
        { tail -20 "$LOG/configure.log"; bundle; return 1; }
    cmake --build build-gpu -j16 "${targets[@]}" -- -k 0 > "$LOG/build.log" 2>&1 ||
        grep -E "error|FAILED" -A5 "$LOG/build.log" | head -40
    el built
    bundle
}

#!/usr/bin/env bash
# Runs every CUDA kernel in the registry once, at a small odd shape, under compute-sanitizer TOOL.
# Exit 0: every kernel clean and ok; 1: a sanitizer error or a bad row; 77: skipped (no GPU, no
# compute-sanitizer), with the reason printed.
set -uo pipefail
tool=$1 runner=$2 work=$3
shape=${KREG_SANITIZER_SHAPE:-67x45x33}
# KREG_SANITIZER_KERNELS: an extended regex; only kernels whose name matches it run (a GPU batch that
# changed a few kernels checks those, at more shapes, without the whole registry's minutes).
only=${KREG_SANITIZER_KERNELS:-}
mkdir -p "$work"

sanitizer=$(command -v compute-sanitizer || true)
[[ -z $sanitizer && -x /usr/local/cuda/bin/compute-sanitizer ]] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [[ -z $sanitizer ]]; then echo "SKIP: compute-sanitizer not found"; exit 77; fi

# The registry is the single list of kernels: take the CUDA ones that can run here.
"$runner" --list --format json > "$work/list.json" || { echo "runner --list failed"; exit 1; }
# One line per kernel: "name dtypes operation max_block path" (the sanitized runner loads only that
# kernel's plugin and runs every dtype the kernel declares: tensor-core kernels have no fp32 path).
mapfile -t kernels < <(python3 - "$work/list.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
cuda = [k for k in doc["kernels"] if k["backend"] == "cuda"]
# Transposes run in `runner __profile_driver`, so the sweep pipeline's "does not measure ... yet" is no reason
# to leave them out here -- where some CUDA kernel can run at all (else that reason hides "no CUDA device").
device = any(not k["unavailable_reason"] for k in cuda)
for k in cuda:
    why = k["unavailable_reason"]
    if not why or (device and k.get("operation", "gemm") != "gemm" and "does not measure" in why):
        print(k["name"], ",".join(k["dtypes"]), k.get("operation", "gemm"), k.get("max_block", 0) or 0, k["plugin_path"])
PY
)
if [[ ${#kernels[@]} -eq 0 ]]; then
    reason=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[k["unavailable_reason"] for k in d["kernels"] if k["backend"]=="cuda"]; print(r[0] if r else "no CUDA kernels built")' "$work/list.json")
    echo "SKIP: no CUDA kernel can run here: $reason"
    exit 77
fi

# GEMMs run through the runner (its pipeline: poisoned, padded buffers) at the --shape above. Transposes and
# block transposes run through `runner __profile_driver`, one call per run, every matrix allocated exactly
# (rows x leading dimension), so a read or write past it is outside the allocation: transposes at an odd
# shape, an aligned one (the 16-byte paths) and one with padded leading dimensions; block transposes at
# every block the kernel accepts up to 20 (the lecture's range), on a 3b x 2b matrix with lda = 2b + 1.
runs_of() {  # operation max_block -> one line of driver arguments per run
    case $1 in
        transpose)
            echo "--m 67 --n 45 --k 0 --block 0"
            echo "--m 64 --n 128 --k 0 --block 0"
            echo "--m 67 --n 45 --k 0 --block 0 --lda 48 --ldb 70" ;;
        block_transpose)
            local top=$2 b
            [[ $top -le 0 || $top -gt 20 ]] && top=20
            for ((b = 1; b <= top; b++)); do echo "--m $((3 * b)) --n $((2 * b)) --k 0 --block $b --lda $((2 * b + 1))"; done ;;
    esac
}

# One kernel under the sanitizer; its log in $work/$tool-$k.log, its verdict line in $work/$tool-$k.verdict.
# GEMMs run through the runner at --shape; operations with no driver runs above (a reduction, and any
# operation added later) run through the runner at KREG_SANITIZER_SIZES, each size given to every size key of
# the operation's row. An operation that would run nothing is a failure, never a silent "ok".
sanitize_one() {
    local k=$1 dtypes=$2 operation=$3 max_block=$4 plugin=$5
    local log="$work/$tool-$k.log" rc
    local -a runner_args=(--isolation none --no-default-plugins --plugin "$plugin" --kernels "$k" --dtype "$dtypes"
        --repeat 1 --warmup 0 --no-calibrate --json "$work/$tool-$k.json" --csv "$work/$tool-$k.csv")
    local driver_runs
    driver_runs=$(runs_of "$operation" "$max_block")
    if [[ $operation == gemm ]]; then
        "$sanitizer" --tool "$tool" --error-exitcode 9 "$runner" "${runner_args[@]}" --shape "$shape" >"$log" 2>&1
        rc=$?
    elif [[ -z $driver_runs ]]; then
        "$sanitizer" --tool "$tool" --error-exitcode 9 "$runner" "${runner_args[@]}" --operation "$operation" \
            --sizes "$sizes" >"$log" 2>&1
        rc=$?
    else
        rc=0
        : >"$log"
        while read -r -a run; do
            echo "== ${run[*]}" >>"$log"
            "$sanitizer" --tool "$tool" --error-exitcode 9 \
                "$runner" __profile_driver --plugin "$plugin" --kernel "$k" --operation "$operation" "${run[@]}" \
                </dev/null >>"$log" 2>&1
            local r=$?
            [[ $r -ne 0 ]] && rc=$r && echo "== exit $r" >>"$log"
        done <<<"$driver_runs"
    fi
    local summary
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    if [[ $rc -eq 0 && -z $summary ]]; then
        rc=1
        summary="no sanitizer summary in $log: nothing ran under $tool"
    fi
    if [[ $rc -ne 0 ]]; then
        { echo "FAIL $tool $k (exit $rc): ${summary:-see $log}"; tail -20 "$log"; } >"$work/$tool-$k.verdict"
    else
        echo "ok   $tool $k: $summary" >"$work/$tool-$k.verdict"
    fi
}

# KREG_SANITIZER_JOBS kernels at a time (default 1): each is its own process on the one GPU, which racecheck's
# minutes per kernel make worth it on a machine with cores to spare.
jobs=${KREG_SANITIZER_JOBS:-1}
sizes=${KREG_SANITIZER_SIZES:-1,257,1000003}
ran=()
for entry in "${kernels[@]}"; do
    read -r k dtypes operation max_block plugin <<<"$entry"
    [[ -n $only && ! $k =~ $only ]] && continue
    ran+=("$k")
    rm -f "$work/$tool-$k.verdict"
    sanitize_one "$k" "$dtypes" "$operation" "$max_block" "$plugin" &
    while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
done
wait
if [[ ${#ran[@]} -eq 0 ]]; then echo "FAIL: no CUDA kernel matches KREG_SANITIZER_KERNELS='$only'"; exit 1; fi
failed=0
for k in "${ran[@]}"; do
    if [[ -f "$work/$tool-$k.verdict" ]]; then cat "$work/$tool-$k.verdict"; else echo "FAIL $tool $k: no verdict"; fi
    grep -q "^ok " "$work/$tool-$k.verdict" 2>/dev/null || failed=1
done
exit $failed

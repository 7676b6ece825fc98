#!/usr/bin/env bash
# Runs every CUDA kernel in the registry once, at a small odd shape, under compute-sanitizer TOOL.
# Exit 0: every kernel clean and ok; 1: a sanitizer error or a bad row; 77: skipped (no GPU, no
# compute-sanitizer), with the reason printed.
set -uo pipefail
tool=$1 runner=$2 work=$3
shape=${KREG_SANITIZER_SHAPE:-67x45x33}
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
for k in doc["kernels"]:
    if k["backend"] == "cuda" and not k["unavailable_reason"]:
        print(k["name"], ",".join(k["dtypes"]), k.get("operation", "gemm"), k.get("max_block", 0) or 0, k["plugin_path"])
PY
)
if [[ ${#kernels[@]} -eq 0 ]]; then
    reason=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[k["unavailable_reason"] for k in d["kernels"] if k["backend"]=="cuda"]; print(r[0] if r else "no CUDA kernels built")' "$work/list.json")
    echo "SKIP: no CUDA kernel can run here: $reason"
    exit 77
fi

# What each operation runs: GEMMs the --shape above; transposes an odd shape and an aligned one (the
# 16-byte paths) from a config; block transposes every block the kernel accepts, up to 20 (the lecture's
# range), on a 3b x 2b matrix each.
shape_args() {  # operation max_block kernel -> the runner's shape arguments
    case $1 in
        transpose)
            printf '{"operation": "transpose", "kernels": ["%s"], "shapes": [{"m": 67, "n": 45}, {"m": 64, "n": 128}]}' "$3" \
                > "$work/$3.config.json"
            echo --config "$work/$3.config.json" ;;
        block_transpose)
            local top=$2 b shapes=""
            [[ $top -le 0 || $top -gt 20 ]] && top=20
            for ((b = 1; b <= top; b++)); do shapes+="${shapes:+, }{\"m\": $((3 * b)), \"n\": $((2 * b)), \"block\": $b}"; done
            printf '{"operation": "block_transpose", "kernels": ["%s"], "shapes": [%s]}' "$3" "$shapes" > "$work/$3.config.json"
            echo --config "$work/$3.config.json" ;;
        *) echo --shape "$shape" ;;
    esac
}

failed=0
for entry in "${kernels[@]}"; do
    read -r k dtypes operation max_block plugin <<<"$entry"
    log="$work/$tool-$k.log"
    # shellcheck disable=SC2046  # shape_args prints separate words on purpose
    "$sanitizer" --tool "$tool" --error-exitcode 9 \
        "$runner" --isolation none --no-default-plugins --plugin "$plugin" --kernels "$k" --dtype "$dtypes" \
        $(shape_args "$operation" "$max_block" "$k") \
        --repeat 1 --warmup 0 --no-calibrate \
        --json "$work/$tool-$k.json" --csv "$work/$tool-$k.csv" >"$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    if [[ $rc -ne 0 ]]; then
        echo "FAIL $tool $k (exit $rc): ${summary:-see $log}"
        tail -20 "$log"
        failed=1
    else
        echo "ok   $tool $k: $summary"
    fi
done
exit $failed

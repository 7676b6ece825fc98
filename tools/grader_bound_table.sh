#!/bin/bash
# The grader's CPU bound against the true median, at every tier shape of configs/grading/cpu-lab.json (the
# only published CPU rubric): grades cpu_naive, cpu_blocked, the student template (plugins/template, built
# here with the SDK's headers as kreg_add_plugin would) and the timer-tampering fixture, then prints, for
# every performance round of every tier shape, the row's claimed median (an honest kernel's timer is
# honest: its claim is its true median), the grader's bound, bound / claimed, the allowance and its error.
#
#   tools/grader_bound_table.sh BUILD [busy]
#
# busy: two busy loops (one per core of the 2-core machine) run beside the grading. Needs python3.
set -eu
build=$(cd "${1:?usage: grader_bound_table.sh BUILD [busy]}" && pwd)
load=${2:-}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/kreg-bound-XXXXXX)
trap 'for p in ${busy_pids:-}; do kill "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

mkdir -p "$work/subs"
cp "$build/lib/kreg/plugins/cpu_naive.so" "$work/subs/naive.so"
cp "$build/lib/kreg/plugins/cpu_blocked.so" "$work/subs/blocked.so"
cp "$build/tests/fixture-plugins/attack_timer_tamper.so" "$work/subs/tamper.so"
c++ -std=c++17 -O3 -fPIC -shared -fvisibility=hidden -I"$source_dir/core/include" \
    "$source_dir/plugins/template/my_gemm.cpp" -o "$work/subs/student.so"

busy_pids=
if [ "$load" = busy ]; then
    for _ in 1 2; do sh -c 'while :; do :; done' & busy_pids="$busy_pids $!"; done
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
KREG_SECRET_SEED=0x1234 "$build/bin/runner" grade --rubric "$source_dir/configs/grading/cpu-lab.json" \
    --submissions "$work/subs" --out "$work/out" >"$work/grade.log" 2>&1 || { cat "$work/grade.log"; exit 1; }
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/out" <<'EOF'
import json, pathlib, sys

print("| kernel | round | claimed median | its CPU time (median) | grader's bound | bound / claimed | bound / CPU time | bound from | allowance (error) | CPU allowance | believed |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for student in sorted((pathlib.Path(sys.argv[1]) / "students").glob("*.json")):
    try:
        result = json.loads(student.read_text())
    except ValueError:
        continue
    if not isinstance(result, dict) or "checks" not in result:
        continue
    printed = set()
    tiers = []
    for check in result["checks"]:
        if check.get("kind") != "performance":
            continue
        tiers.append(f"{check['name']} {check['points']:g}/{check['max_points']:g}")
        rounds = check.get("evidence", {}).get("rounds", [])
        key = json.dumps(rounds, sort_keys=True)
        if key in printed:  # the tiers of one shape share their rounds
            continue
        printed.add(key)
        for i, r in enumerate(rounds):
            c = r.get("timing_claims")
            if c is None:
                continue
            claimed, bound = c["claimed_median_ms"], c["grader_bound_median_ms"]
            if "harness_allowance_ms" in c:
                allowance = f"{c['harness_allowance_ms']:.3f} ({c.get('harness_allowance_error_ms', float('nan')):.3f})"
            else:
                allowance = "none: " + c.get("no_bound", "?")
            cpu = (f"{c['harness_cpu_allowance_ms']:.3f}" if "harness_cpu_allowance_ms" in c
                   else "none: " + c.get("no_cpu_bound", "?"))
            own_cpu = c.get("claimed_cpu_median_ms")
            cpu_text = f"{own_cpu:.3f}" if own_cpu is not None else "-"
            cpu_ratio = f"{bound / own_cpu:.2f}" if own_cpu else "-"
            print(f"| {student.stem} | {i} | {claimed:.3f} | {cpu_text} | {bound:.3f} | {bound / claimed if claimed else float('nan'):.2f} | {cpu_ratio} | "
                  f"{c.get('bound_from', '-')} | {allowance} | {cpu} | {c['believed']} |")
    print(f"| {student.stem} | tiers: {'; '.join(tiers)} | | | | | | | | | |")
EOF

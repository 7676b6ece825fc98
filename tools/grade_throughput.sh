#!/usr/bin/env bash
# The grading throughput benchmark of docs/GRADING.md: 50 CPU submissions (25 copies of cpu_blocked,
# 10 of the plain-loop fixture, 15 misbehaving plugins from the test corpus) graded with
# grading/cpu-lab.json, under /usr/bin/time. Needs a build with its test fixtures (the default build).
#
#   bash tools/grade_throughput.sh [build-dir] [work-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/kreg-grade-throughput}
fixtures=$build/tests/fixture-plugins plugins=$build/lib/kreg/plugins
for f in "$plugins/cpu_blocked.so" "$fixtures/fixture_good.so"; do
    [[ -f $f ]] || { echo "missing $f: build $build first (cmake --build $build)" >&2; exit 2; }
done
rm -rf "$work"
mkdir -p "$work/subs"
for i in $(seq 1 25); do cp "$plugins/cpu_blocked.so" "$work/subs/blocked$i.so"; done
for i in $(seq 1 10); do cp "$fixtures/fixture_good.so" "$work/subs/loop$i.so"; done
for f in fixture_crash_in_run fixture_abort_in_run fixture_exit_in_run fixture_throw_in_run fixture_wrong_result \
         fixture_skips_last_row fixture_crash_at_load fixture_wrong_abi not_elf cheat_socket cheat_fork cheat_caches \
         cheat_modifies_input cheat_never_writes cheat_when_benchmarked; do
    cp "$fixtures/$f.so" "$work/subs/$f.so"
done
/usr/bin/time -v "$build/bin/runner" grade --rubric grading/cpu-lab.json --submissions "$work/subs" --out "$work/out" \
    >"$work/grade.out" 2>"$work/grade.err" || true
tail -2 "$work/grade.out" | head -1
grep -E "Elapsed \(wall|Percent of CPU|Maximum resident" "$work/grade.err"
python3 - "$work/out/students" <<'PY'
import glob, json, statistics, sys
rows = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]
def median(prefix, invert=False):
    xs = [r["meta"]["seconds"] for r in rows if r["student"].startswith(prefix) != invert]
    return statistics.median(xs) if xs else float("nan")
print(f"per submission (median s): cpu_blocked {median('blocked'):.2f}, plain loop {median('loop'):.2f}, "
      f"misbehaving {statistics.median(r['meta']['seconds'] for r in rows if not r['student'].startswith(('blocked', 'loop'))):.2f}")
PY

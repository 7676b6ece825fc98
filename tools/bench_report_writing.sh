#!/bin/bash
# What keeping the reports costs a long sweep (issue 10): a CPU sweep of ROWS rows of a trivial kernel
# (cpu_naive on Mx1x1, M = 1..ROWS, one timed call per row), run with --verbose so that the runner
# prints how long its journal appends and report renders took, next to the sweep's wall time.
#
#   bash tools/bench_report_writing.sh [BUILD_DIR] [ROWS]      # defaults: build, 100000
#
# A measurement, not a test: it prints numbers and passes no judgement. Before the journal, every row
# rewrote both whole reports (O(rows²) bytes); now a row is one appended line and the reports are
# rendered every few seconds at most (never more often than 50x their own render time) and at the end.
set -euo pipefail
build=${1:-build}
rows=${2:-100000}
runner="$(cd "$build" && pwd)/bin/runner"
work=$(mktemp -d /tmp/kreg-bench-reports.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat >"$work/bench.json" <<JSON
{"name": "bench", "kernels": ["cpu_naive"], "shapes": [{"m": {"from": 1, "to": $rows, "step": 1}, "n": 1, "k": 1}],
 "warmup": 0, "repeats": 1}
JSON
cd "$work"
start=$(date +%s.%N)
set +e
"$runner" --config bench.json --json out.json --csv out.csv -v >/dev/null 2>stderr.txt
status=$?
set -e
end=$(date +%s.%N)
grep -E "^runner: [0-9]+ rows in" stderr.txt || { tail -5 stderr.txt; exit 1; }
echo "runner exit $status; wall time of the whole command: $(awk -v a="$start" -v b="$end" "BEGIN{printf \"%.1f\", b - a}") s"
ls -l out.json out.csv out.journal.jsonl | awk '{print $5, $9}'

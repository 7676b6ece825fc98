#!/usr/bin/env bash
# run_sanitizer.sh checked without a GPU: a stand-in runner lists a GEMM, a reduction and a transpose kernel,
# a stand-in compute-sanitizer runs what it is given and prints its summary. The script must run every kernel
# (the reduction through the runner at the sizes, not silently nothing), fail a kernel whose log holds no
# sanitizer summary, and give the same verdicts with several kernels at a time.
set -uo pipefail
script=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin"

cat >"$dir/runner" <<'RUNNER'
#!/usr/bin/env bash
if [[ $1 == --list ]]; then
    cat <<'JSON'
{"kernels": [
 {"name": "k_gemm", "backend": "cuda", "dtypes": ["fp32"], "operation": "gemm", "max_block": 0, "plugin_path": "/p/g.so", "unavailable_reason": ""},
 {"name": "k_red", "backend": "cuda", "dtypes": ["fp32"], "operation": "reduction", "max_block": 0, "plugin_path": "/p/r.so", "unavailable_reason": ""},
 {"name": "k_tr", "backend": "cuda", "dtypes": ["fp32"], "operation": "transpose", "max_block": 0, "plugin_path": "/p/t.so", "unavailable_reason": ""},
 {"name": "k_cpu", "backend": "cpu", "dtypes": ["fp32"], "operation": "gemm", "max_block": 0, "plugin_path": "/p/c.so", "unavailable_reason": ""}
]}
JSON
    exit 0
fi
echo "runner $*" >>"$CALLS"
RUNNER
cat >"$dir/bin/compute-sanitizer" <<'SAN'
#!/usr/bin/env bash
shift 4  # --tool T --error-exitcode 9
"$@"
# KREG_FAKE_SILENT names a kernel whose run prints no summary (a sanitizer that did not run it).
[[ -n ${KREG_FAKE_SILENT:-} && " $* " == *" $KREG_FAKE_SILENT "* ]] && exit 0
echo "========= ERROR SUMMARY: 0 errors"
SAN
chmod +x "$dir/runner" "$dir/bin/compute-sanitizer"
export PATH="$dir/bin:$PATH" CALLS="$dir/calls"

fail() { echo "FAIL: $*"; exit 1; }
run() { : >"$CALLS"; rm -rf "$dir/work"; "$script" memcheck "$dir/runner" "$dir/work" >"$dir/out" 2>&1; }

for jobs in 1 3; do
    KREG_SANITIZER_JOBS=$jobs run || { cat "$dir/out"; fail "jobs=$jobs: exit $? with every kernel clean"; }
    grep -q -- "--kernels k_gemm .*--shape 67x45x33" "$CALLS" || fail "jobs=$jobs: the GEMM did not run at --shape"
    grep -q -- "--kernels k_red .*--operation reduction --sizes 1,257,1000003" "$CALLS" ||
        fail "jobs=$jobs: the reduction did not run through the runner at its sizes"
    [[ $(grep -c "__profile_driver .*--kernel k_tr " "$CALLS") -eq 3 ]] || fail "jobs=$jobs: the transpose's three driver runs"
    grep -q "k_cpu" "$CALLS" && fail "jobs=$jobs: a CPU kernel ran under the sanitizer"
    [[ $(grep -c "^ok   memcheck" "$dir/out") -eq 3 ]] || { cat "$dir/out"; fail "jobs=$jobs: three ok verdicts"; }
done

KREG_FAKE_SILENT=k_red KREG_SANITIZER_JOBS=2 run && { cat "$dir/out"; fail "a kernel with no sanitizer summary passed"; }
grep -q "FAIL memcheck k_red .*nothing ran under memcheck" "$dir/out" || { cat "$dir/out"; fail "the silent kernel is not named"; }
grep -q "^ok   memcheck k_gemm" "$dir/out" || fail "the other kernels' verdicts are lost beside a failure"

KREG_SANITIZER_KERNELS='^k_red$' run || fail "a filter naming one kernel"
grep -q "k_gemm" "$CALLS" && fail "the filter ran a kernel it does not name"
echo "run_sanitizer.sh: routing, silent runs and parallel verdicts as expected"

#!/usr/bin/env bash
# GPU call 1 of 2026-12-07, third session, on main as committed (CI passed for 3415364): run from the repository root
# on the device, SHA=<commit> bash docs/results/h200-2026-12-07c/batch.sh 1
#   build everything; the published reduction sweep with CUB in the same run and the 0.9-of-copy bar (issue 21);
#   ncu's view of cuda_gemv / cuda_small_tile / cuda_splitk against cuBLAS SGEMM at the vector-like and small
#   square shapes where issue 24's dispatch misses its targets (what cuBLAS launches, DRAM throughput, occupancy);
#   the serial GPU suite (the protocol-5 CUDA forging fixtures among it) in what is left of the call.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../../tools/gpu_call.sh" "${1:-1}"
gpu_call_build || exit 1
timeout 180 $R --config configs/sweeps/reduction-h200.json --json $OUT/reduction-h200.json --csv $OUT/reduction-h200.csv \
  > $LOG/reduction-sweep.log 2>&1
el "reduction sweep rc=$?"; tail -3 $LOG/reduction-sweep.log
python3 - $OUT/reduction-h200.json <<'PY' | tee $LOG/bar.txt
import json, sys
report = json.load(open(sys.argv[1]))
print("gpu:", report["meta"]["gpu"]["facts"].get("name"), " copy bandwidth:",
      report["meta"]["gpu"].get("ceilings", {}).get("dram_copy_gbps"), "GB/s")
rows = [r for r in report["records"] if r.get("status") == "ok" and r["n"] >= 1 << 20]
for n in sorted({r["n"] for r in rows}):
    at = sorted((r["extra"]["roofline"].get("fraction_of_copy_bandwidth", 0), r["kernel"]) for r in rows if r["n"] == n)
    print(n, " ".join(f"{k}={f:.3f}" for f, k in sorted(at, key=lambda t: t[1])))
print("not ok:", [(r["kernel"], r["n"], r["status"]) for r in report["records"] if r.get("status") != "ok"])
PY
bundle
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__waves_per_multiprocessor,smsp__cycles_active.avg.pct_of_peak_sustained_elapsed
for shape in 1x4096x4096 1x3000x5000 1x6000x1500 333x333x333 517x517x517 96x96x40000 6000x96x20000; do
  for k in cublas_sgemm cuda_gemv cuda_small_tile cuda_splitk; do
    timeout 40 ncu --clock-control none --metrics $M --nvtx --nvtx-include "$k/" --csv --print-units base \
      $R --profile --isolation none --kernels $k --shape $shape --dtype fp32 \
      > $LOG/ncu-$k-$shape.csv 2> $LOG/ncu-$k-$shape.err
  done
done
el "ncu rc=$?"; bundle
left=$(( 590 - $(gpu_call_elapsed) ))
(cd build-gpu && timeout $left ctest -L gpu -LE sanitizer -E "^AllCuda|^GradeGpu\.ThePublished" -j1 --output-on-failure \
  > $LOG/ctest-gpu.log 2>&1)
el "serial gpu suite rc=$? (limit $left s)"; tail -15 $LOG/ctest-gpu.log; bundle

#!/usr/bin/env bash
# GPU calls of 2026-12-07, third session, each on main as committed: from the repository root on the device,
# SHA=<commit> bash docs/results/h200-2026-12-07c/batch.sh PART
# PART 1 (CI passed for 3415364): build everything; the published reduction sweep with CUB in the same run and the 0.9-of-copy bar (issue 21);
#   ncu's view of cuda_gemv / cuda_small_tile / cuda_splitk against cuBLAS SGEMM at the vector-like and small
#   square shapes where issue 24's dispatch misses its targets (what cuBLAS launches, DRAM throughput, occupancy);
#   the serial GPU suite (the protocol-5 CUDA forging fixtures among it) in what is left of the call.
# PART 2, after reduce_splits stopped being one thread per output vector: build; the split kernels and the fp32
#   dispatch kernel against cuBLAS on the suite's shapes, same bits twice; memcheck and racecheck on them; the fp32
#   tuning sweep (the four dispatchable kernels and cuBLAS), `runner tune` on it, and the check sweep's fp32 shapes
#   with cuda_dispatch_fp32 routed by that table (KREG_DISPATCH_TABLE), the four kernels and cuBLAS beside it;
#   the GPU tests part 1 had no time for.
# PART 3, with the little device time left, after gemv's plan went back to its earlier split counts (part 2 measured
#   the one-round plan no faster): only the runner, cuda_gemv, cuBLAS and the kernel test; gemv's GPU tests; gemv and
#   cuBLAS at the check sweep's seven vector-like shapes.
set -uo pipefail
part=${1:-1}
if [[ $part == 3 ]]; then
    source "$(dirname "${BASH_SOURCE[0]}")/../../../tools/gpu_call.sh" "$part"
    gpu_call_build runner cuda_gemv cublas_reference cuda_kernels_test || exit 1
    timeout 40 ctest --test-dir build-gpu -L gpu -j2 -R 'AllCudaKernels.*cuda_gemv' > $LOG/ctest-gemv.log 2>&1
    el "gemv correctness rc=$?"; tail -2 $LOG/ctest-gemv.log; bundle
    shapes=(); for s in 1x3000x5000 1x4096x4096 1x6000x1500 6x5000x3000 1500x1x6000 4096x1x4096 5000x1x3000; do shapes+=(--shape $s); done
    timeout 60 $R --kernels cuda_gemv,cublas_sgemm --dtype fp32 "${shapes[@]}" --json $OUT/vector-fp32.json > $LOG/vector.log 2>&1
    el "vector shapes rc=$?"; tail -12 $LOG/vector.log; bundle
    exit 0
fi
source "$(dirname "${BASH_SOURCE[0]}")/../../../tools/gpu_call.sh" "$part"
gpu_call_build || exit 1
if [[ $part == 2 ]]; then
    four=cuda_09_warptiled,cuda_splitk,cuda_small_tile,cuda_gemv
    KREG_SANITIZER_SHAPE=7x45x4099 KREG_SANITIZER_KERNELS='^(cuda_gemv|cuda_splitk|cuda_small_tile|cuda_dispatch_fp32)$' KREG_SANITIZER_JOBS=3 timeout 150 \
      tests/sanitizer/run_sanitizer.sh racecheck $R $LOG/racecheck > $LOG/racecheck.txt 2>&1 &
    rp=$!
    KREG_SANITIZER_SHAPE=7x45x4099 KREG_SANITIZER_KERNELS='^(cuda_gemv|cuda_splitk|cuda_small_tile|cuda_dispatch_fp32)$' KREG_SANITIZER_JOBS=3 timeout 150 \
      tests/sanitizer/run_sanitizer.sh memcheck $R $LOG/memcheck > $LOG/memcheck.txt 2>&1 &
    mp=$!
    timeout 150 ctest --test-dir build-gpu -L gpu -j2 --output-on-failure \
      -R 'AllCudaKernels.*(cuda_gemv|cuda_splitk|cuda_small_tile|cuda_dispatch_fp32)|SplitKernels|Dispatch' \
      > $LOG/ctest-split-kernels.log 2>&1
    el "split kernels correctness rc=$?"; tail -3 $LOG/ctest-split-kernels.log
    wait $mp; el "memcheck rc=$?"; grep -c "^ok" $LOG/memcheck.txt; grep "^FAIL" $LOG/memcheck.txt | head
    wait $rp; el "racecheck rc=$?"; grep -c "^ok" $LOG/racecheck.txt; grep "^FAIL" $LOG/racecheck.txt | head
    rm -f $LOG/racecheck/*.json $LOG/racecheck/*.csv $LOG/memcheck/*.json $LOG/memcheck/*.csv; bundle
    timeout 170 $R --config configs/sweeps/tune-h200.json --dtype fp32 --kernels $four,cublas_sgemm \
      --json $OUT/tune-fp32.json --csv $OUT/tune-fp32.csv > $LOG/tune-sweep.log 2>&1
    el "tune sweep rc=$?"; tail -3 $LOG/tune-sweep.log
    $R tune $OUT/tune-fp32.json --kernels $four --out $OUT/table-fp32.json > $LOG/tune.log 2>&1
    el "tune rc=$?"; tail -5 $LOG/tune.log; bundle
    KREG_DISPATCH_TABLE=$OUT/table-fp32.json timeout 150 $R --config configs/sweeps/check-h200.json --dtype fp32 \
      --kernels cuda_dispatch_fp32,$four,cublas_sgemm --json $OUT/check-fp32.json --csv $OUT/check-fp32.csv \
      > $LOG/check-sweep.log 2>&1
    el "check sweep rc=$?"; tail -3 $LOG/check-sweep.log; bundle
    left=$(( 585 - $(gpu_call_elapsed) ))
    timeout $left ctest --test-dir build-gpu -L gpu -LE sanitizer -j1 --output-on-failure -R \
      'GradeGpu\.(Gpu|Harness|OnEvery|ABlock)|ProfileCommandGpu|ProfileDriverGpu|CudaKernelRegistry|References/|CudaCopyReference|CudaTransposeRegistry|CudaReductions|cmake\.install|cmake\.template_cuda' \
      > $LOG/ctest-rest.log 2>&1
    el "rest of the gpu suite rc=$? (limit $left s)"; tail -4 $LOG/ctest-rest.log; bundle
    exit 0
fi
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

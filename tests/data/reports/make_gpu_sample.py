#!/usr/bin/env python3
"""Writes gpu_sample.json: a SYNTHETIC, GPU-shaped runner report for the tools tests.

Every number in it is invented (loosely shaped like the H200 table in /work/shared/GPU.md) so that the
tools can be tested on a machine without a GPU. The report says so in meta.synthetic / meta.synthetic_note,
and tools/kreg_results.py refuses to render it without --allow-synthetic. Never publish these numbers.

The layout follows what the runner writes (core/src/report/json_report.cpp, core/src/common/job.cpp), with
extra.launch / extra.attributes as core/src/pipeline/cuda_backend.cpp writes them and extra.roofline computed with
the formula of core/src/measure/roofline.cpp. Re-run after changing it:

    python3 tests/data/reports/make_gpu_sample.py > tests/data/reports/gpu_sample.json
"""

import json
import random
import statistics
import sys

SQUARES = [1024, 2048, 4096, 8192]
ODD_SHAPES = [(517, 517, 517), (1000, 3000, 257), (1, 4096, 4096), (4097, 1025, 2049)]
# Invented TFLOP/s at the square sizes; odd shapes scale the 1024 figure (see odd_tflops).
# kernel: (TFLOP/s at SQUARES, registers, static smem, local bytes, threads (x, y), tile, dynamic smem, tile AI)
KERNELS = {
    "cuda_01_naive": ([5.1, 5.4, 5.2, 5.0], 40, 0, 0, (32, 32), 32, 0, 0.25),
    "cuda_02_tiled16": ([7.7, 8.1, 8.1, 8.1], 38, 2048, 0, (16, 16), 16, 0, 4.0),
    "cuda_02_tiled32": ([8.5, 9.0, 9.1, 9.1], 38, 8192, 0, (32, 32), 32, 0, 8.0),
    "cuda_03_conflicts": ([6.0, 6.4, 6.5, 6.5], 40, 8192, 0, (32, 32), 32, 0, 8.0),
    "cuda_03_padded": ([9.0, 9.6, 9.7, 9.7], 40, 8448, 0, (32, 32), 32, 0, 8.0),
    "cuda_03_padded_dynamic": ([9.0, 9.5, 9.7, 9.7], 40, 0, 0, (32, 32), 32, 8448, 8.0),
    "cuda_04_coarsened": ([12.3, 13.6, 14.2, 14.4], 56, 8192, 0, (16, 16), 32, 0, 8.0),
    "cuda_05_register_blocked": ([20.0, 27.0, 29.0, 30.0], 96, 8192, 0, (256, 1), 64, 0, 16.0),
    "cuda_06_vectorized": ([22.0, 30.0, 33.0, 34.0], 110, 16384, 0, (256, 1), 128, 0, 32.0),
    "cuda_07_double_buffered": ([22.0, 31.0, 33.5, 34.0], 128, 32768, 24, (256, 1), 128, 0, 32.0),
    "cuda_08_cp_async": ([24.0, 33.0, 36.0, 37.0], 128, 0, 0, (256, 1), 128, 32768, 32.0),
    "cuda_09_warptiled": ([27.0, 40.0, 44.0, 45.0], 168, 0, 0, (128, 1), 128, 49152, 32.0),
    "cublas_sgemm": ([32.2, 49.5, 51.2, 51.2], None, None, None, None, None, None, None),
}
PLUGIN_OF = {
    "cuda_02_tiled16": "cuda_02_tiled", "cuda_02_tiled32": "cuda_02_tiled",
    "cuda_03_conflicts": "cuda_03_bank_conflicts", "cuda_03_padded": "cuda_03_bank_conflicts",
    "cuda_03_padded_dynamic": "cuda_03_bank_conflicts", "cublas_sgemm": "cublas_reference",
}
# Rows that did not end ok, to exercise every way a row is shown.
NOT_OK = {
    ("cuda_01_naive", (8192, 8192, 8192)): ("timeout", "the job exceeded its 120 s limit; worker killed"),
    ("cuda_05_register_blocked", (1, 4096, 4096)):
        ("failed", "run_gemm returned KREG_STATUS_INVALID_ARGUMENT: M must be at least 64"),
    ("cuda_03_padded_dynamic", (4097, 1025, 2049)): ("crashed", "worker killed by SIGSEGV while running the job"),
    ("cuda_09_warptiled", (4097, 1025, 2049)):
        ("wrong_result", "max_rel_err 3.1e-02 > tolerance 1.0e-04 | first bad element C[4096,0]"),
}
VEC4_KERNELS = {"cuda_06_vectorized", "cuda_07_double_buffered", "cuda_08_cp_async"}

FACTS = {
    "ordinal": 0, "name": "NVIDIA H200 [SYNTHETIC FIXTURE]", "uuid": "GPU-00000000-0000-0000-0000-000000000000",
    "pci_bus_id": "0000:00:00.0", "compute_capability": "9.0", "cc_major": 9, "cc_minor": 0, "sm_count": 132,
    "l2_bytes": 62914560, "persisting_l2_max_bytes": 47185920, "shared_per_block_bytes": 49152,
    "shared_per_block_optin_bytes": 232448, "shared_per_sm_bytes": 233472, "registers_per_sm": 65536,
    "max_threads_per_sm": 2048, "memory_bytes": 150754820096, "memory_bus_bits": 6144, "sm_clock_khz": 1980000,
    "memory_clock_khz": 3201000, "ecc_enabled": True, "driver_version": "13.0", "runtime_version": "13.0",
    "cublas_version": "13.0.0",
}
CEILINGS = {"dram_copy_gbps": 4300.0, "sgemm_tflops": 51.2, "tf32_tflops": 384.0, "bf16_tflops": 761.0,
            "size": 8192, "copy_bytes": 1 << 30, "repeats": 10, "seconds": 41.3}


def computed_peaks(f):
    """core/src/cuda/peaks.cpp for sm_90."""
    tflops = lambda per_clock: f["sm_count"] * f["sm_clock_khz"] * 1e3 * per_clock / 1e12  # noqa: E731
    return {"fp32_lanes_per_sm": 128, "fp32_tflops": tflops(256), "tf32_tensor_tflops": tflops(2048),
            "bf16_tensor_tflops": tflops(4096),
            "dram_gbps": 2.0 * f["memory_clock_khz"] * 1e3 * f["memory_bus_bits"] / 8.0 / 1e9,
            "basis": "SYNTHETIC: computed with the formula of core/src/cuda/peaks.cpp from invented facts"}


def roofline(m, n, k, median_ms, model_bytes, peaks):
    """core/src/measure/roofline.cpp, fp32 only."""
    flops = 2.0 * m * n * k
    min_bytes = 4.0 * (m * k + k * n) + 4.0 * m * n
    achieved = flops / (median_ms * 1e-3) / 1e12
    peak = max(CEILINGS["sgemm_tflops"], peaks["fp32_tflops"])
    bandwidth = max(CEILINGS["dram_copy_gbps"], peaks["dram_gbps"])
    ridge = peak * 1e3 / bandwidth
    floor_ms = max(flops / (peak * 1e12) * 1e3, min_bytes / (bandwidth * 1e9) * 1e3)
    roof = {"flops": flops, "min_dram_bytes": min_bytes, "arithmetic_intensity": flops / min_bytes,
            "achieved_tflops": achieved, "measured_peak_tflops": CEILINGS["sgemm_tflops"],
            "fraction_of_measured_peak": achieved / CEILINGS["sgemm_tflops"],
            "computed_peak_tflops": peaks["fp32_tflops"], "fraction_of_computed_peak": achieved / peaks["fp32_tflops"],
            "peak_tflops": peak, "bandwidth_gbps": bandwidth, "ridge_ai": ridge,
            "bound": "memory" if flops / min_bytes < ridge else "compute", "floor_ms": floor_ms,
            "faster_than_floor": median_ms < 0.9 * floor_ms}
    if model_bytes:
        roof["modelled_ai"] = flops / model_bytes
    return roof


def odd_tflops(kernel, shape, at_1024):
    m, n, k = shape
    if m == 1:  # a matrix-vector product: memory bound, a fraction of the bandwidth
        return 1.3 if kernel == "cublas_sgemm" else 0.1 + 0.02 * list(KERNELS).index(kernel)
    return at_1024 * {517: 0.5, 1000: 0.7, 4097: 0.9}[m]


def timing(rng, median_ms):
    samples = sorted(median_ms * (1 + rng.gauss(0, 0.01)) for _ in range(10))
    samples[4] = samples[5] = median_ms  # the median of the ten is exactly median_ms
    mean = statistics.fmean(samples)
    stddev = statistics.pstdev(samples)
    stats = {"count": 10, "median_ms": statistics.median(samples), "min_ms": samples[0], "mean_ms": mean,
             "stddev_ms": stddev, "cv": stddev / mean}
    rng.shuffle(samples)
    return samples, stats


def launch_extra(spec, m, n):
    _, regs, smem, local, threads, tile, dyn, tile_ai = spec
    if regs is None:
        return {}
    grid = [-(-n // tile), -(-m // tile), 1]
    return {"launch": {"grid": grid, "block": [threads[0], threads[1], 1], "dynamic_smem": dyn},
            "attributes": {"registers": regs, "static_shared_bytes": smem, "max_dynamic_shared_bytes": dyn,
                           "local_bytes": local, "max_threads_per_block": 1024, "ptx_version": 90,
                           "binary_version": 90}}


def record(job_id, kernel, shape, rng, peaks):
    m, n, k = shape
    spec = KERNELS[kernel]
    r = {"job_id": job_id, "kernel": kernel, "plugin": PLUGIN_OF.get(kernel, kernel),
         "plugin_path": f"/synthetic/lib/kreg/plugins/{PLUGIN_OF.get(kernel, kernel)}.so", "backend": "cuda",
         "dtype": "fp32", "m": m, "n": n, "k": k, "seed": 42, "status": "ok", "reason": "", "timer": "cuda_event",
         "samples_ms": [], "extra": {"device": 0}, "max_rel_err": None, "tolerance": 1e-4, "stats": None,
         "gflops": None, "exit_code": None, "signal": None}
    if kernel in VEC4_KERNELS and (n % 4 or k % 4):
        r.update(status="skipped", reason="needs N and K to be multiples of 4 (16-byte loads)")
        return r
    r["extra"].update(launch_extra(spec, m, n))
    if (kernel, shape) in NOT_OK:
        r["status"], r["reason"] = NOT_OK[(kernel, shape)]
        if r["status"] == "crashed":
            r["signal"] = "SIGSEGV"
        return r
    tflops = spec[0][SQUARES.index(m)] if m == n == k and m in SQUARES else odd_tflops(kernel, shape, spec[0][0])
    median_ms = 2.0 * m * n * k / (tflops * 1e12) * 1e3
    r["samples_ms"], r["stats"] = timing(rng, median_ms)
    r["gflops"] = 2.0 * m * n * k / (r["stats"]["median_ms"] * 1e-3) / 1e9
    r["max_rel_err"] = 2.0e-6
    model_bytes = None
    if spec[7]:
        model_bytes = 2.0 * m * n * k / spec[7] + 4.0 * m * n
        r["extra"]["model_bytes"] = model_bytes
    r["extra"]["roofline"] = roofline(m, n, k, r["stats"]["median_ms"], model_bytes, peaks)
    return r


def speedups(records):
    base = {(r["m"], r["n"], r["k"]): r for r in records if r["kernel"] == "cublas_sgemm" and r["status"] == "ok"}
    for r in records:
        b = base.get((r["m"], r["n"], r["k"]))
        ok = r["status"] == "ok" and b is not None
        r["speedup_vs_baseline"] = b["stats"]["median_ms"] / r["stats"]["median_ms"] if ok else None


def main():
    rng = random.Random(20261129)
    facts = dict(FACTS, peaks=computed_peaks(FACTS))
    shapes = [(s, s, s) for s in SQUARES] + ODD_SHAPES
    records = [record(len(shapes) * i + j, kernel, shape, rng, facts["peaks"])
               for i, kernel in enumerate(KERNELS) for j, shape in enumerate(shapes)]
    speedups(records)
    summary = {s: sum(r["status"] == s for r in records)
               for s in ("ok", "wrong_result", "skipped", "failed", "crashed", "timeout")}
    meta = {
        "synthetic": True,
        "synthetic_note": "invented numbers written by tests/data/reports/make_gpu_sample.py for the tools "
                          "tests; not a measurement of any GPU",
        "schema_version": "1.0.0", "kreg_version": "0.1.0", "git_sha": "synthetic",
        "argv": ["runner", "--config", "configs/sweeps/h200.json", "--calibrate", "--json", "kreg-reports/h200.json"],
        "timestamp": "2000-01-01T00:00:00Z",
        "host": {"hostname": "synthetic-host", "os": "synthetic", "cpu_model": "synthetic", "logical_cpus": 16},
        "gpu": {"facts": facts, "ceilings": CEILINGS},
        "plugins": [], "config": {"name": "h200-synthetic", "baseline": "cublas_sgemm"}, "seed": 42,
    }
    json.dump({"meta": meta, "baseline": "cublas_sgemm", "records": records, "summary": summary},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

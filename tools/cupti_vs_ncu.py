#!/usr/bin/python3
"""The CUPTI timer against Nsight Compute: cuBLAS BF16 and FP32 GEMMs at 512-8192^3, timed by the runner with
--timer cupti, and the same calls under ncu --clock-control none --cache-control none
--metrics gpu__time_duration.sum.

    tools/cupti_vs_ncu.py [--build build] [--sizes 512,1024,2048,4096,8192] [--out DIR] [--ncu ncu]
                          [--cache-control none|all]

Prints, per kernel and shape, the CUPTI span median (the row's sample), its kernel-sum median and kernels per
call, the event time beside it, ncu's median per-call duration (the launches of one call summed), CUPTI / ncu,
ncu - CUPTI per launch in microseconds, and ncu's time by the GPCs' own clock (gpc__cycles_elapsed.max over
gpc__cycles_elapsed.avg.per_second, summed over a call's launches) with CUPTI's kernel sum over it. The runner flushes L2 before every timed call itself, so ncu's own
cache control is off by default (--cache-control all adds ncu's flush of every cache on top of the runner's).
ncu's duration of a launch carries a fixed cost that CUPTI's record of the same launch does not (about 0.75 us
with --cache-control none, 1.2 us with all, on the H200, the same for kernels of 1 to 126 us:
docs/results/h200-cupti-ncu-2026-12-02), so at shapes whose kernels run a few microseconds the ratio is
below 1 by that cost, which the last column shows.
The runner's rows go to DIR/cupti.json; ncu's raw CSV to DIR/ncu-KERNEL-SIZE.csv, so the log can be committed.
Under ncu the runner is run with --profile --isolation none: each call inside an NVTX range named after the
kernel, which ncu targets (docs/RUNNING.md, "Lab conveniences"); the runner's own CUPTI timer steps aside there (a
profiler owns CUPTI), which this run also shows: those rows say cuda_event with the reason.
Exit status: 0 when every ratio is within --tolerance (3 %), 1 otherwise, 2 when something could not run.
"""
import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys

KERNELS = [("cublas_bf16", "bf16"), ("cublas_sgemm", "fp32")]


def run(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def cupti_rows(runner, sizes, out):
    report = os.path.join(out, "cupti.json")
    kernels = ",".join(k for k, _ in KERNELS)
    dtypes = ",".join(d for _, d in KERNELS)
    r = run([runner, "--kernels", kernels, "--dtype", dtypes, "--sizes", ",".join(map(str, sizes)), "--timer", "cupti",
             "--no-calibrate", "--force", "--json", report])
    if r.returncode not in (0, 1) or not os.path.exists(report):
        sys.exit(f"the runner failed ({r.returncode}):\n{r.stderr[-3000:]}")
    rows = {}
    with open(report) as f:
        for rec in json.load(f)["records"]:
            if rec["status"] != "ok":
                print(f"{rec['kernel']} {rec['m']}^3: {rec['status']}: {rec['reason']}", file=sys.stderr)
                continue
            rows[(rec["kernel"], rec["m"])] = rec
    return rows


TIME_SCALE_MS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3, "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# A clock in cycles per unit of time, to cycles per millisecond.
RATE_PER_MS = {"cycle/second": 1e-3, "cycle/msecond": 1.0, "cycle/usecond": 1e3, "cycle/nsecond": 1e6,
               "hz": 1e-3, "khz": 1.0, "mhz": 1e3, "ghz": 1e6}
METRICS = ["gpu__time_duration.sum", "gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second"]


def ncu_launches(ncu, runner, kernel, dtype, size, out, cache_control):
    """Every kernel launch ncu profiled inside the kernel's NVTX ranges, in launch order: (gpu__time_duration.sum,
    the GPCs' elapsed cycles over their clock) in ms. The second is the time the SMs' clock counted for the launch:
    it leaves out what the front end's timestamps hold beyond the kernel (the fixed cost a launch carries under
    ncu, above), so it says whether that cost is inside the kernel or around it."""
    r = run([ncu, "--clock-control", "none", "--cache-control", cache_control, "--metrics", ",".join(METRICS), "--nvtx",
             "--nvtx-include", f"{kernel}/", "--csv", "--print-units", "base", runner, "--profile", "--isolation", "none",
             "--kernels", kernel, "--dtype", dtype, "--shape", f"{size}x{size}x{size}", "--no-calibrate", "--warmup", "2",
             "--repeat", "10"])
    path = os.path.join(out, f"ncu-{kernel}-{size}.csv")
    with open(path, "w") as f:
        f.write(r.stdout)
    text = r.stdout[r.stdout.find('"ID"'):] if '"ID"' in r.stdout else ""
    by_launch = {}
    for row in csv.DictReader(io.StringIO(text)):
        name, unit = row.get("Metric Name"), (row.get("Metric Unit") or "").strip()
        if name not in METRICS:
            continue
        value = float(row["Metric Value"].replace(",", ""))
        launch = by_launch.setdefault(int(row["ID"]), {})
        if name == "gpu__time_duration.sum":
            if unit not in TIME_SCALE_MS:
                sys.exit(f"{path}: unknown unit {unit!r} for {name}")
            launch[name] = value * TIME_SCALE_MS[unit]
        elif name == "gpc__cycles_elapsed.avg.per_second":
            if unit.lower() not in RATE_PER_MS:
                sys.exit(f"{path}: unknown unit {unit!r} for {name}")
            launch[name] = value * RATE_PER_MS[unit.lower()]
        else:
            launch[name] = value
    launches = []
    for _, launch in sorted(by_launch.items()):
        if "gpu__time_duration.sum" not in launch:
            continue
        rate = launch.get("gpc__cycles_elapsed.avg.per_second")
        cycles = launch.get("gpc__cycles_elapsed.max")
        launches.append((launch["gpu__time_duration.sum"], cycles / rate if cycles and rate else None))
    if not launches:
        print(f"{path}: ncu profiled nothing (exit {r.returncode}):\n{r.stderr[-2000:]}", file=sys.stderr)
    return launches


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--sizes", default="512,1024,2048,4096,8192")
    p.add_argument("--out", default="cupti-vs-ncu")
    p.add_argument("--ncu", default=shutil.which("ncu") or "/usr/local/cuda/bin/ncu")
    p.add_argument("--tolerance", type=float, default=0.03)
    p.add_argument("--cache-control", choices=["none", "all"], default="none")
    a = p.parse_args()
    runner = os.path.join(a.build, "bin", "runner")
    sizes = [int(s) for s in a.sizes.split(",")]
    os.makedirs(a.out, exist_ok=True)
    if not os.path.exists(a.ncu):
        sys.exit(f"no ncu at {a.ncu} (--ncu PATH)")
    rows = cupti_rows(runner, sizes, a.out)
    print(f"{'kernel':14} {'size':>5} {'cupti span':>11} {'kernel sum':>11} {'k/call':>6} {'events':>9} "
          f"{'ncu':>11} {'cupti/ncu':>9} {'ncu-cupti/launch':>16} {'ncu cycles':>11} {'sum/cycles':>9}")
    worst, missing = 0.0, False
    for kernel, dtype in KERNELS:
        for size in sizes:
            rec = rows.get((kernel, size))
            launches = ncu_launches(a.ncu, runner, kernel, dtype, size, a.out, a.cache_control)
            if rec is None or not launches or rec.get("timer") != "cupti":
                print(f"{kernel:14} {size:5} not measured (row: {rec and rec.get('timer')}, ncu launches: {len(launches)})")
                missing = True
                continue
            kt = rec["extra"]["kernel_time"]
            # A call may launch several kernels of different lengths (cuBLAS's split-K: a GEMM and a reduction):
            # sum the launches of each call before taking the median, never the median launch times the count.
            per_call = int(kt["kernels_median"] or 1)
            calls = [launches[i:i + per_call] for i in range(0, len(launches) - per_call + 1, per_call)]
            ncu_ms = statistics.median(sum(d for d, _ in call) for call in calls)
            by_cycles = [sum(c for _, c in call) for call in calls if all(c is not None for _, c in call)]
            cycles_ms = statistics.median(by_cycles) if by_cycles else None
            ratio = kt["span_ms_median"] / ncu_ms
            offset_us = (ncu_ms - kt["kernel_sum_ms_median"]) * 1e3 / per_call
            worst = max(worst, abs(ratio - 1))
            cycles_text = (f"{cycles_ms * 1e3:9.2f}us {kt['kernel_sum_ms_median'] / cycles_ms:9.4f}" if cycles_ms
                           else f"{'—':>11} {'—':>9}")
            print(f"{kernel:14} {size:5} {kt['span_ms_median'] * 1e3:9.2f}us {kt['kernel_sum_ms_median'] * 1e3:9.2f}us "
                  f"{per_call:6g} {kt.get('event_ms_median', 0) * 1e3:7.2f}us {ncu_ms * 1e3:9.2f}us {ratio:9.4f} "
                  f"{offset_us:14.2f}us {cycles_text}")
    print(f"worst |cupti/ncu - 1| = {worst:.4f} (tolerance {a.tolerance})")
    if missing:
        return 2
    return 0 if worst <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())

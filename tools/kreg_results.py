#!/usr/bin/python3
"""Turn kreg runner reports (JSON) into a results document (Markdown) and PNG charts.

    tools/kreg_results.py REPORT.json [REPORT.json ...] --out docs/RESULTS.md --charts docs/charts/ \
        [--baseline [REPORT:]SPEC ...] [--command [REPORT:]TEXT ...] [--allow-synthetic] [--no-charts] [--force]

Everything in the document is computed from the reports; nothing is typed by hand. With one report its
sections are:

  header          that the file is generated, and the command that generated it
  provenance      the exact runner command (meta.argv, or --command), date, git sha, host
  GPU             name, compute capability, SMs, clocks, driver/runtime/cuBLAS (meta.gpu.facts)
  ceilings        measured ceilings (meta.gpu.ceilings) next to the computed peaks (meta.gpu.facts.peaks)
  per size        one table per problem (shape, dtype; block for block_transpose). GEMM rows: median,
                  TFLOP/s, ratio to the baseline (baseline median / kernel median, both from this report),
                  % of the measured cuBLAS ceiling of the row's dtype, arithmetic intensity (minimal DRAM
                  traffic) and the kernel's modelled one, bound, cv. Transposes and block transposes
                  (rows with "operation"): shape MxN, median, GB/s (the row's bytes moved / median, as the
                  runner recorded it), fraction of the measured copy bandwidth (meta.gpu.ceilings.dram_copy_gbps),
                  ratio to the baseline, cv. Rows that are not ok show their status and reason
  summary         ratio to the baseline, kernels as rows and sizes as columns (and, for transposes, the
                  fraction of the copy bandwidth the same way); with --also-against, a second such table
                  against a second baseline of the same run (cuBLAS's default algorithm and cuBLASLt's best)
  dispatch        for a dispatch kernel (name with "dispatch"): per shape the variant it ran
                  (extra.variant), its ratio to the baseline, and the fastest single kernel of the same
                  report there (neither dispatch, baseline nor a `*_reference` plugin) with its ratio
  charts          GEMM: TFLOP/s and time against size (square shapes); transposes: GB/s against size (square
                  shapes); block transposes: GB/s against the block; each only when the report has ok rows
                  to draw
  roofline        GEMM rows only: the roof the runner used (ridge point), which kernels are memory or compute
                  bound, and a roofline chart, only when the report's rows carry roofline data
  progression     GEMM rows only: for each consecutive pair of the CUDA lecture kernels, the sizes where the
                  later one is not at least 1.05x faster, with register, shared-memory, spill and launch
                  figures so the author can explain why; the tool states facts and offers no explanation

With several reports the document has, after the header, a list of the reports, one GPU part (a column per
distinct GPU) and one ceilings part (a column per report: each run measured its own), a "timers side by side"
part for each two reports of the same GPU and kernels whose rows were timed by different timers (CUPTI and CUDA
events: each shared row's median under both and its ratio to the baseline under each), then one part per
report, titled by its config name (meta.config.name), with that report's provenance and the sections above.
Its charts are named <config name>-<chart>.png so the reports' charts do not overwrite each other.

Each report keeps its own baseline (the report's "baseline"). --baseline SPEC (a kernel NAME, or
DTYPE=NAME,... per dtype, as the runner takes it) replaces it for every report; --baseline REPORT:SPEC for
the one report given as REPORT on this command line (the path as typed, or the same file), and wins over an
unqualified one. --also-against [REPORT:]SPEC adds a second ratio table against another kernel (or one per
dtype) of the same report, e.g. the best of cuBLASLt's candidates beside cuBLAS's default as the first; its
kernels must have rows in that report. --command [REPORT:]TEXT likewise replaces meta.argv as the runner
command shown; with several reports it must name its report.

A report marked synthetic (meta.synthetic = true, a test fixture) is refused unless --allow-synthetic.
Charts need matplotlib (Debian's python3-matplotlib, hence #!/usr/bin/python3): without it the tool stops
before writing anything, unless --no-charts asks for the document alone. An existing document or chart is
replaced only with --force.

Exit status: 0 written; 2 a report cannot be read (or is given twice, or a baseline has no rows in its
report, or --baseline/--also-against/--command is malformed or names no report given); 3 a synthetic report
without --allow-synthetic; 4 matplotlib is missing and --no-charts was not given; 5 an output file exists and
--force was not given. Every report is checked before anything is written; nothing is written unless the
status is 0.
"""

import argparse
import json
import os
import re
import shlex
import sys

import kreg_report as kr

PROGRESSION_THRESHOLD = 1.05
MAX_REASON_CHARS = 240


# ---------------------------------------------------------------------------------------------- helpers

def cell(text):
    """Text made safe for one Markdown table cell."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def short_reason(reason):
    reason = " ".join(str(reason or "").split())
    if len(reason) > MAX_REASON_CHARS:
        return reason[:MAX_REASON_CHARS] + "… (truncated; full text in the report)"
    return reason


def table(header, rows):
    lines = ["| " + " | ".join(cell(c) for c in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def heading(level, text):
    return "#" * level + " " + text


def gpu_facts(meta):
    gpu = meta.get("gpu") or {}
    return gpu.get("facts") or {}, gpu.get("ceilings") or {}


def cublas_version(meta, facts, ceilings):
    """The cuBLAS a report was measured with: the cuBLAS plugin's version says it ("1.0.0+cublas.13.1.0",
    in meta.gpu.ceilings.plugin or meta.plugins); reports made before the runner stopped linking cuBLAS
    have facts.cublas_version."""
    if facts.get("cublas_version"):
        return facts["cublas_version"]
    versions = [(ceilings.get("plugin") or {}).get("version", "")]
    versions += [p.get("version", "") for p in meta.get("plugins") or [] if p.get("name") == "cublas_reference"]
    for version in versions:
        if isinstance(version, str) and "+cublas." in version:
            return version.split("+cublas.", 1)[1]
    return "?"


def number(mapping, key):
    value = mapping.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def percent(fraction):
    return "—" if fraction is None else f"{100 * fraction:.1f}%"


def config_name(report, path):
    """What a report's part is titled: meta.config.name, else the --config file named in meta.argv, else the
    report's file name."""
    meta = report["meta"]
    name = (meta.get("config") or {}).get("name") if isinstance(meta.get("config"), dict) else None
    if isinstance(name, str) and name.strip():
        return name.strip()
    argv = meta.get("argv")
    if isinstance(argv, list) and "--config" in argv[:-1]:
        return os.path.splitext(os.path.basename(str(argv[argv.index("--config") + 1])))[0]
    return os.path.splitext(os.path.basename(path))[0]


# How the column names the measured cuBLAS ceiling a GEMM dtype's "% of measured" is taken against. Which
# ceiling that is the runner says itself, in each ok CUDA row's extra.roofline.measured_peak_tflops
# (measure/roofline.cpp); the keys below are only for reports older than that field. fp16 has no cuBLAS
# ceiling in a report.
DTYPE_CEILING = {
    "fp32": ("sgemm_tflops", "SGEMM"),
    "tf32": ("tf32_tflops", "cuBLAS TF32"),
    "bf16": ("bf16_tflops", "cuBLAS BF16"),
}


# ---------------------------------------------------------------------------------------------- context

class Results:
    """One report plus everything derived from it once: row index, orders, baseline, title."""

    def __init__(self, report, baseline, path="", runner_cmd="", name=None, also_against=None):
        self.report = report
        self.path = path
        self.runner_cmd = runner_cmd
        self.meta = report["meta"]
        self.records = report["records"]
        self.rows = kr.index_rows(self.records)
        self.kernels = kr.kernel_order(self.records)
        self.problems = kr.problem_order(self.records)
        self.gemm_problems = [p for p in self.problems if not kr.is_data_movement(p)]
        self.movement_problems = [p for p in self.problems if kr.is_data_movement(p)]
        self.baseline = baseline
        self.also_against = also_against  # a second baseline (--also-against), or None
        self.facts, self.ceilings = gpu_facts(self.meta)
        self.sgemm_ceiling = number(self.ceilings, "sgemm_tflops")
        self.copy_gbps = number(self.ceilings, "dram_copy_gbps")
        self.name = name or config_name(report, path)
        self.chart_prefix = ""  # "<slug>-" when several reports share a charts folder

    def row(self, kernel, problem):
        return self.rows.get((kernel, problem))

    def ratio(self, record, baseline=None):
        kernel = kr.baseline_kernel(baseline or self.baseline, record["dtype"])
        if not kernel:
            return None
        return kr.baseline_ratio(record, self.row(kernel, kr.problem_of(record)))

    def kernels_of(self, problem):
        return [k for k in self.kernels if self.row(k, problem) is not None]

    def kernels_over(self, problems):
        return [k for k in self.kernels if any(self.row(k, p) is not None for p in problems)]

    def gemm_records(self):
        return [r for r in self.records if not kr.is_data_movement_record(r)]

    def ceiling_of(self, dtype):
        """(measured TFLOP/s, column label) of the cuBLAS ceiling a GEMM row of dtype is compared with: the one
        the runner compared that dtype's rows with (extra.roofline.measured_peak_tflops), else, for an older
        report, meta.gpu.ceilings under the dtype's key."""
        key, label = DTYPE_CEILING.get(dtype, (None, "ceiling"))
        for record in self.gemm_records():
            if record.get("dtype") == dtype:
                recorded = number(kr.roofline(record), "measured_peak_tflops")
                if recorded is not None:
                    return recorded, label
        return (number(self.ceilings, key) if key else None), label


# ---------------------------------------------------------------------------------------------- sections

def provenance_lines(res):
    host = res.meta.get("host") or {}
    return [
        "Runner command (exact):",
        "",
        "```",
        res.runner_cmd,
        "```",
        "",
        f"- Date (UTC): {res.meta.get('timestamp', 'unknown')}",
        f"- kreg {res.meta.get('kreg_version', '?')}, git sha `{res.meta.get('git_sha', 'unknown')}`, "
        f"report schema {res.meta.get('schema_version', '?')}",
        f"- Host: {host.get('hostname', '?')}, {host.get('cpu_model', '?')}, "
        f"{host.get('logical_cpus', '?')} logical CPUs, {host.get('os', '?')}",
        f"- Baseline for ratios: {kr.describe_baseline(res.baseline)} (ratio = baseline median / kernel median, "
        "same shape and dtype, same report)" if res.baseline else "- Baseline for ratios: none (no --baseline and none in the report)",
    ] + overridden_baseline_lines(res) + [""]


def overridden_baseline_lines(res):
    """Where --baseline replaced the report's own baseline, what the report had (its speedup_vs_baseline)."""
    own = res.report.get("baseline")
    if res.baseline == own:
        return []
    return [f"- The report's own baseline, replaced by `--baseline`: "
            f"{kr.describe_baseline(own) if isinstance(own, (str, dict)) and own else 'none'}"]


def synthetic_banner(res):
    if res.meta.get("synthetic") is not True:
        return []
    note = res.meta.get("synthetic_note", "")
    return [f"> **SYNTHETIC DATA — not a measurement.** {note}".rstrip(), ""]


def header_section(res, tool_command):
    lines = [
        "# kreg results",
        "",
        "<!-- Generated by tools/kreg_results.py from a runner report. Do not edit by hand: re-run the tool. -->",
        "",
        f"Generated by `{tool_command}`.",
        "",
    ]
    lines += synthetic_banner(res)
    return lines + ["## How these numbers were produced", ""] + provenance_lines(res)


def mhz(khz):
    return "?" if khz is None else f"{khz / 1000:.0f} MHz"


def gib(value):
    return "?" if value is None else f"{value / 2**30:.1f} GiB"


def fact_rows(res):
    """[(fact, value)] of one report's GPU."""
    f = res.facts
    return [
        ["name", f.get("name", "?")],
        ["compute capability", f.get("compute_capability", "?")],
        ["SMs", f.get("sm_count", "?")],
        ["SM clock (max, reported)", mhz(number(f, "sm_clock_khz"))],
        ["memory clock", mhz(number(f, "memory_clock_khz"))],
        ["memory", f"{gib(number(f, 'memory_bytes'))}, {f.get('memory_bus_bits', '?')}-bit bus"],
        ["L2", "?" if number(f, "l2_bytes") is None else f"{number(f, 'l2_bytes') / 2**20:.0f} MiB"],
        ["driver / runtime / cuBLAS",
         f"{f.get('driver_version', '?')} / {f.get('runtime_version', '?')} / {cublas_version(res.meta, f, res.ceilings)}"],
        ["ECC", f.get("ecc_enabled", "?")],
        ["UUID, PCI", f"{f.get('uuid', '?')}, {f.get('pci_bus_id', '?')}"],
    ]


def no_gpu_reason(res):
    return ("meta.gpu is null: no CUDA row ran, or the runner could not query a device"
            if res.meta.get("gpu") is None else "meta.gpu has no facts")


def gpu_section(res):
    lines = ["## GPU", ""]
    if not res.facts:
        return lines + [f"No GPU facts in this report ({no_gpu_reason(res)}).", ""]
    return lines + table(["fact", "value"], fact_rows(res))


CEILINGS = [
    # label, key in ceilings, key in facts.peaks, unit
    ("DRAM copy bandwidth (read + write)", "dram_copy_gbps", "dram_gbps", "GB/s"),
    ("cuBLAS SGEMM (fp32)", "sgemm_tflops", "fp32_tflops", "TFLOP/s"),
    ("cuBLAS TF32", "tf32_tflops", "tf32_tensor_tflops", "TFLOP/s"),
    ("cuBLAS BF16 in, fp32 accumulate", "bf16_tflops", "bf16_tensor_tflops", "TFLOP/s"),
]


def ceilings_unmeasured_line(res):
    why = (res.meta.get("gpu") or {}).get("ceilings_unavailable")
    return (f"Ceilings were not measured in this run: {why}." if why else
            "Ceilings were not measured in this run (the runner measures them unless `--no-calibrate`).")


def ceilings_conditions(res):
    return (f"Measured with cuBLAS at {res.ceilings.get('size', '?')}³, median of "
            f"{res.ceilings.get('repeats', '?')} runs; copy of {gib(number(res.ceilings, 'copy_bytes'))}.")


def ceilings_section(res):
    lines = ["## Ceilings: measured next to computed", ""]
    if not res.facts:
        return lines + ["No GPU in this report, so no ceilings.", ""]
    peaks = res.facts.get("peaks") or {}
    if not res.ceilings:
        lines += [ceilings_unmeasured_line(res), ""]
    rows = []
    for label, measured_key, computed_key, unit in CEILINGS:
        measured, computed = number(res.ceilings, measured_key), number(peaks, computed_key)
        share = measured / computed if measured is not None and computed else None
        rows.append([label, unit, kr.fmt(measured, 4), kr.fmt(computed, 4), percent(share)])
    lines += table(["quantity", "unit", "measured", "computed peak", "measured / computed"], rows)
    if res.ceilings:
        lines += [ceilings_conditions(res), ""]
    if peaks.get("basis"):
        lines += [f"Computed peaks: {peaks['basis']}.", ""]
    return lines


# ---------------------------------------------------------------------------------------------- per size

def gemm_header(res, dtype):
    _, label = res.ceiling_of(dtype)
    return ["kernel", "status", "median ms", "TFLOP/s", "ratio to baseline", f"% of measured {label}",
            "AI (min DRAM)", "AI (modelled)", "bound", "cv", "note"]


MOVEMENT_HEADER = ["kernel", "status", "median ms", "GB/s", "fraction of copy bandwidth", "ratio to baseline",
                   "cv", "note"]


def row_note(record):
    roof = kr.roofline(record)
    note = short_reason(record.get("reason")) if record["status"] != "ok" else ""
    if roof.get("faster_than_floor") is True:
        note = f"faster than the roofline floor ({kr.fmt(number(roof, 'floor_ms'))} ms): suspicious"
    return note


def per_size_row(res, record):
    roof = kr.roofline(record)
    tflops = kr.achieved_tflops(record)
    ceiling, _ = res.ceiling_of(record["dtype"])
    share = tflops / ceiling if tflops is not None and ceiling else None
    ok = record["status"] == "ok"
    return [
        record["kernel"],
        record["status"],
        kr.fmt(kr.median_ms(record), 4),
        kr.fmt(tflops),
        kr.fmt(res.ratio(record)),
        percent(share),
        kr.fmt(kr.min_dram_ai(record)),
        kr.fmt(kr.modelled_ai(record)),
        roof.get("bound") or "—",
        kr.fmt(kr.cv(record), 2) if ok else "—",
        row_note(record),
    ]


def movement_row(res, record):
    ok = record["status"] == "ok"
    return [
        record["kernel"],
        record["status"],
        kr.fmt(kr.median_ms(record), 4),
        kr.fmt(kr.achieved_gbps(record), 4),
        kr.fmt(kr.copy_fraction(record, res.copy_gbps)),
        kr.fmt(res.ratio(record)),
        kr.fmt(kr.cv(record), 2) if ok else "—",
        row_note(record),
    ]


def gemm_intro(res):
    lines = ["TFLOP/s = 2·M·N·K / median. AI = FLOP per byte: *min DRAM* reads each input once and writes C "
             "once; *modelled* uses the kernel's own traffic model. `bound` is the runner's classification "
             "(min-DRAM AI against the ridge point).", ""]
    if any(p[3] != "fp32" for p in res.gemm_problems):
        lines += ["% of measured: the row's TFLOP/s against the cuBLAS ceiling of its dtype measured in this run "
                  "(`meta.gpu.ceilings`: SGEMM for fp32, TF32 for tf32, BF16 for bf16).", ""]
    return lines


def movement_intro(res):
    copy = f"{kr.fmt(res.copy_gbps, 4)} GB/s in this run" if res.copy_gbps else "not measured in this run"
    return ["Transposes move data and do no arithmetic, so they are measured in bytes per second, not FLOP/s. "
            "GB/s = bytes moved / median, as the runner recorded it (`gbps`; bytes moved = 2·M·N·4: each fp32 "
            "element read once and written once). *fraction of copy bandwidth* = GB/s / the measured "
            f"device-to-device copy bandwidth (`meta.gpu.ceilings.dram_copy_gbps`, {copy}), the roof a transpose "
            "can reach (`extra.roofline.fraction_of_copy_bandwidth`).", ""]


def per_size_section(res, level=2):
    lines = [heading(level, "Results per size"), ""]
    if res.gemm_problems or not res.movement_problems:
        lines += gemm_intro(res)
    if res.movement_problems:
        lines += movement_intro(res)
    for problem in res.problems:
        lines += [heading(level + 1, kr.problem_label(problem)), ""]
        records = [res.row(k, problem) for k in res.kernels_of(problem)]
        if kr.is_data_movement(problem):
            lines += table(MOVEMENT_HEADER, [movement_row(res, r) for r in records])
        else:
            lines += table(gemm_header(res, problem[3]), [per_size_row(res, r) for r in records])
    return lines


def ratio_table(res, baseline):
    header = ["kernel"] + [kr.problem_label(p) for p in res.problems]
    rows = []
    for kernel in res.kernels:
        rows.append([kernel] + [kr.fmt(res.ratio(res.row(kernel, p), baseline)) if res.row(kernel, p) else "—"
                                for p in res.problems])
    return table(header, rows)


def summary_section(res, level=2):
    lines = [heading(level, "Ratio to baseline, all sizes"), ""]
    if not res.baseline:
        return lines + ["No baseline, so no ratios.", ""]
    lines += [f"Baseline median / kernel median against {kr.describe_baseline(res.baseline)} (each row against its "
              "dtype's baseline; > 1: faster than the baseline). "
              "— : no ok row for the kernel or the baseline at that size.", ""]
    lines += ratio_table(res, res.baseline)
    if res.also_against:
        lines += [heading(level, "Ratio to the second baseline, all sizes"), "",
                  f"The same ratios against {kr.describe_baseline(res.also_against)} of the same run "
                  "(--also-against): its median / the kernel's median, each row against its dtype's kernel.", ""]
        lines += ratio_table(res, res.also_against)
    return lines


def copy_fraction_section(res, level=2):
    """Transposes: each kernel's fraction of the measured copy bandwidth, kernels as rows, sizes as columns."""
    if not res.movement_problems:
        return []
    lines = [heading(level, "Fraction of the measured copy bandwidth, all sizes"), "",
             "GB/s / measured device-to-device copy bandwidth (1.0: as fast as a copy). — : no ok row at that size.",
             ""]
    problems = res.movement_problems
    rows = [[kernel] + [kr.fmt(kr.copy_fraction(res.row(kernel, p), res.copy_gbps)) if res.row(kernel, p) else "—"
                        for p in problems]
            for kernel in res.kernels_over(problems)]
    return lines + table(["kernel"] + [kr.problem_label(p) for p in problems], rows)


# ---------------------------------------------------------------------------------------------- dispatch

def is_dispatch(kernel):
    """A dispatch kernel routes each call to a table's choice: by the project's naming rule its name says so
    (`cpu_dispatch`, `cuda_dispatch_<dtype>`, docs/DISPATCH.md)."""
    return "dispatch" in kernel


def is_reference(record):
    """A trusted in-tree reference (cuBLAS, cuBLASLt): its plugin is named `*_reference`."""
    return str(record.get("plugin", "")).endswith("_reference")


def routed_to(record):
    """The variant a dispatch row ran: the first word of its `extra.variant` ("cuda_splitk (rule 638 ...)")."""
    variant = (record.get("extra") or {}).get("variant")
    return variant.split(" (")[0].strip() if isinstance(variant, str) and variant.strip() else None


def best_single(res, problem, exclude):
    """The fastest ok row at `problem` that is not a dispatch kernel, a reference or a baseline."""
    best = None
    for kernel in res.kernels_of(problem):
        record = res.row(kernel, problem)
        if kernel in exclude or is_dispatch(kernel) or is_reference(record) or record["status"] != "ok":
            continue
        if kr.median_ms(record) is None:
            continue
        if best is None or kr.median_ms(record) < kr.median_ms(best):
            best = record
    return best


def dispatch_rows(res, kernel):
    """(table rows, shapes with both ratios, shapes within 5 % of the best single kernel) of one dispatch kernel."""
    exclude = set(kr.baseline_kernels(res.baseline))
    rows, compared, close = [], 0, 0
    for problem in res.gemm_problems:
        record = res.row(kernel, problem)
        if record is None:
            continue
        best = best_single(res, problem, exclude)
        ok = record["status"] == "ok" and kr.median_ms(record) is not None
        versus = kr.median_ms(best) / kr.median_ms(record) if ok and best else None
        if versus is not None:
            compared += 1
            close += versus >= 0.95
        rows.append([
            kr.problem_label(problem),
            record["status"] if not ok else kr.fmt(kr.median_ms(record), 4),
            f"`{routed_to(record)}`" if ok and routed_to(record) else "—",
            kr.fmt(res.ratio(record)) if ok else "—",
            f"`{best['kernel']}`" if best else "—",
            kr.fmt(res.ratio(best)) if best else "—",
            kr.fmt(versus),
        ])
    return rows, compared, close


def dispatch_section(res, level=2):
    """GEMM reports with a dispatch kernel: each shape's routed variant against the baseline and against the
    fastest single kernel the same report measured there."""
    kernels = [k for k in res.kernels_over(res.gemm_problems) if is_dispatch(k)]
    if not kernels:
        return []
    lines = [heading(level, "Dispatch against the baseline and the best single kernel"), "",
             "A dispatch kernel runs, for each call, the variant its table chose for the shape (`ran`: the row's "
             "`extra.variant`). Per shape: its median, its ratio to the baseline, the fastest single kernel this "
             "report measured at that shape (an ok row that is neither a dispatch kernel, a baseline nor a "
             "reference: a plugin named `*_reference`), that kernel's ratio to the baseline, and *vs best* = best "
             "single kernel's median / the dispatch kernel's (1: the table chose as well as this run could; "
             "below 1: a kernel measured here was faster).", ""]
    for kernel in kernels:
        rows, compared, close = dispatch_rows(res, kernel)
        lines += [heading(level + 1, f"`{kernel}`"), ""]
        lines += table(["shape", "median (ms)", "ran", "× baseline", "best single kernel", "its × baseline",
                        "vs best"], rows)
        lines += [f"Within 5 % of the best single kernel (vs best ≥ 0.95) at {close} of {compared} shapes.", ""]
    return lines


# ---------------------------------------------------------------------------------------------- roofline (GEMM)

def roof_parameters(res):
    """Distinct (dtype, peak, bandwidth, ridge) the runner used, from the GEMM rows' roofline blocks (a
    transpose's roofline block has no peak: its roof is the copy bandwidth, shown in its own tables)."""
    seen = []
    for r in res.gemm_records():
        roof = kr.roofline(r)
        if roof:
            entry = (r["dtype"], number(roof, "peak_tflops"), number(roof, "bandwidth_gbps"), number(roof, "ridge_ai"))
            if entry not in seen:
                seen.append(entry)
    return seen


def sizes_text(subset, universe):
    """A list of sizes, shortened against the sizes it is drawn from ("all", "all but ...")."""
    if not subset:
        return "—"
    if len(subset) == len(universe):
        return "all"
    if len(subset) > len(universe) / 2:
        return "all but " + ", ".join(u for u in universe if u not in subset)
    return ", ".join(subset)


def shape_bound_rows(res):
    """Per size: min-DRAM AI, the ridge point and the runner's bound (the same for every kernel)."""
    rows = []
    for problem in res.gemm_problems:
        roofs = [kr.roofline(res.row(k, problem)) for k in res.kernels_of(problem)]
        roof = next((r for r in roofs if r.get("bound")), None)
        if roof:
            rows.append([kr.problem_label(problem), kr.fmt(number(roof, "arithmetic_intensity")),
                         kr.fmt(number(roof, "ridge_ai")), roof["bound"]])
    return rows


def kernel_bound_rows(res):
    """Per kernel: where the runner's classification and the kernel's own traffic model put it."""
    rows = []
    for kernel in res.kernels:
        labelled = [(kr.problem_label(p), kr.roofline(res.row(kernel, p)))
                    for p in res.gemm_problems if res.row(kernel, p) is not None]
        labelled = [(label, roof) for label, roof in labelled if roof.get("bound")]
        if not labelled:
            continue
        universe = [label for label, _ in labelled]
        by_runner = {b: [label for label, roof in labelled if roof["bound"] == b] for b in ("memory", "compute")}
        modelled = [(label, number(roof, "modelled_ai"), number(roof, "ridge_ai")) for label, roof in labelled]
        modelled = [(label, ai, ridge) for label, ai, ridge in modelled if ai is not None and ridge is not None]
        below = [label for label, ai, ridge in modelled if ai < ridge]
        above = [label for label, ai, ridge in modelled if ai >= ridge]
        rows.append([kernel, sizes_text(by_runner["memory"], universe), sizes_text(by_runner["compute"], universe),
                     sizes_text(below, universe) if modelled else "no model",
                     sizes_text(above, universe) if modelled else "no model"])
    return rows


def roofline_section(res, chart_lines, level=2):
    lines = [heading(level, "Roofline"), ""]
    params = roof_parameters(res)
    if not params:
        # No chart either: a roofline drawn without the roof the runner used would show nothing true.
        return lines + ["No roofline data: no row carries `extra.roofline` (the runner adds it to ok CUDA rows "
                        "when the report has GPU facts).", ""]
    lines += ["The roof the runner used: for each of peak and bandwidth, the larger of measured and computed "
              "(core/src/measure/roofline.hpp).", ""]
    lines += table(["dtype", "peak TFLOP/s", "bandwidth GB/s", "ridge point (FLOP/byte)"],
                   [[d, kr.fmt(p, 4), kr.fmt(b, 4), kr.fmt(ridge)] for d, p, b, ridge in params])
    lines += ["By size: the runner's `bound` compares the minimal-DRAM arithmetic intensity with the ridge "
              "point, so it is a property of the shape and the same for every kernel.", ""]
    lines += table(["size", "AI (min DRAM)", "ridge point", "bound"], shape_bound_rows(res))
    lines += ["By kernel, over the sizes where it ran ok: the runner's classification, and the kernel's own "
              "traffic model (`extra.model_bytes`, modelled AI) against the same ridge point.", ""]
    lines += table(["kernel", "memory bound (min DRAM)", "compute bound (min DRAM)",
                    "memory bound (modelled AI)", "compute bound (modelled AI)"], kernel_bound_rows(res))
    suspicious = [r for r in res.gemm_records() if kr.roofline(r).get("faster_than_floor") is True]
    if suspicious:
        lines += ["Faster than the roofline floor allows (median < 0.9 × floor), so suspicious: "
                  + ", ".join(f"{r['kernel']} at {kr.problem_label(kr.problem_of(r))}" for r in suspicious), ""]
    return lines + chart_lines


# ---------------------------------------------------------------------------------------------- progression (GEMM)

def attribute_pair(a, b, section, key):
    def value(record):
        v = ((record.get("extra") or {}).get(section) or {}).get(key)
        if isinstance(v, list):
            return "×".join(str(x) for x in v)
        return "?" if v is None else str(v)
    return f"{value(a)} → {value(b)}"


PROGRESSION_HEADER = ["size", "earlier ms", "later ms", "speedup", "cv", "registers", "static smem B",
                      "local (spill) B", "block", "grid", "dynamic smem B"]


def progression_pair(res, earlier, later, level):
    """Lines for one step of the progression: sizes where `later` is not PROGRESSION_THRESHOLD x faster."""
    slow, not_compared = [], []
    for problem in res.gemm_problems:
        a, b = res.row(earlier, problem), res.row(later, problem)
        if a is None or b is None:
            continue
        ma, mb = kr.median_ms(a), kr.median_ms(b)
        if ma is None or mb is None:
            statuses = [f"{r['kernel']} {r['status']}" for r in (a, b) if r["status"] != "ok"]
            not_compared.append(f"{kr.problem_label(problem)} ({', '.join(statuses)})")
            continue
        if ma / mb < PROGRESSION_THRESHOLD:
            slow.append([kr.problem_label(problem), kr.fmt(ma, 4), kr.fmt(mb, 4), kr.fmt(ma / mb),
                         f"{kr.fmt(kr.cv(a), 2)} → {kr.fmt(kr.cv(b), 2)}",
                         attribute_pair(a, b, "attributes", "registers"),
                         attribute_pair(a, b, "attributes", "static_shared_bytes"),
                         attribute_pair(a, b, "attributes", "local_bytes"),
                         attribute_pair(a, b, "launch", "block"), attribute_pair(a, b, "launch", "grid"),
                         attribute_pair(a, b, "launch", "dynamic_smem")])
    lines = [heading(level, f"{earlier} → {later}"), ""]
    if slow:
        lines += table(PROGRESSION_HEADER, slow)
    else:
        lines += [f"Faster by at least {PROGRESSION_THRESHOLD}× at every size both ran.", ""]
    if not_compared:
        lines += ["Not compared: " + "; ".join(not_compared) + ".", ""]
    return lines


def progression_section(res, level=2):
    """The lecture's GEMM kernels only (kreg_report.LECTURE_ORDER): tensor-core and transpose kernels are not
    steps of it, and a report without GEMM rows has no progression section."""
    if not res.gemm_problems:
        return []
    lines = [heading(level, "Where the progression does not improve"), ""]
    gemm_kernels = res.kernels_over(res.gemm_problems)
    present = [k for k in kr.LECTURE_ORDER if k in gemm_kernels]
    missing = [k for k in kr.LECTURE_ORDER if k not in gemm_kernels]
    if len(present) < 2:
        return lines + ["Fewer than two kernels of the CUDA progression are in this report.", ""]
    lines += [f"Consecutive kernels of the lecture order present in this report; listed are the sizes where "
              f"the later one is less than {PROGRESSION_THRESHOLD}× faster (speedup = earlier median / later "
              "median). Figures are `earlier → later`, from `extra.attributes` and `extra.launch`.", ""]
    if missing:
        lines += ["Not in this report, so skipped over: " + ", ".join(missing) + ".", ""]
    for earlier, later in zip(present, present[1:]):
        lines += progression_pair(res, earlier, later, level + 1)
    return lines


# ---------------------------------------------------------------------------------------------- charts

CHART_NAMES = ["charts", "tflops", "time", "gbps", "gbps_block"]


def chart_lines(charts, md_dir, names):
    """Markdown image links for the charts in `names`, or the reason they are missing."""
    lines = []
    for name in names:
        entry = charts.get(name)
        if entry is None:
            continue
        title, path, skipped = entry
        if skipped:
            lines += [f"*{title} skipped: {skipped}.*", ""]
        else:
            link = os.path.relpath(path, md_dir).replace(os.sep, "/")
            lines += [f"![{title}]({link})", ""]
    return lines


def import_charts():
    """The kreg_charts module, or the reason matplotlib cannot be used."""
    try:
        import kreg_charts
        return kreg_charts, None
    except ImportError as e:
        return None, (f"matplotlib is not importable by {sys.executable} ({e}): install python3-matplotlib and run "
                      "the tool as typed (it starts /usr/bin/python3), or pass --no-charts to write the document "
                      "without charts")


def render_charts(kreg_charts, res, charts_dir):
    """{name: (title, path, reason-skipped-or-None)}; one note under "charts" with --no-charts."""
    if kreg_charts is None:
        return {"charts": ("Charts", None, "not drawn (--no-charts)")}
    os.makedirs(charts_dir, exist_ok=True)
    return kreg_charts.render_all(res, charts_dir, bool(roof_parameters(res)))


def results_sections(res, charts, md_dir, level):
    """Everything of one report after its provenance: per size, summaries, charts, roofline, progression."""
    lines = per_size_section(res, level) + summary_section(res, level) + copy_fraction_section(res, level)
    lines += dispatch_section(res, level)
    lines += [heading(level, "Charts"), ""] + chart_lines(charts, md_dir, CHART_NAMES)
    if res.gemm_problems or not res.movement_problems:
        lines += roofline_section(res, chart_lines(charts, md_dir, ["roofline"]), level)
    return lines + progression_section(res, level)


# ---------------------------------------------------------------------------------------------- several reports

def github_anchor(title):
    """The anchor GitHub gives a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def gpu_key(res):
    """Reports with equal GPU facts ran on the same GPU (the facts carry its UUID)."""
    return json.dumps(res.facts, sort_keys=True) if res.facts else None


def gpu_groups(parts):
    """[(key, [Results, ...])] in first-seen order; key None: reports without GPU facts."""
    groups = {}
    for res in parts:
        groups.setdefault(gpu_key(res), []).append(res)
    return list(groups.items())


def multi_header(parts, tool_command):
    lines = [
        "# kreg results",
        "",
        "<!-- Generated by tools/kreg_results.py from runner reports. Do not edit by hand: re-run the tool. -->",
        "",
        f"Generated by `{tool_command}`.",
        "",
    ]
    for res in parts:
        if res.meta.get("synthetic") is True:
            lines += [f"> **SYNTHETIC DATA — not a measurement** in `{res.path}` ({res.name}). "
                      f"{res.meta.get('synthetic_note', '')}".rstrip(), ""]
    lines += ["One part per runner report, each with its own command, baseline and results; first the GPUs "
              "they ran on and the ceilings each run measured, side by side.", ""]
    rows = []
    for res in parts:
        operations = sorted({kr.operation_of(r) for r in res.records}) or ["—"]
        dtypes = sorted({r["dtype"] for r in res.records}) or ["—"]
        ok = sum(1 for r in res.records if r["status"] == "ok")
        rows.append([f"[{res.name}](#{github_anchor(res.name)})", f"`{res.path}`", ", ".join(operations),
                     ", ".join(dtypes), f"{len(res.records)} ({ok} ok)", res.meta.get("timestamp", "unknown"),
                     f"`{res.meta.get('git_sha', 'unknown')}`",
                     kr.describe_baseline(res.baseline) if res.baseline else "none"])
    return lines + table(["part", "report", "operation", "dtypes", "rows", "date (UTC)", "git sha", "baseline"], rows)


def gpu_label(index, members):
    return f"GPU {index} ({', '.join(m.name for m in members)})"


def multi_gpu_section(parts):
    lines = ["## GPU", ""]
    groups = gpu_groups(parts)
    with_gpu = [(key, members) for key, members in groups if key is not None]
    without = [m for key, members in groups if key is None for m in members]
    if len(with_gpu) == 1:
        members = with_gpu[0][1]
        lines += [f"The reports {', '.join(m.name for m in members)} ran on this GPU (equal `meta.gpu.facts`, "
                  "UUID included)." if len(members) > 1 else f"The report {members[0].name} ran on this GPU.", ""]
        lines += table(["fact", "value"], fact_rows(members[0]))
    elif with_gpu:
        lines += ["The reports ran on different GPUs (their `meta.gpu.facts` differ), one column each.", ""]
        columns = [fact_rows(members[0]) for _, members in with_gpu]
        header = ["fact"] + [gpu_label(i + 1, members) for i, (_, members) in enumerate(with_gpu)]
        lines += table(header, [[columns[0][j][0]] + [c[j][1] for c in columns] for j in range(len(columns[0]))])
    for res in without:
        lines += [f"No GPU facts in {res.name} ({no_gpu_reason(res)}).", ""]
    return lines


def multi_ceilings_section(parts):
    """A table per GPU: the computed peaks once, each report's measured ceilings in a column of its own."""
    lines = ["## Ceilings: measured next to computed", "",
             "Each run measures its own ceilings at its start, so each report has its own column: measured "
             "(measured / computed peak).", ""]
    groups = [(key, members) for key, members in gpu_groups(parts) if key is not None]
    if not groups:
        return lines + ["No GPU in these reports, so no ceilings.", ""]
    for index, (_, members) in enumerate(groups):
        if len(groups) > 1:
            lines += [heading(3, gpu_label(index + 1, members)), ""]
        peaks = members[0].facts.get("peaks") or {}
        rows = []
        for label, measured_key, computed_key, unit in CEILINGS:
            computed = number(peaks, computed_key)
            row = [label, unit, kr.fmt(computed, 4)]
            for res in members:
                measured = number(res.ceilings, measured_key)
                share = measured / computed if measured is not None and computed else None
                row.append("—" if measured is None else f"{kr.fmt(measured, 4)} ({percent(share)})")
            rows.append(row)
        lines += table(["quantity", "unit", "computed peak"] + [f"measured: {m.name}" for m in members], rows)
        conditions = [ceilings_conditions(res) if res.ceilings else ceilings_unmeasured_line(res) for res in members]
        if len(members) > 1 and len(set(conditions)) == 1:
            lines += [f"Each run: {conditions[0][0].lower()}{conditions[0][1:]}", ""]
        else:
            lines += [line for res, text in zip(members, conditions) for line in (f"{res.name}: {text}", "")]
        if peaks.get("basis"):
            lines += [f"Computed peaks: {peaks['basis']}.", ""]
    return lines


def part_timer(res):
    """The one timer every ok row of a report was timed by (the row's "timer"), or None for none or several."""
    timers = {r.get("timer") for r in res.records if r.get("status") == "ok" and r.get("timer")}
    return next(iter(timers)) if len(timers) == 1 else None


def timer_pairs(parts):
    """(a, b) for each two reports of the same GPU (equal meta.gpu.facts) that share kernels and shapes and were
    each timed by one timer, a different one: the same calls seen by two clocks."""
    pairs = []
    for i, a in enumerate(parts):
        for b in parts[i + 1:]:
            ta, tb = part_timer(a), part_timer(b)
            if ta and tb and ta != tb and a.facts == b.facts and any(key in b.rows for key in a.rows):
                pairs.append((a, b))
    return pairs


def timers_section(parts):
    """A table per pair of timer_pairs: each shared row's median by both timers, their ratio, and the row's
    ratio to its report's own baseline under each, so what a timer changes in a verdict is on one line."""
    lines = []
    for a, b in timer_pairs(parts):
        ta, tb = part_timer(a), part_timer(b)
        lines += [heading(2, f"Timers side by side: {a.name} and {b.name}"), "",
                  f"The same kernels and shapes on the same GPU, timed by `{ta}` in {a.name} and by `{tb}` in "
                  f"{b.name}. Medians in microseconds; × baseline is each report's baseline median over the row's "
                  "(> 1: faster than the baseline), each under its own timer.", ""]
        rows = []
        for problem in a.problems:
            for kernel in a.kernels:
                ra, rb = a.row(kernel, problem), b.row(kernel, problem)
                if ra is None or rb is None:
                    continue
                ma, mb = kr.median_ms(ra), kr.median_ms(rb)
                shown = [kr.fmt(m * 1e3, 4) if m else cell(r["status"]) for m, r in ((ma, ra), (mb, rb))]
                rows.append([f"`{kernel}`", kr.problem_label(problem)] + shown +
                            [kr.fmt(mb / ma if ma and mb else None, 4), kr.fmt(a.ratio(ra)), kr.fmt(b.ratio(rb))])
        lines += table(["kernel", "problem", f"{ta} (µs)", f"{tb} (µs)", f"{tb} / {ta}",
                        f"× baseline ({ta})", f"× baseline ({tb})"], rows)
    return lines


def report_part(res, charts, md_dir):
    lines = [heading(2, res.name), ""]
    description = (res.meta.get("config") or {}).get("description") if isinstance(res.meta.get("config"), dict) else None
    lines += [f"From `{res.path}`" + (f": {description}" if description else "") + ".", ""]
    lines += synthetic_banner(res)
    gpu = f"{res.facts.get('name', '?')}, {res.facts.get('uuid', '?')}" if res.facts else "none"
    lines += [heading(3, "How these numbers were produced"), ""] + provenance_lines(res)[:-1]
    lines += [f"- GPU: {gpu}", ""]
    return lines + results_sections(res, charts[id(res)], md_dir, 3)


# ---------------------------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("reports", nargs="+", metavar="REPORT",
                   help="runner JSON report(s); with several, the document has one part per report, in this order")
    p.add_argument("--out", required=True, help="Markdown file to write, e.g. docs/RESULTS.md")
    p.add_argument("--charts", help="folder for the PNG charts (default: charts/ next to --out)")
    p.add_argument("--baseline", action="append", default=[], metavar="[REPORT:]SPEC",
                   help="kernel the ratios are taken against: NAME, or DTYPE=NAME,... per dtype (default: each "
                   "report's own baseline); REPORT:SPEC for one of the reports given (repeatable)")
    p.add_argument("--also-against", action="append", default=[], metavar="[REPORT:]SPEC",
                   help="a second baseline of the same run, as --baseline takes it: a second ratio table against "
                   "it (e.g. bf16=cublaslt_bf16,tf32=cublaslt_tf32); REPORT:SPEC for one report (repeatable)")
    p.add_argument("--command", action="append", default=[], metavar="[REPORT:]TEXT",
                   help="the exact command that produced the report (default: meta.argv joined); with several "
                   "reports, REPORT:TEXT for each one (repeatable)")
    p.add_argument("--allow-synthetic", action="store_true",
                   help="render a report marked synthetic (meta.synthetic); for tests only")
    p.add_argument("--no-charts", action="store_true", help="write the document without charts (no matplotlib needed)")
    p.add_argument("--force", action="store_true", help="replace an existing document and charts")
    return p.parse_args(argv)


def same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def split_qualified(value, reports):
    """(index of the report named by "REPORT:" at the start of value, or None; the rest). REPORT is a report
    path as given on the command line, or a path to the same file."""
    for i, ch in enumerate(value):
        if ch != ":":
            continue
        prefix = value[:i]
        for index, path in enumerate(reports):
            if prefix == path or (prefix and same_file(prefix, path)):
                return index, value[i + 1:]
    return None, value


def per_report_options(option, values, reports):
    """[value for each report, or None]: an unqualified value serves every report, a REPORT: one wins for
    its report. Raises ReportError naming the option for a value given twice."""
    general, specific = None, {}
    for value in values:
        index, rest = split_qualified(value, reports)
        named = value.split(":", 1)[0]
        if index is None and ":" in value and (named.endswith(".json") or os.sep in named):
            raise kr.ReportError(f"{option} {value}: '{named}' is not one of the reports given "
                                 f"({', '.join(reports)}); name a report as it is given, or the same file")
        if index is None:
            if general is not None:
                raise kr.ReportError(f"{option}: given twice for every report ('{general}', '{value}'); qualify "
                                     f"each with the report it is for: {option} REPORT:VALUE")
            general = rest
        else:
            if index in specific:
                raise kr.ReportError(f"{option}: given twice for '{reports[index]}'")
            specific[index] = rest
    return [specific.get(i, general) for i in range(len(reports))]


def check_inputs(report, path, args):
    """The reason the report must not be rendered, or None."""
    meta = report["meta"]
    if meta.get("synthetic") is True and not args.allow_synthetic:
        note = meta.get("synthetic_note", "")
        return (f"refusing to write results from '{path}': its meta.synthetic is true (a test fixture, not "
                f"a measurement{': ' + note if note else ''}). Pass --allow-synthetic to render it anyway.")
    return None


def choose_baseline(report, path, baseline_text, option="--baseline"):
    if baseline_text is not None:
        try:
            baseline = kr.parse_baseline_text(baseline_text)
        except ValueError as e:
            raise kr.ReportError(f"{option} for '{path}': {e}") from e
    elif option != "--baseline":
        return None
    else:
        baseline = report.get("baseline")
    if baseline is not None and not isinstance(baseline, (str, dict)):
        raise kr.ReportError(f"'{path}': \"baseline\" is neither a kernel name nor an object per dtype")
    for kernel in kr.baseline_kernels(baseline):
        if not any(r["kernel"] == kernel for r in report["records"]):
            raise kr.ReportError(f"{option[2:]} kernel '{kernel}' has no rows in '{path}'")
    return baseline


def runner_command(report, command):
    if command is not None:
        return command
    argv = report["meta"].get("argv")
    return shlex.join(argv) if isinstance(argv, list) and argv else "(not recorded: meta.argv is missing)"


def slug(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "report"


def load_all(args):
    """([Results] for every report, None), or (None, (exit status, message)) for the first report or option
    that stops the tool: every report is read and checked before anything is written."""
    reports = args.reports
    for i, path in enumerate(reports):
        for earlier in reports[:i]:
            if path == earlier or same_file(path, earlier):
                return None, (2, f"report '{path}' is given twice (also as '{earlier}')")
    try:
        baselines = per_report_options("--baseline", args.baseline, reports)
        seconds = per_report_options("--also-against", args.also_against, reports)
        commands = per_report_options("--command", args.command, reports)
        if len(reports) > 1 and any(split_qualified(c, reports)[0] is None for c in args.command):
            raise kr.ReportError("--command: with several reports, say which report each command is for: "
                                 "--command REPORT:COMMAND")
    except kr.ReportError as e:
        return None, (2, str(e))
    parts, names = [], []
    for path, baseline_text, second_text, command in zip(reports, baselines, seconds, commands):
        try:
            report = kr.load_report(path)
            refusal = check_inputs(report, path, args)
            if refusal:
                return None, (3, refusal)
            name = config_name(report, path)
            if name in names:  # two runs of one config: the title says which report
                name = f"{name} ({os.path.basename(path)})"
            names.append(name)
            parts.append(Results(report, choose_baseline(report, path, baseline_text), path,
                                 runner_command(report, command), name,
                                 choose_baseline(report, path, second_text, "--also-against")))
        except kr.ReportError as e:
            return None, (2, str(e))
    if len(parts) > 1:
        for res in parts:
            res.chart_prefix = slug(res.name) + "-"
    return parts, None


def build_document(parts, tool_command, charts, md_dir):
    if len(parts) == 1:
        res = parts[0]
        lines = header_section(res, tool_command) + gpu_section(res) + ceilings_section(res)
        lines += results_sections(res, charts[id(res)], md_dir, 2)
    else:
        lines = multi_header(parts, tool_command) + multi_gpu_section(parts) + multi_ceilings_section(parts)
        lines += timers_section(parts)
        for res in parts:
            lines += report_part(res, charts, md_dir)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    parts, failure = load_all(args)
    if failure:
        status, message = failure
        print(f"kreg_results: {message}", file=sys.stderr)
        return status
    md_dir = os.path.dirname(os.path.abspath(args.out))
    charts_dir = args.charts or os.path.join(md_dir, "charts")
    kreg_charts = None
    if not args.no_charts:
        kreg_charts, why_not = import_charts()
        if kreg_charts is None:
            print(f"kreg_results: cannot draw the charts: {why_not}", file=sys.stderr)
            return 4
    outputs = [args.out]
    if kreg_charts is not None:
        for res in parts:
            outputs += [os.path.join(charts_dir, f) for f in kreg_charts.chart_files(res, bool(roof_parameters(res)))]
    existing = [p for p in outputs if os.path.exists(p)]
    if existing and not args.force:
        print(f"kreg_results: not overwriting {', '.join(existing)}: pass --force to replace, or choose another "
              "--out/--charts", file=sys.stderr)
        return 5
    charts = {id(res): render_charts(kreg_charts, res, charts_dir) for res in parts}
    tool_command = shlex.join([sys.argv[0]] + argv)
    text = build_document(parts, tool_command, charts, md_dir)
    os.makedirs(md_dir, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    drawn = sum(1 for c in charts.values() for e in c.values() if not e[2])
    skipped = ["not drawn (--no-charts)"] if kreg_charts is None else \
        [f"{res.name}: {e[2]}" if len(parts) > 1 else e[2] for res in parts for e in charts[id(res)].values() if e[2]]
    print(f"kreg_results: wrote {args.out}" + (f"; charts skipped: {'; '.join(skipped)}" if skipped else
                                               f" and {drawn} chart(s) in {charts_dir}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

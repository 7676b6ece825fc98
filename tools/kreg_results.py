#!/usr/bin/python3
"""Turn one kreg runner report (JSON) into a results document (Markdown) and PNG charts.

    tools/kreg_results.py REPORT.json --out docs/RESULTS.md --charts docs/charts/ \
        [--baseline cublas_sgemm] [--command "runner ..."] [--allow-synthetic] [--no-charts] [--force]

Everything in the document is computed from the report; nothing is typed by hand. Its sections:

  header          that the file is generated, and the command that generated it
  provenance      the exact runner command (meta.argv, or --command), date, git sha, host
  GPU             name, compute capability, SMs, clocks, driver/runtime/cuBLAS (meta.gpu.facts)
  ceilings        measured ceilings (meta.gpu.ceilings) next to the computed peaks (meta.gpu.facts.peaks)
  per size        one table per (shape, dtype): median, TFLOP/s, ratio to the baseline (baseline median /
                  kernel median, both from this report), % of the measured SGEMM ceiling, arithmetic
                  intensity (minimal DRAM traffic) and the kernel's modelled one, bound, cv; rows that are
                  not ok show their status and reason
  summary         ratio to the baseline, kernels as rows and sizes as columns
  charts          TFLOP/s and time against size (square shapes), each only when the report has ok rows of
                  square shapes
  roofline        the roof the runner used (ridge point), which kernels are memory or compute bound, and
                  a roofline chart, only when the report's rows carry roofline data
  progression     for each consecutive pair of the CUDA lecture kernels, the sizes where the later one is
                  not at least 1.05x faster, with register, shared-memory, spill and launch figures so the
                  author can explain why; the tool states facts and offers no explanation

A report marked synthetic (meta.synthetic = true, a test fixture) is refused unless --allow-synthetic.
Charts need matplotlib (Debian's python3-matplotlib, hence #!/usr/bin/python3): without it the tool stops
before writing anything, unless --no-charts asks for the document alone. An existing document or chart is
replaced only with --force.

Exit status: 0 written; 2 the report cannot be read (or the baseline has no rows); 3 a synthetic report
without --allow-synthetic; 4 matplotlib is missing and --no-charts was not given; 5 an output file exists
and --force was not given. Nothing is written unless the status is 0.
"""

import argparse
import os
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
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


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


# ---------------------------------------------------------------------------------------------- context

class Results:
    """The report plus everything derived from it once: row index, orders, baseline."""

    def __init__(self, report, baseline):
        self.report = report
        self.meta = report["meta"]
        self.records = report["records"]
        self.rows = kr.index_rows(self.records)
        self.kernels = kr.kernel_order(self.records)
        self.problems = kr.problem_order(self.records)
        self.baseline = baseline
        self.facts, self.ceilings = gpu_facts(self.meta)
        self.sgemm_ceiling = number(self.ceilings, "sgemm_tflops")

    def row(self, kernel, problem):
        return self.rows.get((kernel, problem))

    def ratio(self, record):
        kernel = kr.baseline_kernel(self.baseline, record["dtype"])
        if not kernel:
            return None
        return kr.baseline_ratio(record, self.row(kernel, kr.problem_of(record)))

    def kernels_of(self, problem):
        return [k for k in self.kernels if self.row(k, problem) is not None]


# ---------------------------------------------------------------------------------------------- sections

def header_section(res, tool_command, runner_command):
    lines = [
        "# kreg results",
        "",
        "<!-- Generated by tools/kreg_results.py from a runner report. Do not edit by hand: re-run the tool. -->",
        "",
        f"Generated by `{tool_command}`.",
        "",
    ]
    if res.meta.get("synthetic") is True:
        note = res.meta.get("synthetic_note", "")
        lines += [f"> **SYNTHETIC DATA — not a measurement.** {note}".rstrip(), ""]
    host = res.meta.get("host") or {}
    lines += [
        "## How these numbers were produced",
        "",
        "Runner command (exact):",
        "",
        "```",
        runner_command,
        "```",
        "",
        f"- Date (UTC): {res.meta.get('timestamp', 'unknown')}",
        f"- kreg {res.meta.get('kreg_version', '?')}, git sha `{res.meta.get('git_sha', 'unknown')}`, "
        f"report schema {res.meta.get('schema_version', '?')}",
        f"- Host: {host.get('hostname', '?')}, {host.get('cpu_model', '?')}, "
        f"{host.get('logical_cpus', '?')} logical CPUs, {host.get('os', '?')}",
        f"- Baseline for ratios: {kr.describe_baseline(res.baseline)} (ratio = baseline median / kernel median, "
        "same shape and dtype, same report)" if res.baseline else "- Baseline for ratios: none (no --baseline and none in the report)",
        "",
    ]
    return lines


def mhz(khz):
    return "?" if khz is None else f"{khz / 1000:.0f} MHz"


def gib(value):
    return "?" if value is None else f"{value / 2**30:.1f} GiB"


def gpu_section(res):
    lines = ["## GPU", ""]
    gpu = res.meta.get("gpu")
    if not res.facts:
        why = "meta.gpu is null: no CUDA row ran, or the runner could not query a device" if gpu is None \
            else "meta.gpu has no facts"
        return lines + [f"No GPU facts in this report ({why}).", ""]
    f = res.facts
    rows = [
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
    return lines + table(["fact", "value"], rows)


CEILINGS = [
    # label, key in ceilings, key in facts.peaks, unit
    ("DRAM copy bandwidth (read + write)", "dram_copy_gbps", "dram_gbps", "GB/s"),
    ("cuBLAS SGEMM (fp32)", "sgemm_tflops", "fp32_tflops", "TFLOP/s"),
    ("cuBLAS TF32", "tf32_tflops", "tf32_tensor_tflops", "TFLOP/s"),
    ("cuBLAS BF16 in, fp32 accumulate", "bf16_tflops", "bf16_tensor_tflops", "TFLOP/s"),
]


def ceilings_section(res):
    lines = ["## Ceilings: measured next to computed", ""]
    if not res.facts:
        return lines + ["No GPU in this report, so no ceilings.", ""]
    peaks = res.facts.get("peaks") or {}
    if not res.ceilings:
        why = (res.meta.get("gpu") or {}).get("ceilings_unavailable")
        lines += [f"Ceilings were not measured in this run: {why}." if why else
                  "Ceilings were not measured in this run (the runner measures them unless `--no-calibrate`).", ""]
    rows = []
    for label, measured_key, computed_key, unit in CEILINGS:
        measured, computed = number(res.ceilings, measured_key), number(peaks, computed_key)
        share = measured / computed if measured is not None and computed else None
        rows.append([label, unit, kr.fmt(measured, 4), kr.fmt(computed, 4), percent(share)])
    lines += table(["quantity", "unit", "measured", "computed peak", "measured / computed"], rows)
    if res.ceilings:
        lines += [f"Measured with cuBLAS at {res.ceilings.get('size', '?')}³, median of "
                  f"{res.ceilings.get('repeats', '?')} runs; copy of {gib(number(res.ceilings, 'copy_bytes'))}.", ""]
    if peaks.get("basis"):
        lines += [f"Computed peaks: {peaks['basis']}.", ""]
    return lines


PER_SIZE_HEADER = ["kernel", "status", "median ms", "TFLOP/s", "ratio to baseline", "% of measured SGEMM",
                   "AI (min DRAM)", "AI (modelled)", "bound", "cv", "note"]


def per_size_row(res, record):
    roof = kr.roofline(record)
    note = short_reason(record.get("reason")) if record["status"] != "ok" else ""
    if roof.get("faster_than_floor") is True:
        note = f"faster than the roofline floor ({kr.fmt(number(roof, 'floor_ms'))} ms): suspicious"
    tflops = kr.achieved_tflops(record)
    share = tflops / res.sgemm_ceiling if tflops is not None and res.sgemm_ceiling else None
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
        note,
    ]


def per_size_section(res):
    lines = ["## Results per size", "",
             "TFLOP/s = 2·M·N·K / median. AI = FLOP per byte: *min DRAM* reads each input once and writes C "
             "once; *modelled* uses the kernel's own traffic model. `bound` is the runner's classification "
             "(min-DRAM AI against the ridge point).", ""]
    for problem in res.problems:
        lines += [f"### {kr.problem_label(problem)}", ""]
        lines += table(PER_SIZE_HEADER, [per_size_row(res, res.row(k, problem)) for k in res.kernels_of(problem)])
    return lines


def summary_section(res):
    lines = ["## Ratio to baseline, all sizes", ""]
    if not res.baseline:
        return lines + ["No baseline, so no ratios.", ""]
    lines += [f"Baseline median / kernel median against {kr.describe_baseline(res.baseline)} (each row against its "
              "dtype's baseline; > 1: faster than the baseline). "
              "— : no ok row for the kernel or the baseline at that size.", ""]
    header = ["kernel"] + [kr.problem_label(p) for p in res.problems]
    rows = []
    for kernel in res.kernels:
        rows.append([kernel] + [kr.fmt(res.ratio(res.row(kernel, p))) if res.row(kernel, p) else "—"
                                for p in res.problems])
    return lines + table(header, rows)


def roof_parameters(res):
    """Distinct (dtype, peak, bandwidth, ridge) the runner used, from the rows' roofline blocks."""
    seen = []
    for r in res.records:
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
    for problem in res.problems:
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
                    for p in res.problems if res.row(kernel, p) is not None]
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


def roofline_section(res, chart_lines):
    lines = ["## Roofline", ""]
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
    suspicious = [r for r in res.records if kr.roofline(r).get("faster_than_floor") is True]
    if suspicious:
        lines += ["Faster than the roofline floor allows (median < 0.9 × floor), so suspicious: "
                  + ", ".join(f"{r['kernel']} at {kr.problem_label(kr.problem_of(r))}" for r in suspicious), ""]
    return lines + chart_lines


def attribute_pair(a, b, section, key):
    def value(record):
        v = ((record.get("extra") or {}).get(section) or {}).get(key)
        if isinstance(v, list):
            return "×".join(str(x) for x in v)
        return "?" if v is None else str(v)
    return f"{value(a)} → {value(b)}"


PROGRESSION_HEADER = ["size", "earlier ms", "later ms", "speedup", "cv", "registers", "static smem B",
                      "local (spill) B", "block", "grid", "dynamic smem B"]


def progression_pair(res, earlier, later):
    """Lines for one step of the progression: sizes where `later` is not PROGRESSION_THRESHOLD x faster."""
    slow, not_compared = [], []
    for problem in res.problems:
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
    lines = [f"### {earlier} → {later}", ""]
    if slow:
        lines += table(PROGRESSION_HEADER, slow)
    else:
        lines += [f"Faster by at least {PROGRESSION_THRESHOLD}× at every size both ran.", ""]
    if not_compared:
        lines += ["Not compared: " + "; ".join(not_compared) + ".", ""]
    return lines


def progression_section(res):
    lines = ["## Where the progression does not improve", ""]
    present = [k for k in kr.LECTURE_ORDER if k in res.kernels]
    missing = [k for k in kr.LECTURE_ORDER if k not in res.kernels]
    if len(present) < 2:
        return lines + ["Fewer than two kernels of the CUDA progression are in this report.", ""]
    lines += [f"Consecutive kernels of the lecture order present in this report; listed are the sizes where "
              f"the later one is less than {PROGRESSION_THRESHOLD}× faster (speedup = earlier median / later "
              "median). Figures are `earlier → later`, from `extra.attributes` and `extra.launch`.", ""]
    if missing:
        lines += ["Not in this report, so skipped over: " + ", ".join(missing) + ".", ""]
    for earlier, later in zip(present, present[1:]):
        lines += progression_pair(res, earlier, later)
    return lines


# ---------------------------------------------------------------------------------------------- charts

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


def render_charts(kreg_charts, res, charts_dir, with_roofline):
    """{name: (title, path, reason-skipped-or-None)}; one note under "charts" with --no-charts."""
    if kreg_charts is None:
        return {"charts": ("Charts", None, "not drawn (--no-charts)")}
    os.makedirs(charts_dir, exist_ok=True)
    return kreg_charts.render_all(res, charts_dir, with_roofline)


# ---------------------------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("report", help="runner JSON report")
    p.add_argument("--out", required=True, help="Markdown file to write, e.g. docs/RESULTS.md")
    p.add_argument("--charts", help="folder for the PNG charts (default: charts/ next to --out)")
    p.add_argument("--baseline", help="kernel the ratios are taken against: NAME, or DTYPE=NAME,... per dtype "
                   "(default: the report's baseline)")
    p.add_argument("--command", help="the exact command that produced the report (default: meta.argv joined)")
    p.add_argument("--allow-synthetic", action="store_true",
                   help="render a report marked synthetic (meta.synthetic); for tests only")
    p.add_argument("--no-charts", action="store_true", help="write the document without charts (no matplotlib needed)")
    p.add_argument("--force", action="store_true", help="replace an existing document and charts")
    return p.parse_args(argv)


def check_inputs(report, args):
    """The reason the report must not be rendered, or None."""
    meta = report["meta"]
    if meta.get("synthetic") is True and not args.allow_synthetic:
        note = meta.get("synthetic_note", "")
        return (f"refusing to write results from '{args.report}': its meta.synthetic is true (a test fixture, not "
                f"a measurement{': ' + note if note else ''}). Pass --allow-synthetic to render it anyway.")
    return None


def choose_baseline(report, args):
    if args.baseline:
        try:
            baseline = kr.parse_baseline_text(args.baseline)
        except ValueError as e:
            raise kr.ReportError(f"--baseline: {e}") from e
    else:
        baseline = report.get("baseline")
    if baseline is not None and not isinstance(baseline, (str, dict)):
        raise kr.ReportError(f"'{args.report}': \"baseline\" is neither a kernel name nor an object per dtype")
    for kernel in kr.baseline_kernels(baseline):
        if not any(r["kernel"] == kernel for r in report["records"]):
            raise kr.ReportError(f"baseline kernel '{kernel}' has no rows in '{args.report}'")
    return baseline


def runner_command(report, args):
    if args.command:
        return args.command
    argv = report["meta"].get("argv")
    return shlex.join(argv) if isinstance(argv, list) and argv else "(not recorded: meta.argv is missing)"


def build_document(res, tool_command, runner_cmd, charts, md_dir):
    lines = header_section(res, tool_command, runner_cmd)
    lines += gpu_section(res) + ceilings_section(res) + per_size_section(res) + summary_section(res)
    lines += ["## Charts", ""] + chart_lines(charts, md_dir, ["charts", "tflops", "time"])
    lines += roofline_section(res, chart_lines(charts, md_dir, ["roofline"]))
    lines += progression_section(res)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:
        report = kr.load_report(args.report)
        refusal = check_inputs(report, args)
        if refusal:
            print(f"kreg_results: {refusal}", file=sys.stderr)
            return 3
        res = Results(report, choose_baseline(report, args))
    except kr.ReportError as e:
        print(f"kreg_results: {e}", file=sys.stderr)
        return 2
    md_dir = os.path.dirname(os.path.abspath(args.out))
    charts_dir = args.charts or os.path.join(md_dir, "charts")
    kreg_charts = None
    if not args.no_charts:
        kreg_charts, why_not = import_charts()
        if kreg_charts is None:
            print(f"kreg_results: cannot draw the charts: {why_not}", file=sys.stderr)
            return 4
    with_roofline = bool(roof_parameters(res))
    outputs = [args.out]
    if kreg_charts is not None:
        outputs += [os.path.join(charts_dir, f) for f in kreg_charts.chart_files(with_roofline)]
    existing = [p for p in outputs if os.path.exists(p)]
    if existing and not args.force:
        print(f"kreg_results: not overwriting {', '.join(existing)}: pass --force to replace, or choose another "
              "--out/--charts", file=sys.stderr)
        return 5
    charts = render_charts(kreg_charts, res, charts_dir, with_roofline)
    tool_command = shlex.join([sys.argv[0]] + argv)
    text = build_document(res, tool_command, runner_command(report, args), charts, md_dir)
    os.makedirs(md_dir, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    skipped = [e[2] for e in charts.values() if e[2]]
    print(f"kreg_results: wrote {args.out}" + (f"; charts skipped: {'; '.join(skipped)}" if skipped else
                                               f" and {len(charts)} chart(s) in {charts_dir}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

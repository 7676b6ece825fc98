#!/usr/bin/python3
"""Runs tools/kreg_results.py (as a user types it: the file itself, started by its #! line) on a report and
checks what came out against a recomputation from the same JSON; checks `runner compare` on a copy of a
report with one kernel slowed down; checks that every tool in tools/ can be run as typed and is listed in
the README. Used by tests/tools/CMakeLists.txt; every check raises on a mismatch.

    check_results.py render  --tools DIR --report R --workdir W [--baseline B] [--also-against B2] [--command C]
                             [--allow-synthetic] [--no-matplotlib] [--perturb]
    check_results.py multi   --tools DIR --report R1 --report R2 ... --workdir W [--baseline [R:]B ...]
                             [--allow-synthetic] [--no-matplotlib]
    check_results.py refuse  --tools DIR --report R [--report R2 ...] --workdir W
    check_results.py compare --runner RUNNER --report R --workdir W [--slow-kernel K]
    check_results.py layout  --tools DIR --readme docs/ARCHITECTURE.md [--docs README.md docs/*.md]
    check_results.py timers  --tools DIR --report R1 --report R2 --workdir W

render checks the one-report document (the layout it has always had: the same top-level sections, charts
named as before); multi checks a document of several reports: a part per report titled by its config name,
each with its own command, date, git sha and baseline (per dtype), and the ceilings of every run. Transpose
rows (row "operation") are checked for MxN shapes, GB/s = 2*M*N*4 / median and its fraction of the run's
measured copy bandwidth, and for the absence of TFLOP/s columns and of the GEMM-only sections. --perturb
renders a copy of the report (marked synthetic) with one ok row turned failed and one row stripped of its
recorded GB/s and copy fraction, so the tool's own computation and a failed row's reason are checked too.

Exits 0 when every check passed, 1 when one failed, 77 (ctest: skipped, with the reason printed) when the
charts cannot be checked because the tool's Python has no matplotlib.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHARTS = ["tflops_vs_size.png", "time_vs_size.png"]  # and roofline.png where the report has roofline data
ROOFLINE_CHART = "roofline.png"
TRANSPOSE_CHART = "gbps_vs_size.png"
BLOCK_CHART = "gbps_vs_block.png"
ALL_CHARTS = CHARTS + [ROOFLINE_CHART, TRANSPOSE_CHART, BLOCK_CHART]
MOVEMENT = ("transpose", "block_transpose")
# The top-level sections of a one-report document of GEMM rows, as the tool has always written them.
SINGLE_GEMM_SECTIONS = ["## How these numbers were produced", "## GPU", "## Ceilings: measured next to computed",
                        "## Results per size", "## Ratio to baseline, all sizes", "## Charts", "## Roofline",
                        "## Where the progression does not improve"]
# The columns of an fp32 GEMM table, as they have always been.
FP32_GEMM_HEADER = ["kernel", "status", "median ms", "TFLOP/s", "ratio to baseline", "% of measured SGEMM",
                    "AI (min DRAM)", "AI (modelled)", "bound", "cv", "note"]
SKIP = 77
SECOND_BASELINE = "Ratio to the second baseline, all sizes"


class Skipped(Exception):
    pass
RATIO_TOLERANCE = 0.006  # three significant figures are within 0.5% of the true value


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


# ------------------------------------------------------------------------------------- the report, recomputed

def is_movement(r):
    return r.get("operation") in MOVEMENT


def problem_label(r):
    """MxNxK for GEMM; MxN for a transpose (it has no K), with the block for a block transpose."""
    if is_movement(r):
        block = f", block {r['block']}" if r.get("block") is not None else ""
        return f"{r['m']}x{r['n']}{block} ({r['dtype']})"
    return f"{r['m']}x{r['n']}x{r['k']} ({r['dtype']})"


def expected_gbps(r):
    """A transpose moves each fp32 element once in and once out: 2*M*N*4 bytes / median, in 1e9 B/s."""
    m = median(r)
    return None if m is None else 2 * 4 * r["m"] * r["n"] / (m * 1e-3) / 1e9


def copy_gbps_of(report):
    return ((report["meta"].get("gpu") or {}).get("ceilings") or {}).get("dram_copy_gbps")


def median(r):
    stats = r.get("stats") or {}
    return stats.get("median_ms") if r["status"] == "ok" and (stats.get("median_ms") or 0) > 0 else None


def baseline_of(baseline, dtype):
    """The kernel a row of dtype is compared with: baseline is one name for every dtype or {dtype: name}."""
    return baseline if isinstance(baseline, str) else baseline.get(dtype)


def parse_baseline_option(text):
    """--baseline as the runner and kreg_results.py take it: NAME, or DTYPE=NAME,..."""
    if "=" not in text:
        return text
    return {d.strip(): k.strip() for d, _, k in (item.partition("=") for item in text.split(","))}


def expected_ratios(records, baseline):
    """{(kernel, problem label): the median of the row's dtype's baseline / median, or None}."""
    base = {}
    for r in records:
        if r["kernel"] == baseline_of(baseline, r["dtype"]) and median(r) is not None:
            base.setdefault(problem_label(r), median(r))
    out = {}
    for r in records:
        b, m = base.get(problem_label(r)), median(r)
        out.setdefault((r["kernel"], problem_label(r)), b / m if b is not None and m is not None else None)
    return out


# ------------------------------------------------------------------------------------- the Markdown, parsed

def split_cells(line):
    """Cells of a Markdown table row; a backslash-escaped pipe stays inside its cell."""
    cells, current, i = [], "", 1
    body = line.strip()
    while i < len(body) - 1:
        if body[i] == "\\" and i + 1 < len(body):
            current += body[i + 1]
            i += 2
            continue
        if body[i] == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += body[i]
        i += 1
    cells.append(current.strip())
    return cells


def table_after(lines, heading):
    """(header, rows) of the first table after the line `heading`."""
    expect(heading in lines, f"no heading {heading!r} in the document")
    i = lines.index(heading) + 1
    while i < len(lines) and not lines[i].startswith("|"):
        expect(not lines[i].startswith("#"), f"no table under {heading!r}")
        i += 1
    block = []
    while i < len(lines) and lines[i].startswith("|"):
        block.append(split_cells(lines[i]))
        i += 1
    expect(len(block) >= 2, f"empty table under {heading!r}")
    return block[0], block[2:]


def tables_in(lines):
    """[(header, rows)] of every table in lines."""
    tables, block = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            block.append(split_cells(line))
        elif block:
            tables.append((block[0], block[2:]))
            block = []
    return tables


def section(lines, heading):
    """The lines from `heading` up to the next heading of the same or a higher level."""
    expect(heading in lines, f"no heading {heading!r} in the document")
    level = len(heading) - len(heading.lstrip("#"))
    start = lines.index(heading) + 1
    end = start
    while end < len(lines):
        stripped = lines[end].lstrip("#")
        if lines[end].startswith("#") and len(lines[end]) - len(stripped) <= level:
            break
        end += 1
    return lines[start:end]


def check_number(cell, expected, what):
    if expected is None:
        expect(cell == "—", f"{what}: expected no value (—), document has {cell!r}")
        return
    try:
        shown = float(cell)
    except ValueError:
        raise CheckFailed(f"{what}: expected {expected:.6g}, document has {cell!r}") from None
    expect(abs(shown - expected) <= RATIO_TOLERANCE * abs(expected),
           f"{what}: document says {shown}, recomputed from the JSON {expected:.6g}")


# ------------------------------------------------------------------------------------- the checks

def check_command(text, expected):
    expect(f"```\n{expected}\n```" in text, f"the runner command {expected!r} is not in the document")
    expect("Generated by `" in text and "kreg_results.py" in text, "no 'Generated by' line with the tool")


def check_per_size_tables(lines, records, ratios, level=3, copy_gbps=None):
    problems = []
    for r in records:
        if problem_label(r) not in problems:
            problems.append(problem_label(r))
    for problem in problems:
        header, rows = table_after(lines, f"{'#' * level} {problem}")
        col = {name: header.index(name) for name in ("kernel", "status", "ratio to baseline", "note")}
        shown = {row[col["kernel"]]: row for row in rows}
        in_report = [r for r in records if problem_label(r) == problem]
        expect(sorted(shown) == sorted({r["kernel"] for r in in_report}),
               f"{problem}: table lists {sorted(shown)}, report has {sorted({r['kernel'] for r in in_report})}")
        movement = is_movement(in_report[0])
        if movement:
            # A transpose does no arithmetic: bytes per second against the copy roof, never FLOP/s.
            expect("GB/s" in header and "fraction of copy bandwidth" in header,
                   f"{problem}: a transpose table without GB/s and fraction of copy bandwidth: {header}")
            expect(not any("TFLOP" in h or "SGEMM" in h or "AI" in h for h in header),
                   f"{problem}: a transpose table with GEMM columns: {header}")
        elif in_report[0]["dtype"] == "fp32":
            expect(header == FP32_GEMM_HEADER, f"{problem}: columns {header}, expected as always {FP32_GEMM_HEADER}")
        else:
            expect("TFLOP/s" in header, f"{problem}: a GEMM table without TFLOP/s: {header}")
        for r in in_report:
            row = shown[r["kernel"]]
            expect(row[col["status"]] == r["status"], f"{problem} {r['kernel']}: status {row[col['status']]!r}")
            check_number(row[col["ratio to baseline"]], ratios[(r["kernel"], problem)],
                         f"{problem} {r['kernel']} ratio to baseline")
            if movement:
                gbps = expected_gbps(r)
                check_number(row[header.index("GB/s")], gbps, f"{problem} {r['kernel']} GB/s")
                check_number(row[header.index("fraction of copy bandwidth")],
                             gbps / copy_gbps if gbps is not None and copy_gbps else None,
                             f"{problem} {r['kernel']} fraction of copy bandwidth")
            if r["status"] != "ok":
                reason = " ".join(r["reason"].split())[:60]
                expect(reason in row[col["note"]], f"{problem} {r['kernel']}: reason {reason!r} not shown")
    return problems


def check_copy_fraction_table(lines, records, copy_gbps, level=2):
    """Transposes: the kernels x sizes table of fractions of the copy bandwidth; none for GEMM rows."""
    heading = f"{'#' * level} Fraction of the measured copy bandwidth, all sizes"
    movement = [r for r in records if is_movement(r)]
    if not movement:
        expect(heading not in lines, "a copy-bandwidth table for a report without transposes")
        return
    header, rows = table_after(lines, heading)
    fractions = {(r["kernel"], problem_label(r)): expected_gbps(r) / copy_gbps if median(r) else None for r in movement}
    expect({row[0] for row in rows} == {k for k, _ in fractions}, f"copy-fraction rows {[row[0] for row in rows]}")
    for row in rows:
        for problem, value in zip(header[1:], row[1:]):
            check_number(value, fractions.get((row[0], problem)), f"copy fraction of {row[0]} at {problem}")


def check_no_gemm_sections_for_transposes(text, lines, records, level=2):
    """A report of transposes only: no K in any shape, no FLOP rates, no roofline or progression section."""
    if any(not is_movement(r) for r in records):
        return
    for r in records:
        expect(f"{r['m']}x{r['n']}x{r['k']}" not in text, f"shape {r['m']}x{r['n']}x{r['k']} shown for a transpose")
    for heading in ("Roofline", "Where the progression does not improve"):
        expect(f"{'#' * level} {heading}" not in lines, f"a {heading!r} section for transposes")
    results = lines[lines.index(f"{'#' * level} Results per size"):]  # the ceilings table above has TFLOP/s rows
    expect(not any("TFLOP/s" in line for line in results), "TFLOP/s in the results of transposes")


def check_summary_table(lines, problems, ratios, level=2, title="Ratio to baseline, all sizes"):
    header, rows = table_after(lines, f"{'#' * level} {title}")
    expect(sorted(header[1:]) == sorted(problems), f"summary columns {header[1:]} are not the sizes {problems}")
    kernels = {k for k, _ in ratios}
    expect({row[0] for row in rows} == kernels, f"summary rows {sorted(row[0] for row in rows)} != {sorted(kernels)}")
    for row in rows:
        for problem, value in zip(header[1:], row[1:]):
            check_number(value, ratios.get((row[0], problem)), f"summary {row[0]} at {problem}")


LECTURE = ["cuda_01_naive", "cuda_02_tiled16", "cuda_02_tiled32", "cuda_03_conflicts", "cuda_03_padded",
           "cuda_03_padded_dynamic", "cuda_04_coarsened", "cuda_05_register_blocked", "cuda_06_vectorized",
           "cuda_07_double_buffered", "cuda_08_cp_async", "cuda_09_warptiled"]


def check_progression(lines, records, level=2):
    """Steps of the lecture's GEMM progression only: no step names a kernel outside it (tensor-core or
    transpose kernels), and a report without GEMM rows has no progression section at all."""
    heading = f"{'#' * level} Where the progression does not improve"
    gemm = [r for r in records if not is_movement(r)]
    if not gemm:
        expect(heading not in lines, "a progression section in a report without GEMM rows")
        return
    steps = [line for line in section(lines, heading) if line.startswith("#") and "→" in line]
    for step in steps:
        names = step.lstrip("#").strip().split(" → ")
        expect(len(names) == 2 and all(n in LECTURE for n in names), f"progression step {step!r} is not of the lecture")
    present = [k for k in LECTURE if any(r["kernel"] == k for r in gemm)]
    expect(len(steps) == max(len(present) - 1, 0), f"{len(steps)} progression steps for {len(present)} lecture kernels")
    medians = {(r["kernel"], problem_label(r)): median(r) for r in gemm}
    problems = {problem_label(r) for r in gemm}
    for earlier, later in zip(present, present[1:]):
        body = "\n".join(section(lines, f"{'#' * (level + 1)} {earlier} → {later}"))
        for problem in problems:
            a, b = medians.get((earlier, problem)), medians.get((later, problem))
            if a is None or b is None:
                continue
            listed = f"| {problem} |" in body
            expect(listed == (a / b < 1.05), f"{earlier} → {later} at {problem}: speedup {a / b:.3f}, "
                                             f"{'listed' if listed else 'not listed'} as not improving")


def tool_python(tool):
    """The interpreter on the tool's #! line: the one a user gets by typing the tool's path."""
    with open(tool, encoding="utf-8") as f:
        first = f.readline()
    expect(first.startswith("#!"), f"{tool} has no #! line")
    return first[2:].strip().split()[0]


def matplotlib_available(python):
    done = subprocess.run([python, "-c", "import matplotlib"], capture_output=True, text=True)
    return done.returncode == 0, done.stderr.strip().splitlines()[-1:] or [""]


def has_roofline_data(records):
    return any(isinstance((r.get("extra") or {}).get("roofline"), dict) for r in records)


def expected_charts(records):
    """The charts a report's rows call for: GEMM's FLOP charts (and the roofline with roofline data on GEMM
    rows), GB/s against size for transposes, GB/s against the block for block transposes."""
    gemm = [r for r in records if not is_movement(r)]
    charts = []
    if gemm or not records:
        charts += CHARTS + ([ROOFLINE_CHART] if has_roofline_data(gemm) else [])
    if any(r.get("operation") == "transpose" for r in records):
        charts.append(TRANSPOSE_CHART)
    if any(r.get("operation") == "block_transpose" for r in records):
        charts.append(BLOCK_CHART)
    return charts


def check_charts(text, out_dir, charts_dir, expect_charts, records, prefix=""):
    if not expect_charts:
        expect("Charts skipped: not drawn (--no-charts)" in text, "no note that the charts were not drawn")
        expect(not any(os.path.exists(os.path.join(charts_dir, prefix + c)) for c in ALL_CHARTS),
               "charts written anyway")
        return
    wanted = expected_charts(records)
    for chart in ALL_CHARTS:
        if chart not in wanted:
            # Charts only for data that exists: no roofline chart without roofline data, no FLOP chart of a
            # transpose, no GB/s chart of a GEMM.
            expect(not os.path.exists(os.path.join(charts_dir, prefix + chart)), f"{prefix + chart} drawn for no data")
            expect(f"/{prefix + chart})" not in text, f"the document embeds {prefix + chart}, which it has no data for")
    for chart in wanted:
        path = os.path.join(charts_dir, prefix + chart)
        expect(os.path.isfile(path) and os.path.getsize(path) > len(PNG_MAGIC), f"{path} missing or empty")
        with open(path, "rb") as f:
            expect(f.read(len(PNG_MAGIC)) == PNG_MAGIC, f"{path} is not a PNG file")
        link = os.path.relpath(path, out_dir).replace(os.sep, "/")
        expect(f"]({link})" in text, f"the document does not link {link}")


# ------------------------------------------------------------------------------------- modes

def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def run_tool(args, env=None):
    print("+ " + shlex.join(args), flush=True)
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done


def without_matplotlib_env(workdir):
    """An environment whose `import matplotlib` fails, as on a machine without it."""
    block = os.path.join(workdir, "no_matplotlib", "matplotlib")
    os.makedirs(block, exist_ok=True)
    with open(os.path.join(block, "__init__.py"), "w") as f:
        f.write("raise ImportError('matplotlib hidden by check_results.py --no-matplotlib')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(block) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def render(cmd, out, workdir, tool, no_matplotlib):
    """Runs the tool as a user would; without matplotlib, checks that it stops first and then adds
    --no-charts. Returns the command that wrote the document and the environment it ran in."""
    env = without_matplotlib_env(workdir) if no_matplotlib else None
    have_mpl, why = matplotlib_available(tool_python(tool))
    if no_matplotlib or not have_mpl:
        # Without matplotlib the tool stops, says how to go on, and writes nothing...
        done = run_tool(cmd, env)
        expect(done.returncode == 4, f"kreg_results.py without matplotlib exited {done.returncode}, expected 4")
        expect("--no-charts" in done.stderr and "python3-matplotlib" in done.stderr,
               f"the refusal does not say how to go on: {done.stderr!r}")
        expect(not os.path.exists(out), "the document was written although the tool stopped")
        if not no_matplotlib:
            raise Skipped(f"the charts: {tool_python(tool)} cannot import matplotlib ({why[0]}); "
                          "the tool's refusal was checked")
        # ... and with --no-charts writes the document alone.
        cmd = cmd + ["--no-charts"]
    done = run_tool(cmd, env)
    expect(done.returncode == 0, f"kreg_results.py exited {done.returncode}")
    return cmd, env


def perturbed_copy(report_path, workdir):
    """A copy of a report (marked synthetic) in which the first ok row that is not a baseline row is failed,
    with a reason, and the next ok row has no recorded GB/s, copy fraction or roofline bytes, so the tool
    must compute them (transposes) or show the failure."""
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    baseline = report.get("baseline")
    baselines = {baseline} if isinstance(baseline, str) else set((baseline or {}).values())
    ok = [r for r in report["records"] if median(r) is not None and r["kernel"] not in baselines]
    expect(len(ok) >= 2, f"{report_path}: fewer than two ok rows to perturb")
    failed, stripped = ok[0], ok[1]
    failed.update(status="failed", reason="kernel returned KREG_ERROR: injected by check_results.py --perturb",
                  stats=None, gflops=None, samples_ms=[])
    failed.pop("gbps", None)
    stripped.pop("gbps", None)
    roof = (stripped.get("extra") or {}).get("roofline") or {}
    for key in ("achieved_gbps", "fraction_of_copy_bandwidth", "min_dram_bytes"):
        roof.pop(key, None)
    report["meta"]["synthetic"] = True
    report["meta"]["synthetic_note"] = f"a copy of {os.path.basename(report_path)} changed by check_results.py --perturb"
    path = os.path.join(workdir, "perturbed-" + os.path.basename(report_path))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f)
    return path


def mode_render(a):
    workdir = fresh_dir(a.workdir)
    out, charts = os.path.join(workdir, "RESULTS.md"), os.path.join(workdir, "charts")
    tool = os.path.join(a.tools, "kreg_results.py")
    (report_path,) = a.report
    if a.perturb:
        report_path = perturbed_copy(report_path, workdir)
    cmd = [tool, report_path, "--out", out, "--charts", charts]
    cmd += ["--baseline", a.baseline[0]] if a.baseline else []
    cmd += ["--also-against", a.also_against] if a.also_against else []
    cmd += ["--command", a.command] if a.command else []
    cmd += ["--allow-synthetic"] if a.allow_synthetic or a.perturb else []
    cmd, env = render(cmd, out, workdir, tool, a.no_matplotlib)
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    with open(out, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    records = report["records"]
    baseline = parse_baseline_option(a.baseline[0]) if a.baseline else report.get("baseline")
    expect(baseline, "these checks need a baseline (--baseline or one in the report)")
    check_command(text, a.command or shlex.join(report["meta"]["argv"]))
    if all(not is_movement(r) for r in records):
        # The one-report document of GEMM rows keeps the layout it had before several reports were possible.
        # --also-against adds its table right after the first, and only then.
        top = [line for line in lines if line.startswith("## ")]
        sections = list(SINGLE_GEMM_SECTIONS)
        if a.also_against:
            sections.insert(sections.index("## Ratio to baseline, all sizes") + 1, "## " + SECOND_BASELINE)
        expect(top == sections, f"top-level sections {top}, expected {sections}")
    ratios = expected_ratios(records, baseline)
    problems = check_per_size_tables(lines, records, ratios, copy_gbps=copy_gbps_of(report))
    check_summary_table(lines, problems, ratios)
    if a.also_against:
        second = expected_ratios(records, parse_baseline_option(a.also_against))
        expect(second != ratios, "the second baseline gives the same ratios as the first: the check cannot tell")
        check_summary_table(lines, problems, second, title=SECOND_BASELINE)
    check_copy_fraction_table(lines, records, copy_gbps_of(report))
    check_no_gemm_sections_for_transposes(text, lines, records)
    check_progression(lines, records)
    if report["meta"].get("synthetic") is True:
        expect("SYNTHETIC DATA" in text, "a synthetic report rendered without the SYNTHETIC banner")
    check_charts(text, workdir, charts, expect_charts=not a.no_matplotlib, records=records)
    check_no_silent_overwrite(cmd, out, env)
    print(f"ok: {len(problems)} size tables, {len(ratios)} ratios, summary, progression, charts "
          f"({', '.join(expected_charts(records))}) and overwrite refusal checked")


def qualified_baselines(options, reports):
    """{report: baseline} from the tool's --baseline [REPORT:]SPEC options (the report as given)."""
    general, specific = None, {}
    for option in options:
        report = next((r for r in reports if option.startswith(r + ":")), None)
        if report is None:
            general = parse_baseline_option(option)
        else:
            specific[report] = parse_baseline_option(option[len(report) + 1:])
    return {r: specific.get(r, general) for r in reports}


def chart_prefix(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") + "-"


def mode_multi(a):
    """Several reports into one document: a part per report, titled by its config name, in the order given,
    each checked as a one-report document is (its own baseline per dtype, command, date, git sha)."""
    workdir = fresh_dir(a.workdir)
    out, charts = os.path.join(workdir, "RESULTS.md"), os.path.join(workdir, "charts")
    tool = os.path.join(a.tools, "kreg_results.py")
    expect(len(a.report) > 1, "multi needs several --report")
    cmd = [tool] + a.report + ["--out", out, "--charts", charts]
    for option in a.baseline:
        cmd += ["--baseline", option]
    cmd += ["--allow-synthetic"] if a.allow_synthetic else []
    cmd, env = render(cmd, out, workdir, tool, a.no_matplotlib)
    with open(out, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    baselines = qualified_baselines(a.baseline, a.report)
    reports = []
    for path in a.report:
        with open(path, encoding="utf-8") as f:
            reports.append(json.load(f))
    names = [r["meta"]["config"]["name"] for r in reports]
    expect(len(set(names)) == len(names), f"these checks need reports of distinct configs, got {names}")
    parts = [line[3:] for line in lines if line.startswith("## ")]
    expect(parts[-len(names):] == names, f"the document's last parts are {parts}, expected one per report: {names}")
    expect("## GPU" in lines and "## Ceilings: measured next to computed" in lines, "no GPU or ceilings part")
    ceilings = section(lines, "## Ceilings: measured next to computed")
    checked = 0
    for path, report, name in zip(a.report, reports, names):
        part = section(lines, f"## {name}")
        body = "\n".join(part)
        meta = report["meta"]
        expect(f"```\n{shlex.join(meta['argv'])}\n```" in body, f"{name}: its runner command is not in its part")
        expect(f"Date (UTC): {meta['timestamp']}" in body and f"git sha `{meta['git_sha']}`" in body,
               f"{name}: its date or git sha is not in its part")
        expect(path in body, f"{name}: its part does not name its report {path}")
        copy = copy_gbps_of(report)
        if copy:
            # Each run's own measured copy bandwidth, in that run's column of the ceilings table.
            found = [(h, rows) for h, rows in tables_in(ceilings) if f"measured: {name}" in h]
            expect(len(found) == 1, f"{name}: {len(found)} ceilings tables with a 'measured: {name}' column")
            header, rows = found[0]
            copy_row = next(row for row in rows if row[0].startswith("DRAM copy"))
            check_number(copy_row[header.index(f"measured: {name}")].split(" ")[0], copy, f"{name}: measured copy GB/s")
        baseline = baselines[path] or report.get("baseline")
        records = report["records"]
        ratios = expected_ratios(records, baseline)
        problems = check_per_size_tables(part, records, ratios, level=4, copy_gbps=copy)
        check_summary_table(part, problems, ratios, level=3)
        check_copy_fraction_table(part, records, copy, level=3)
        check_no_gemm_sections_for_transposes(body, part, records, level=3)
        check_progression(part, records, level=3)
        check_charts(body, workdir, charts, expect_charts=not a.no_matplotlib, records=records,
                     prefix=chart_prefix(name))
        checked += len(ratios)
    check_no_silent_overwrite(cmd, out, env)
    print(f"ok: {len(names)} parts ({', '.join(names)}), {checked} ratios, each part's command, date, sha, "
          "baseline, tables, charts; overwrite refusal checked")


def mode_timers(a):
    """Two reports of the same calls under two timers (CUPTI and CUDA events): the document holds a "timers
    side by side" table with a line for every kernel and shape the two share, both medians as the reports
    hold them, their ratio, and each row's ratio to its own report's baseline recomputed here."""
    workdir = fresh_dir(a.workdir)
    out = os.path.join(workdir, "RESULTS.md")
    tool = os.path.join(a.tools, "kreg_results.py")
    expect(len(a.report) == 2, "timers needs two --report")
    done = run_tool([tool] + a.report + ["--out", out, "--no-charts"])
    expect(done.returncode == 0, f"kreg_results.py exited {done.returncode}")
    reports = []
    for path in a.report:
        with open(path, encoding="utf-8") as f:
            reports.append(json.load(f))
    timers = [{r["timer"] for r in rep["records"] if r["status"] == "ok"} for rep in reports]
    expect(all(len(t) == 1 for t in timers) and timers[0] != timers[1], f"the reports' timers are {timers}")
    ta, tb = next(iter(timers[0])), next(iter(timers[1]))
    with open(out, encoding="utf-8") as f:
        lines = f.read().split("\n")
    headings = [line for line in lines if line.startswith("## Timers side by side: ")]
    expect(len(headings) == 1, f"{len(headings)} timers sections, expected 1")
    found = tables_in(section(lines, headings[0]))
    expect(len(found) == 1, f"{len(found)} tables in the timers section")
    header, rows = found[0]
    expect(header[2:5] == [f"{ta} (µs)", f"{tb} (µs)", f"{tb} / {ta}"], f"timers header {header}")
    index = [{(r["kernel"], r["m"], r["n"], r["k"], r["dtype"]): r for r in rep["records"]} for rep in reports]
    shared = [key for key in index[0] if key in index[1]]
    expect(len(rows) == len(shared) > 0, f"{len(rows)} lines for {len(shared)} shared rows")
    by_line = {(row[0].strip("`"), row[1]): row for row in rows}
    for key in shared:
        kernel, m, n, k, dtype = key
        row = by_line.get((kernel, f"{m}x{n}x{k} ({dtype})"))
        expect(row is not None, f"no line for {key}")
        ra, rb = index[0][key], index[1][key]
        if ra["status"] != "ok" or rb["status"] != "ok":
            continue
        ma, mb = ra["stats"]["median_ms"], rb["stats"]["median_ms"]
        check_number(row[2], ma * 1e3, f"{key}: {ta} median")
        check_number(row[3], mb * 1e3, f"{key}: {tb} median")
        check_number(row[4], mb / ma, f"{key}: {tb}/{ta}")
        for rep, rec, column in ((reports[0], ra, 5), (reports[1], rb, 6)):
            base = rep.get("baseline")
            base = base.get(dtype) if isinstance(base, dict) else base
            ref = {(r["kernel"], r["m"], r["n"], r["k"], r["dtype"]): r for r in rep["records"]}.get((base, m, n, k, dtype))
            if ref and ref["status"] == "ok":
                check_number(row[column], ref["stats"]["median_ms"] / rec["stats"]["median_ms"], f"{key}: x baseline")
    print(f"ok: timers side by side, {len(rows)} lines ({ta} against {tb}), medians, ratios and baselines recomputed")


def mode_dispatch(a):
    """A report with a dispatch kernel (issue 24's check sweep): its "Dispatch against the baseline and the best
    single kernel" section has, for each dispatch kernel, a line for every shape it ran, with the variant it ran,
    its ratio to the baseline, and the fastest single kernel there recomputed here from the JSON (ok, same dtype,
    not a dispatch kernel, not a baseline, not a `*_reference` plugin); a report without one has no section."""
    workdir = fresh_dir(a.workdir)
    tool = os.path.join(a.tools, "kreg_results.py")
    expect(len(a.report) == 2, "dispatch needs two --report: one with a dispatch kernel, one without")
    with_dispatch, without = a.report
    heading = "## Dispatch against the baseline and the best single kernel"
    out = os.path.join(workdir, "with.md")
    done = run_tool([tool, with_dispatch, "--out", out, "--no-charts"])
    expect(done.returncode == 0, f"kreg_results.py exited {done.returncode}: {done.stderr}")
    with open(with_dispatch, encoding="utf-8") as f:
        report = json.load(f)
    records = report["records"]
    baseline = report.get("baseline")
    baselines = set(baseline.values()) if isinstance(baseline, dict) else {baseline}
    index = {(r["kernel"], r["m"], r["n"], r["k"], r["dtype"]): r for r in reversed(records)}  # first row wins
    with open(out, encoding="utf-8") as f:
        lines = f.read().split("\n")
    part = section(lines, heading)
    dispatchers = list(dict.fromkeys(r["kernel"] for r in records if "dispatch" in r["kernel"]))
    expect(dispatchers, f"{with_dispatch} has no dispatch kernel")
    checked = 0
    for kernel in dispatchers:
        header, rows = table_after(part, f"### `{kernel}`")
        expect(header == ["shape", "median (ms)", "ran", "× baseline", "best single kernel", "its × baseline", "vs best"],
               f"dispatch header {header}")
        mine = [r for r in records if r["kernel"] == kernel and "operation" not in r]
        expect(len(rows) == len(mine), f"{kernel}: {len(rows)} lines for {len(mine)} rows")
        by_shape = {row[0]: row for row in rows}
        compared = close = 0
        for r in mine:
            row = by_shape.get(f"{r['m']}x{r['n']}x{r['k']} ({r['dtype']})")
            expect(row is not None, f"{kernel}: no line for {r['m']}x{r['n']}x{r['k']}")
            if r["status"] != "ok":
                expect(row[1] == r["status"], f"{kernel}: status {row[1]!r}, the row says {r['status']}")
                continue
            check_number(row[1], r["stats"]["median_ms"], f"{kernel} {row[0]}: median")
            expect(row[2].strip("`") == r["extra"]["variant"].split(" (")[0], f"{kernel} {row[0]}: ran {row[2]!r}, "
                   f"the row's variant {r['extra']['variant'][:60]!r}")
            base_name = baseline.get(r["dtype"]) if isinstance(baseline, dict) else baseline
            base = index.get((base_name, r["m"], r["n"], r["k"], r["dtype"]))
            base_ms = base["stats"]["median_ms"] if base and base["status"] == "ok" else None
            check_number(row[3], base_ms / r["stats"]["median_ms"] if base_ms else None, f"{kernel} {row[0]}: x baseline")
            singles = [x for x in records if (x["m"], x["n"], x["k"], x["dtype"]) == (r["m"], r["n"], r["k"], r["dtype"])
                       and x["status"] == "ok" and "dispatch" not in x["kernel"] and x["kernel"] not in baselines
                       and not str(x.get("plugin", "")).endswith("_reference") and "operation" not in x]
            best = min(singles, key=lambda x: x["stats"]["median_ms"]) if singles else None
            expect(row[4].strip("`") == (best["kernel"] if best else "—"), f"{kernel} {row[0]}: best {row[4]!r}, "
                   f"recomputed {best['kernel'] if best else None}")
            if best:
                check_number(row[5], base_ms / best["stats"]["median_ms"] if base_ms else None, f"{kernel} {row[0]}: best x baseline")
                versus = best["stats"]["median_ms"] / r["stats"]["median_ms"]
                check_number(row[6], versus, f"{kernel} {row[0]}: vs best")
                compared += 1
                close += versus >= 0.95
            checked += 1
        expect(f"Within 5 % of the best single kernel (vs best ≥ 0.95) at {close} of {compared} shapes." in part,
               f"{kernel}: no line 'Within 5 % ... at {close} of {compared} shapes'")
    plain = os.path.join(workdir, "without.md")
    done = run_tool([tool, without, "--out", plain, "--no-charts"])
    expect(done.returncode == 0, f"kreg_results.py exited {done.returncode} on {without}")
    with open(plain, encoding="utf-8") as f:
        expect(heading not in f.read().split("\n"), f"a dispatch section for {without}, which has no dispatch kernel")
    print(f"ok: dispatch section, {checked} lines of {len(dispatchers)} dispatch kernel(s) recomputed; none without one")


def check_no_silent_overwrite(cmd, out, env):
    """A second run refuses to replace what the first wrote; with --force it does."""
    with open(out, encoding="utf-8") as f:
        before = f.read()
    os.utime(out, (0, 0))
    again = run_tool(cmd, env)
    expect(again.returncode == 5, f"a second run over existing output exited {again.returncode}, expected 5")
    expect("--force" in again.stderr and out in again.stderr, f"the refusal does not name the file and --force: {again.stderr!r}")
    expect(os.stat(out).st_mtime == 0, "the document was rewritten although the tool refused")
    forced = run_tool(cmd + ["--force"], env)
    expect(forced.returncode == 0, f"--force exited {forced.returncode}")
    # The same document but for the "Generated by" line, which quotes the command and so its --force.
    without_command = lambda text: [line for line in text.split("\n") if not line.startswith("Generated by `")]  # noqa: E731
    with open(out, encoding="utf-8") as f:
        expect(without_command(f.read()) == without_command(before), "--force wrote a different document from the same report")


def mode_refuse(a):
    """The last --report is synthetic: refused (exit 3) wherever it stands among the reports. With several
    reports, also the mistakes of the per-report options (exit 2). Nothing is written either way."""
    workdir = fresh_dir(a.workdir)
    out = os.path.join(workdir, "RESULTS.md")
    tool = os.path.join(a.tools, "kreg_results.py")
    done = run_tool([tool] + a.report + ["--out", out, "--no-charts"])
    expect(done.returncode == 3, f"a synthetic report was not refused with exit 3 (exit {done.returncode})")
    expect("synthetic" in done.stderr and "--allow-synthetic" in done.stderr and a.report[-1] in done.stderr,
           f"the refusal does not say which report, why or how: {done.stderr!r}")
    expect(not os.path.exists(out), "the document was written although the tool refused")
    if len(a.report) > 1:
        first = a.report[0]
        mistakes = [
            ([first, first], "given twice"),
            (a.report + ["--command", "runner --config x.json"], "--command REPORT:COMMAND"),
            (a.report + ["--baseline", os.path.join(workdir, "other.json") + ":cublas_sgemm"], "not one of the reports"),
            (a.report + ["--baseline", f"{first}:cublas_sgemm", "--baseline", f"{first}:cublas_tf32"], "given twice"),
            (a.report + ["--baseline", f"{first}:no_such_kernel"], "no_such_kernel"),
            (a.report + ["--also-against", f"{first}:no_such_second"], "also-against kernel 'no_such_second'"),
            (a.report + ["--also-against", "x", "--also-against", "y"], "--also-against: given twice"),
        ]
        for args, says in mistakes:
            done = run_tool([tool] + args + ["--out", out, "--no-charts", "--allow-synthetic"])
            expect(done.returncode == 2 and says in done.stderr,
                   f"{args}: expected exit 2 saying {says!r}, got {done.returncode}: {done.stderr!r}")
            expect(not os.path.exists(out), f"{args}: the document was written although the tool refused")
    print("ok: refused, with the reason, and wrote nothing")


def slowed_copy(report_path, workdir, kernel, factor):
    """A copy of the report with every timing sample (and the stats) of `kernel`'s ok rows times `factor`."""
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    changed = 0
    for r in report["records"]:
        if r["kernel"] == kernel and median(r) is not None:
            r["samples_ms"] = [x * factor for x in r["samples_ms"]]
            for key in ("median_ms", "min_ms", "mean_ms", "stddev_ms"):
                r["stats"][key] *= factor
            changed += 1
    expect(changed > 0, f"no ok row of {kernel} to slow down")
    path = os.path.join(workdir, "slowed.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f)
    return path, report, changed


def mode_compare(a):
    """runner compare on a report and its copy with one kernel 3x slower: exactly those rows slower, exit 1."""
    workdir = fresh_dir(a.workdir)
    (report_path,) = a.report
    path_b, report, changed = slowed_copy(report_path, workdir, a.slow_kernel, 3.0)
    out = os.path.join(workdir, "compare.json")
    done = run_tool([a.runner, "compare", report_path, path_b, "--json", out])
    expect(done.returncode == 1, f"runner compare exited {done.returncode}, expected 1 (a regression)")
    with open(out, encoding="utf-8") as f:
        rows = json.load(f)["rows"]
    slower = [r for r in rows if r["verdict"] == "slower"]
    expect(len(slower) == changed and all(r["kernel"] == a.slow_kernel and r["regression"] for r in slower),
           f"expected exactly the {changed} ok row(s) of {a.slow_kernel} slower, got {slower}")
    for r in slower:
        check_number(f"{r['ratio']:.6g}", 3.0, f"B/A of {r['kernel']} {r['m']}x{r['n']}x{r['k']}")
    others = [r for r in rows if r["kernel"] != a.slow_kernel]
    expect(all(r["verdict"] == "same" for r in others), "a row that did not change is not same")
    print(f"ok: {changed} slowed row(s) slower, {len(others)} other row(s) same")


def mode_layout(a):
    """Every tool runs as typed, the layout (docs/ARCHITECTURE.md) lists every file of tools/, and no document
    names a tool that does not exist."""
    problems = []
    names = sorted(n for n in os.listdir(a.tools) if not n.startswith(".") and n != "__pycache__")
    for name in names:
        path = os.path.join(a.tools, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        runnable = name.endswith(".sh") or "\nif __name__ == \"__main__\":" in text
        if not runnable:
            continue  # a module the tools import (kreg_report.py, kreg_charts.py)
        if not os.access(path, os.X_OK):
            problems.append(f"{name} is not executable (chmod +x), so `tools/{name}` does not run as typed")
        first = text.split("\n", 1)[0]
        if name.endswith(".py") and first != "#!/usr/bin/python3":
            problems.append(f"{name} starts with {first!r}, not #!/usr/bin/python3 (Debian's, which has python3-matplotlib)")
        if name.endswith(".sh") and first not in ("#!/usr/bin/env bash", "#!/bin/bash"):
            problems.append(f"{name} starts with {first!r}, not a bash #! line")
    with open(a.readme, encoding="utf-8") as f:
        readme = f.read()
    layout = [line for line in readme.split("\n## Layout", 1)[-1].split("```")[1].split("\n")]
    for path in a.docs:  # the other documents may name tools too; every name must exist
        with open(path, encoding="utf-8") as f:
            readme += "\n" + f.read()
    listed, in_tools = set(), False
    for line in layout:
        if line.startswith("tools/"):
            in_tools = True
        elif line and not line.startswith(" "):
            in_tools = False
        if in_tools:
            listed |= {w.strip(",.()") for w in line.replace("tools/", " ", 1).split()}
    problems += [f"the layout (docs/ARCHITECTURE.md) does not list tools/{n}" for n in names if n not in listed and n != "__pycache__"]
    problems += [f"the layout (docs/ARCHITECTURE.md) lists tools/{n}, which does not exist" for n in sorted(listed)
                 if (n.endswith(".py") or n.endswith(".sh")) and n not in names]
    mentioned = set()
    for word in readme.replace("`", " ").replace("(", " ").replace(")", " ").split():
        if word.startswith("tools/"):
            mentioned.add(word[len("tools/"):].rstrip(".,:;"))
    problems += [f"a document mentions tools/{n}, which does not exist" for n in sorted(mentioned) if n and n not in names]
    expect(not problems, "; ".join(problems))
    print(f"ok: {len(names)} files in tools/, each listed in the layout of docs/ARCHITECTURE.md; the scripts run as typed")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["render", "multi", "refuse", "compare", "layout", "timers", "dispatch"])
    p.add_argument("--tools", help="the tools/ folder")
    p.add_argument("--runner", help="compare: the runner binary")
    p.add_argument("--readme", help="layout: the document with the '## Layout' folder map (docs/ARCHITECTURE.md)")
    p.add_argument("--docs", nargs="*", default=[], help="layout: more documents whose tools/ mentions must exist")
    p.add_argument("--report", action="append", default=[], help="a report (multi, refuse: repeatable)")
    p.add_argument("--workdir")
    p.add_argument("--baseline", action="append", default=[],
                   help="passed to the tool; multi: [REPORT:]SPEC, repeatable")
    p.add_argument("--perturb", action="store_true", help="render: a changed, synthetic copy of the report")
    p.add_argument("--also-against", help="render: passed to the tool; its ratio table is checked too")
    p.add_argument("--command")
    p.add_argument("--allow-synthetic", action="store_true")
    p.add_argument("--no-matplotlib", action="store_true", help="hide matplotlib from the tool")
    p.add_argument("--slow-kernel", default="cuda_04_coarsened", help="compare: the kernel made 3x slower in B")
    a = p.parse_args()
    try:
        {"render": mode_render, "multi": mode_multi, "timers": mode_timers, "dispatch": mode_dispatch, "refuse": mode_refuse, "compare": mode_compare,
         "layout": mode_layout}[a.mode](a)
    except CheckFailed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    except Skipped as e:
        print(f"SKIPPED: {e}")  # ctest: SKIP_RETURN_CODE 77; the line is what tests/cmake/print_skip_reasons.cmake shows
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())

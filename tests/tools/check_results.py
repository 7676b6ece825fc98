#!/usr/bin/python3
"""Runs tools/kreg_results.py (as a user types it: the file itself, started by its #! line) on a report and
checks what came out against a recomputation from the same JSON; checks `runner compare` on a copy of a
report with one kernel slowed down; checks that every tool in tools/ can be run as typed and is listed in
the README. Used by tests/tools/CMakeLists.txt; every check raises on a mismatch.

    check_results.py render  --tools DIR --report R --workdir W [--baseline B] [--command C]
                             [--allow-synthetic] [--no-matplotlib]
    check_results.py refuse  --tools DIR --report R --workdir W
    check_results.py compare --runner RUNNER --report R --workdir W [--slow-kernel K]
    check_results.py layout  --tools DIR --readme README.md

Exits 0 when every check passed, 1 when one failed, 77 (ctest: skipped, with the reason printed) when the
charts cannot be checked because the tool's Python has no matplotlib.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHARTS = ["tflops_vs_size.png", "time_vs_size.png"]  # and roofline.png where the report has roofline data
ROOFLINE_CHART = "roofline.png"
SKIP = 77


class Skipped(Exception):
    pass
RATIO_TOLERANCE = 0.006  # three significant figures are within 0.5% of the true value


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


# ------------------------------------------------------------------------------------- the report, recomputed

def problem_label(r):
    return f"{r['m']}x{r['n']}x{r['k']} ({r['dtype']})"


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


def check_per_size_tables(lines, records, ratios):
    problems = []
    for r in records:
        if problem_label(r) not in problems:
            problems.append(problem_label(r))
    for problem in problems:
        header, rows = table_after(lines, f"### {problem}")
        col = {name: header.index(name) for name in ("kernel", "status", "ratio to baseline", "note")}
        shown = {row[col["kernel"]]: row for row in rows}
        in_report = [r for r in records if problem_label(r) == problem]
        expect(sorted(shown) == sorted({r["kernel"] for r in in_report}),
               f"{problem}: table lists {sorted(shown)}, report has {sorted({r['kernel'] for r in in_report})}")
        for r in in_report:
            row = shown[r["kernel"]]
            expect(row[col["status"]] == r["status"], f"{problem} {r['kernel']}: status {row[col['status']]!r}")
            check_number(row[col["ratio to baseline"]], ratios[(r["kernel"], problem)],
                         f"{problem} {r['kernel']} ratio to baseline")
            if r["status"] != "ok":
                reason = " ".join(r["reason"].split())[:60]
                expect(reason in row[col["note"]], f"{problem} {r['kernel']}: reason {reason!r} not shown")
    return problems


def check_summary_table(lines, problems, ratios):
    header, rows = table_after(lines, "## Ratio to baseline, all sizes")
    expect(sorted(header[1:]) == sorted(problems), f"summary columns {header[1:]} are not the sizes {problems}")
    kernels = {k for k, _ in ratios}
    expect({row[0] for row in rows} == kernels, f"summary rows {sorted(row[0] for row in rows)} != {sorted(kernels)}")
    for row in rows:
        for problem, value in zip(header[1:], row[1:]):
            check_number(value, ratios.get((row[0], problem)), f"summary {row[0]} at {problem}")


LECTURE = ["cuda_01_naive", "cuda_02_tiled16", "cuda_02_tiled32", "cuda_03_conflicts", "cuda_03_padded",
           "cuda_03_padded_dynamic", "cuda_04_coarsened", "cuda_05_register_blocked", "cuda_06_vectorized",
           "cuda_07_double_buffered", "cuda_08_cp_async", "cuda_09_warptiled"]


def check_progression(lines, records):
    present = [k for k in LECTURE if any(r["kernel"] == k for r in records)]
    medians = {(r["kernel"], problem_label(r)): median(r) for r in records}
    problems = {problem_label(r) for r in records}
    for earlier, later in zip(present, present[1:]):
        body = "\n".join(section(lines, f"### {earlier} → {later}"))
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


def check_charts(text, out_dir, charts_dir, expect_charts, roofline):
    if not expect_charts:
        expect("Charts skipped: not drawn (--no-charts)" in text, "no note that the charts were not drawn")
        expect(not any(os.path.exists(os.path.join(charts_dir, c)) for c in CHARTS + [ROOFLINE_CHART]),
               "charts written anyway")
        return
    if not roofline:
        # Charts only for data that exists: no roofline chart, file or link, without roofline data.
        expect(not os.path.exists(os.path.join(charts_dir, ROOFLINE_CHART)), "a roofline chart without roofline data")
        expect(ROOFLINE_CHART not in text, "the document embeds a roofline chart it has no data for")
    for chart in CHARTS + ([ROOFLINE_CHART] if roofline else []):
        path = os.path.join(charts_dir, chart)
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


def mode_render(a):
    workdir = fresh_dir(a.workdir)
    out, charts = os.path.join(workdir, "RESULTS.md"), os.path.join(workdir, "charts")
    tool = os.path.join(a.tools, "kreg_results.py")
    cmd = [tool, a.report, "--out", out, "--charts", charts]
    cmd += ["--baseline", a.baseline] if a.baseline else []
    cmd += ["--command", a.command] if a.command else []
    cmd += ["--allow-synthetic"] if a.allow_synthetic else []
    have_mpl, why = matplotlib_available(tool_python(tool))
    if a.no_matplotlib or not have_mpl:
        # Without matplotlib the tool stops, says how to go on, and writes nothing...
        done = run_tool(cmd, without_matplotlib_env(workdir) if a.no_matplotlib else None)
        expect(done.returncode == 4, f"kreg_results.py without matplotlib exited {done.returncode}, expected 4")
        expect("--no-charts" in done.stderr and "python3-matplotlib" in done.stderr,
               f"the refusal does not say how to go on: {done.stderr!r}")
        expect(not os.path.exists(out), "the document was written although the tool stopped")
        if not a.no_matplotlib:
            raise Skipped(f"the charts: {tool_python(tool)} cannot import matplotlib ({why[0]}); "
                          "the tool's refusal was checked")
        # ... and with --no-charts writes the document alone.
        cmd += ["--no-charts"]
    done = run_tool(cmd, without_matplotlib_env(workdir) if a.no_matplotlib else None)
    expect(done.returncode == 0, f"kreg_results.py exited {done.returncode}")
    with open(a.report, encoding="utf-8") as f:
        report = json.load(f)
    with open(out, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    records = report["records"]
    baseline = parse_baseline_option(a.baseline) if a.baseline else report.get("baseline")
    expect(baseline, "these checks need a baseline (--baseline or one in the report)")
    check_command(text, a.command or shlex.join(report["meta"]["argv"]))
    ratios = expected_ratios(records, baseline)
    problems = check_per_size_tables(lines, records, ratios)
    check_summary_table(lines, problems, ratios)
    check_progression(lines, records)
    if report["meta"].get("synthetic") is True:
        expect("SYNTHETIC DATA" in text, "a synthetic report rendered without the SYNTHETIC banner")
    roofline = has_roofline_data(records)
    check_charts(text, workdir, charts, expect_charts=not a.no_matplotlib, roofline=roofline)
    check_no_silent_overwrite(cmd, out, without_matplotlib_env(workdir) if a.no_matplotlib else None)
    print(f"ok: {len(problems)} size tables, {len(ratios)} ratios, summary, progression, charts "
          f"({'with' if roofline else 'no'} roofline) and overwrite refusal checked")


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
    workdir = fresh_dir(a.workdir)
    out = os.path.join(workdir, "RESULTS.md")
    done = run_tool([os.path.join(a.tools, "kreg_results.py"), a.report, "--out", out, "--no-charts"])
    expect(done.returncode != 0, "a synthetic report was rendered without --allow-synthetic")
    expect("synthetic" in done.stderr and "--allow-synthetic" in done.stderr,
           f"the refusal does not say why or how: {done.stderr!r}")
    expect(not os.path.exists(out), "the document was written although the tool refused")
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
    path_b, report, changed = slowed_copy(a.report, workdir, a.slow_kernel, 3.0)
    out = os.path.join(workdir, "compare.json")
    done = run_tool([a.runner, "compare", a.report, path_b, "--json", out])
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
    """Every tool runs as typed, and the README's layout lists every file of tools/."""
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
    listed, in_tools = set(), False
    for line in layout:
        if line.startswith("tools/"):
            in_tools = True
        elif line and not line.startswith(" "):
            in_tools = False
        if in_tools:
            listed |= {w.strip(",.()") for w in line.replace("tools/", " ", 1).split()}
    problems += [f"the README's layout does not list tools/{n}" for n in names if n not in listed and n != "__pycache__"]
    problems += [f"the README's layout lists tools/{n}, which does not exist" for n in sorted(listed)
                 if (n.endswith(".py") or n.endswith(".sh")) and n not in names]
    mentioned = set()
    for word in readme.replace("`", " ").replace("(", " ").replace(")", " ").split():
        if word.startswith("tools/"):
            mentioned.add(word[len("tools/"):].rstrip(".,:;"))
    problems += [f"the README mentions tools/{n}, which does not exist" for n in sorted(mentioned) if n and n not in names]
    expect(not problems, "; ".join(problems))
    print(f"ok: {len(names)} files in tools/, each listed in the README's layout; the scripts run as typed")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["render", "refuse", "compare", "layout"])
    p.add_argument("--tools", help="the tools/ folder")
    p.add_argument("--runner", help="compare: the runner binary")
    p.add_argument("--readme", help="layout: the README")
    p.add_argument("--report")
    p.add_argument("--workdir")
    p.add_argument("--baseline")
    p.add_argument("--command")
    p.add_argument("--allow-synthetic", action="store_true")
    p.add_argument("--no-matplotlib", action="store_true", help="hide matplotlib from the tool")
    p.add_argument("--slow-kernel", default="cuda_04_coarsened", help="compare: the kernel made 3x slower in B")
    a = p.parse_args()
    try:
        {"render": mode_render, "refuse": mode_refuse, "compare": mode_compare, "layout": mode_layout}[a.mode](a)
    except CheckFailed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    except Skipped as e:
        print(f"SKIPPED: {e}")  # ctest: SKIP_RETURN_CODE 77; the line is what tests/cmake/print_skip_reasons.cmake shows
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())

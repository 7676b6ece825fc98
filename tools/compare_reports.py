#!/usr/bin/env python3
"""Compare two kreg runner reports row by row.

    python3 tools/compare_reports.py A.json B.json

For every (kernel, shape, dtype) in both reports: the medians, their ratio B/A (> 1: B is slower) and the
noise, taken as the sum of the two rows' coefficients of variation. A change larger than the noise is
flagged "slower" or "faster"; a smaller one is not a change. Rows that are not ok in either report, and
rows found in only one of them, are listed with their status. Always exits 0 once both reports are read
(2 when one cannot be), so it can sit in scripts that only want the table.
"""

import sys

import kreg_report as kr


def row_key(record):
    return (record["kernel"],) + kr.problem_of(record)


def index(report):
    rows = {}
    for r in report["records"]:
        rows.setdefault(row_key(r), r)
    return rows


def describe(path, report):
    meta = report["meta"]
    gpu = ((meta.get("gpu") or {}).get("facts") or {}).get("name", "no GPU")
    synthetic = "  [SYNTHETIC: not a measurement]" if meta.get("synthetic") is True else ""
    return f"{path}: {meta.get('timestamp', '?')}, git {meta.get('git_sha', '?')}, {gpu}{synthetic}"


def compare_row(a, b):
    """[A ms, B ms, B/A, noise, verdict] for two rows of the same problem."""
    ma, mb = kr.median_ms(a), kr.median_ms(b)
    if ma is None or mb is None:
        return ["—", "—", "—", "—", f"not compared (A {a['status']}, B {b['status']})"]
    ratio = mb / ma
    noise = (kr.cv(a) or 0.0) + (kr.cv(b) or 0.0)
    if abs(ratio - 1.0) <= noise:
        verdict = "within noise"
    else:
        verdict = "SLOWER" if ratio > 1 else "FASTER"
    return [kr.fmt(ma, 4), kr.fmt(mb, 4), kr.fmt(ratio, 4), kr.fmt(noise, 2), verdict]


def sort_key(key, kernels, problems):
    return (kernels.index(key[0]), problems.index(key[1:]))


def format_table(header, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def compare(path_a, report_a, path_b, report_b):
    rows_a, rows_b = index(report_a), index(report_b)
    both = report_a["records"] + report_b["records"]
    kernels, problems = kr.kernel_order(both), kr.problem_order(both)
    order = lambda keys: sorted(keys, key=lambda k: sort_key(k, kernels, problems))  # noqa: E731
    common = order(set(rows_a) & set(rows_b))
    out = ["A = " + describe(path_a, report_a), "B = " + describe(path_b, report_b), ""]
    table = [[k[0], kr.shape_label(k[1:4]), k[4]] + compare_row(rows_a[k], rows_b[k]) for k in common]
    if table:
        out.append(format_table(["kernel", "shape", "dtype", "A ms", "B ms", "B/A", "noise", "verdict"], table))
    flagged = sum(1 for r in table if r[-1] in ("SLOWER", "FASTER"))
    out += ["", f"{len(common)} row(s) in both; {flagged} changed by more than the noise (cv A + cv B)."]
    for name, only in (("A", order(set(rows_a) - set(rows_b))), ("B", order(set(rows_b) - set(rows_a)))):
        if only:
            out.append(f"Only in {name}: " + ", ".join(f"{k[0]} {kr.problem_label(k[1:])}" for k in only))
    return "\n".join(out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        report_a, report_b = kr.load_report(argv[0]), kr.load_report(argv[1])
    except kr.ReportError as e:
        print(f"compare_reports: {e}", file=sys.stderr)
        return 2
    print(compare(argv[0], report_a, argv[1], report_b))
    return 0


if __name__ == "__main__":
    sys.exit(main())

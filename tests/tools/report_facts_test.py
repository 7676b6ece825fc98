#!/usr/bin/env python3
"""kreg_report learns what an operation is from the report (meta.operations, schema 1.2.0), else from its rows'
rate fields, else from the shape, and lists no operation itself: an operation no tool has heard of ("scan")
is charted in GB/s when its report says so, and ordered where the report's table puts it."""
import importlib
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)


def row(kernel, op, m, n, k, status="ok", **rates):
    r = {"kernel": kernel, "dtype": "fp32", "m": m, "n": n, "k": k, "status": status, "stats": {"median_ms": 1.0}}
    if op != "gemm":
        r["operation"] = op
    r.update(rates)
    return r


def load(report):
    import kreg_report
    kr = importlib.reload(kreg_report)  # forget what earlier reports taught it
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(report, f)
    try:
        return kr, kr.load_report(f.name)
    finally:
        os.unlink(f.name)


# 1. meta.operations says scan is data movement and comes before gemm in the table; its only row failed.
kr, rep = load({"meta": {"operations": [{"name": "scan", "keys": ["n"], "rate": "gbps"},
                                         {"name": "gemm", "keys": ["m", "n", "k"], "rate": "gflops"}]},
                "records": [row("s", "scan", 0, 100, 7, status="crashed"), row("g", "gemm", 4, 4, 4, gflops=1.0)]})
scan, gemm = kr.problem_of(rep["records"][0]), kr.problem_of(rep["records"][1])
expect(kr.is_data_movement(scan), "meta.operations: scan is data movement though k = 7 and its row failed")
expect(not kr.is_data_movement(gemm), "meta.operations: gemm is not data movement")
expect(kr.problem_order(rep["records"]) == [scan, gemm], "problem_order follows the report's table order (scan first)")

# 2. No meta.operations (an older report): the rows' own rate fields decide.
kr, rep = load({"meta": {}, "records": [row("s", "scan", 0, 100, 5, gbps=10.0), row("t", "tile", 8, 8, 0, gflops=2.0)]})
expect(kr.is_data_movement(kr.problem_of(rep["records"][0])), "rows: a row with gbps makes its operation data movement")
expect(not kr.is_data_movement(kr.problem_of(rep["records"][1])), "rows: a row with gflops makes it arithmetic")

# 3. Neither (only failed rows of an unknown operation): the shape decides, only GEMM has a K.
kr, rep = load({"meta": {}, "records": [row("x", "mystery", 0, 9, 0, status="failed"),
                                        row("y", "other", 3, 3, 3, status="failed")]})
expect(kr.is_data_movement(kr.problem_of(rep["records"][0])), "shape: k = 0 is data movement")
expect(not kr.is_data_movement(kr.problem_of(rep["records"][1])), "shape: k > 0 is not")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failed")
sys.exit(1 if failures else 0)

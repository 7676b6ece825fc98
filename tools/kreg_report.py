"""Reading a kreg runner report (the JSON written by `runner --json`), shared by the tools in this folder.

A report is {"meta": {...}, "baseline": ..., "records": [...], "summary": {...}}, where "baseline" is null,
one kernel name for every dtype, or {dtype: kernel name} (a row's dtype without an entry has no baseline); each record
carries the fields of kreg::Record (core/src/common/job.hpp): kernel, dtype, m, n, k, status, reason,
stats {median_ms, cv, ...}, extra {launch, attributes, model_bytes, roofline, ...}; rows of an operation other
than GEMM carry "operation" ("transpose", "block_transpose"; absent for GEMM), k = 0, "block" (block_transpose)
and "gbps" (configs/schema/report.schema.json). Nothing here computes a number the runner did not measure,
except ratios, FLOP and byte rates derived from the medians it reported (and only where the report lacks them).
"""

import json
import math

# The CUDA progression in the order the lectures introduce it; each step is compared with the one before.
LECTURE_ORDER = [
    "cuda_01_naive",
    "cuda_02_tiled16",
    "cuda_02_tiled32",
    "cuda_03_conflicts",
    "cuda_03_padded",
    "cuda_03_padded_dynamic",
    "cuda_04_coarsened",
    "cuda_05_register_blocked",
    "cuda_06_vectorized",
    "cuda_07_double_buffered",
    "cuda_08_cp_async",
    "cuda_09_warptiled",
]

INPUT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2}

# A row without "operation" is a GEMM row.
GEMM = "gemm"
# What a transpose moves at least: each fp32 element read once and written once (TransposeOperation::bytes_moved);
# only for reports older than the rows' extra.roofline.min_dram_bytes, which had no other data-movement operation.
TRANSPOSE_ELEMENT_BYTES = 4

# What the reports loaded so far say of each operation: its rate column, "gflops" (arithmetic, against the FLOP
# peak) or "gbps" (data movement, against the measured copy bandwidth), and the operations in the runner's table
# order. Read from meta.operations (schema 1.2.0, the runner's operation table), else learnt from the rows' own
# rate fields (older reports); nothing here lists the operations itself.
_RATE_OF = {GEMM: "gflops"}
_TABLE_ORDER = [GEMM]


def learn_operations(report):
    """Takes what `report` says of its operations into _RATE_OF and _TABLE_ORDER (load_report calls it)."""
    facts = report.get("meta", {}).get("operations")
    if isinstance(facts, list):
        table = [e for e in facts if isinstance(e, dict) and isinstance(e.get("name"), str)
                 and e.get("rate") in ("gflops", "gbps")]
        for entry in table:
            _RATE_OF[entry["name"]] = entry["rate"]
        order = [e["name"] for e in table]
        _TABLE_ORDER[:] = order + [op for op in _TABLE_ORDER if op not in order]
    for r in report.get("records", []):
        op = operation_of(r)
        if op in _RATE_OF:
            continue
        for rate in ("gbps", "gflops"):
            if _number(r.get(rate)) is not None:
                _RATE_OF[op] = rate
                break
        if op not in _TABLE_ORDER:
            _TABLE_ORDER.append(op)


class ReportError(Exception):
    """A report that cannot be read or does not have the layout the runner writes."""


def load_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        raise ReportError(f"cannot open report '{path}': {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise ReportError(f"report '{path}' is not valid JSON: {e}") from e
    if not isinstance(report, dict) or not isinstance(report.get("records"), list):
        raise ReportError(f"report '{path}' has no \"records\" array (is it a runner --json report?)")
    for i, r in enumerate(report["records"]):
        missing = [key for key in ("kernel", "dtype", "m", "n", "k", "status") if key not in r]
        if missing:
            raise ReportError(f"report '{path}': records[{i}] lacks {', '.join(missing)}")
    report.setdefault("meta", {})
    learn_operations(report)
    return report


def shape_of(record):
    return (int(record["m"]), int(record["n"]), int(record["k"]))


def operation_of(record):
    """The row's operation: "gemm" for rows without one (reports before operations, and GEMM rows)."""
    op = record.get("operation")
    return op if isinstance(op, str) and op else GEMM


def block_of(record):
    """block_transpose's tile edge, or None."""
    block = record.get("block")
    return int(block) if isinstance(block, int) and not isinstance(block, bool) else None


def problem_of(record):
    """(m, n, k, dtype, operation, block): rows with the same problem are compared with each other. A block
    transpose at the same M x N with another block is another problem."""
    return shape_of(record) + (record["dtype"], operation_of(record), block_of(record))


def is_data_movement(problem):
    """Whether the problem's operation is measured in GB/s (its report says so). An operation no loaded report
    describes and no row of which has a rate (only failed rows, in a report older than meta.operations) is
    taken by its shape: only GEMM has a K."""
    rate = _RATE_OF.get(problem[4])
    return rate == "gbps" if rate is not None else problem[2] == 0


def is_data_movement_record(record):
    return is_data_movement(problem_of(record))


def shape_label(shape):
    """The runner's own spelling of a shape, "MxNxK"; a shape without M (a reduction's: m is 0) is its N."""
    if len(shape) >= 2 and shape[0] == 0:
        return str(shape[1])
    return "x".join(str(v) for v in shape)


def problem_label(problem):
    """ "MxNxK (dtype)" for GEMM; "MxN (dtype)" for a transpose, which has no K; "MxN, block B (dtype)" for a
    block transpose."""
    if is_data_movement(problem):
        block = f", block {problem[5]}" if problem[5] is not None else ""
        return f"{shape_label(problem[:2])}{block} ({problem[3]})"
    return f"{shape_label(problem[:3])} ({problem[3]})"


def is_square(shape):
    return shape[0] == shape[1] == shape[2]


def is_square_problem(problem):
    """M = N = K for GEMM, M = N for a transpose; a shape of n alone (a reduction's) counts as square."""
    if is_data_movement(problem) and problem[0] == 0:
        return True
    return problem[0] == problem[1] if is_data_movement(problem) else is_square(problem[:3])


def median_ms(record):
    """The median of an ok row, or None for a row that has none."""
    stats = record.get("stats") or {}
    value = stats.get("median_ms")
    if record.get("status") != "ok" or not isinstance(value, (int, float)) or not value > 0:
        return None
    return float(value)


def cv(record):
    value = (record.get("stats") or {}).get("cv")
    return float(value) if isinstance(value, (int, float)) else None


def flops(record):
    m, n, k = shape_of(record)
    return 2.0 * m * n * k


def achieved_tflops(record):
    ms = median_ms(record)
    return None if ms is None else flops(record) / (ms * 1e-3) / 1e12


def roofline(record):
    block = (record.get("extra") or {}).get("roofline")
    return block if isinstance(block, dict) else {}


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def bytes_moved(record):
    """Bytes a transpose moves at least: the runner's extra.roofline.min_dram_bytes, else 2 M N 4."""
    recorded = _number(roofline(record).get("min_dram_bytes"))
    if recorded is not None and recorded > 0:
        return recorded
    m, n, _ = shape_of(record)
    return 2.0 * TRANSPOSE_ELEMENT_BYTES * m * n


def achieved_gbps(record):
    """A transpose row's GB/s (1e9 B/s): the runner's own "gbps" (bytes moved / median), else
    extra.roofline.achieved_gbps, else bytes_moved / median; None for a row that is not ok."""
    ms = median_ms(record)
    if ms is None:
        return None
    for value in (record.get("gbps"), roofline(record).get("achieved_gbps")):
        if _number(value) is not None:
            return _number(value)
    return bytes_moved(record) / (ms * 1e-3) / 1e9


def copy_fraction(record, copy_gbps):
    """A transpose row's GB/s over the measured copy bandwidth: the runner's
    extra.roofline.fraction_of_copy_bandwidth, else achieved_gbps / copy_gbps (meta.gpu.ceilings.dram_copy_gbps)."""
    if median_ms(record) is None:
        return None
    recorded = _number(roofline(record).get("fraction_of_copy_bandwidth"))
    if recorded is not None:
        return recorded
    gbps = achieved_gbps(record)
    return gbps / copy_gbps if gbps is not None and copy_gbps else None


def min_dram_ai(record):
    """FLOP per byte when each input is read once and C written once (the runner's roofline formula)."""
    ai = roofline(record).get("arithmetic_intensity")
    if isinstance(ai, (int, float)):
        return float(ai)
    m, n, k = shape_of(record)
    e = INPUT_BYTES.get(record["dtype"], 4)
    return flops(record) / (e * (m * k + k * n) + 4.0 * m * n)


def modelled_ai(record):
    """FLOP per byte of the kernel's own traffic model (extra.model_bytes), or None."""
    ai = roofline(record).get("modelled_ai")
    if isinstance(ai, (int, float)):
        return float(ai)
    model_bytes = (record.get("extra") or {}).get("model_bytes")
    if isinstance(model_bytes, (int, float)) and model_bytes > 0:
        return flops(record) / model_bytes
    return None


# Ticks of a size axis closer than this ratio (512 and 517 on a log axis) would print on top of each other.
MIN_TICK_RATIO = 1.25


def size_ticks(sizes, min_ratio=MIN_TICK_RATIO):
    """[(position, label)] for a log size axis: sizes nearer than min_ratio to the previous one share its tick,
    labelled "512/517", so that no two labels overlap ("5117")."""
    ticks = []
    for size in sorted(set(sizes)):
        if ticks and size / ticks[-1][2] < min_ratio:
            position, label, _ = ticks[-1]
            ticks[-1] = (position, f"{label}/{size}", size)
        else:
            ticks.append((size, str(size), size))
    return [(position, label) for position, label, _ in ticks]


def median_interval_ms(record):
    """(low, high) of the median's confidence interval the runner stored (stats.median_ci_low_ms and
    median_ci_high_ms), or None for a row without one."""
    stats = record.get("stats") or {}
    low, high = _number(stats.get("median_ci_low_ms")), _number(stats.get("median_ci_high_ms"))
    if median_ms(record) is None or low is None or high is None or not 0 < low <= high:
        return None
    return low, high


def value_at_ms(value, record, ms):
    """value(record) as if the median were ms: a rate the runner stored for the median itself is left out, so
    that it is derived from ms."""
    moved = dict(record)
    moved["stats"] = dict(record.get("stats") or {}, median_ms=ms)
    moved.pop("gbps", None)
    extra = dict(record.get("extra") or {})
    extra["roofline"] = {key: v for key, v in roofline(record).items() if key not in ("achieved_gbps", "achieved_tflops")}
    moved["extra"] = extra
    return value(moved)


def value_interval(value, record):
    """(low, high) of value (median_ms, achieved_tflops, achieved_gbps, ...) over the median's interval, or
    None: an error bar from what the runner measured, whichever way value grows with the time."""
    interval = median_interval_ms(record)
    if interval is None:
        return None
    ends = [value_at_ms(value, record, ms) for ms in interval]
    if any(v is None for v in ends):
        return None
    return min(ends), max(ends)


# The roofline's x axis: one definition of arithmetic intensity for every point of a chart.
AI_KINDS = {
    "modelled": "arithmetic intensity, modelled (FLOP per byte of the kernel's own traffic model)",
    "min DRAM": "arithmetic intensity, minimum DRAM traffic (FLOP per byte: A and B read once, C written once)",
}


def consistent_ai(records):
    """(kind, [ai per record]): the kernels' modelled intensity when every record has one, else the minimum-DRAM
    intensity for all of them, never a mix of both on one chart."""
    modelled = [modelled_ai(r) for r in records]
    if records and all(ai is not None for ai in modelled):
        return "modelled", modelled
    return "min DRAM", [min_dram_ai(r) for r in records]


def kernel_order(records):
    """Kernels in lecture order first, then every other kernel in the order the report lists it."""
    seen = []
    for r in records:
        if r["kernel"] not in seen:
            seen.append(r["kernel"])

    def key(name):
        if name in LECTURE_ORDER:
            return (0, LECTURE_ORDER.index(name))
        return (1, seen.index(name))

    return sorted(seen, key=key)


def problem_order(records):
    """Square shapes by size first (block transposes by block, then size), then the other shapes in the order
    the report lists them; GEMM before the data-movement operations when a report has both."""
    seen = []
    for r in records:
        p = problem_of(r)
        if p not in seen:
            seen.append(p)

    def key(p):
        operation = _TABLE_ORDER.index(p[4]) if p[4] in _TABLE_ORDER else len(_TABLE_ORDER)
        if is_square_problem(p):
            return (operation, 0, p[5] or 0, p[0], p[3])
        return (operation, 1, seen.index(p))

    return sorted(seen, key=key)


def index_rows(records):
    """{(kernel, problem): first row} -- the runner's own baseline lookup also keeps the first."""
    rows = {}
    for r in records:
        rows.setdefault((r["kernel"], problem_of(r)), r)
    return rows


def baseline_kernel(baseline, dtype):
    """The kernel rows of `dtype` are compared with, given a report's "baseline" (None, name or {dtype: name})."""
    if baseline is None:
        return None
    if isinstance(baseline, str):
        return baseline
    return baseline.get(dtype)


def baseline_kernels(baseline):
    """Every kernel a baseline names, each once, in order."""
    if baseline is None:
        return []
    if isinstance(baseline, str):
        return [baseline]
    return list(dict.fromkeys(baseline[d] for d in sorted(baseline)))


def parse_baseline_text(text):
    """The runner's --baseline syntax: "NAME" (every dtype) or "fp32=cublas_sgemm,bf16=cublas_bf16"."""
    if "=" not in text:
        if not text.strip():
            raise ValueError("empty kernel name")
        return text.strip()
    out = {}
    for item in text.split(","):
        dtype, eq, name = item.partition("=")
        dtype, name = dtype.strip(), name.strip()
        if not eq:
            raise ValueError(f"'{item.strip()}' in '{text}' is not DTYPE=KERNEL")
        if dtype not in INPUT_BYTES:
            raise ValueError(f"unknown dtype '{dtype}' in '{text}' (known: {', '.join(INPUT_BYTES)})")
        if not name:
            raise ValueError(f"empty kernel name for {dtype} in '{text}'")
        if dtype in out:
            raise ValueError(f"dtype {dtype} is given twice in '{text}'")
        out[dtype] = name
    return out


def describe_baseline(baseline):
    """`name`, or `name` (dtype), ... for a per-dtype baseline."""
    if isinstance(baseline, str):
        return f"`{baseline}`"
    return ", ".join(f"`{baseline[d]}` ({d})" for d in sorted(baseline))


def baseline_ratio(record, baseline_row):
    """Baseline median over this row's median (> 1: faster than the baseline), or None."""
    if baseline_row is None:
        return None
    mine, theirs = median_ms(record), median_ms(baseline_row)
    if mine is None or theirs is None:
        return None
    return theirs / mine


def fmt(value, digits=3):
    """A number with `digits` significant figures, or an em dash for a missing value."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if value == 0:
        return "0"
    if abs(value) >= 10 ** digits:
        return f"{value:.0f}"
    # '#' keeps trailing zeros (1.00, 0.280) so every figure shows its precision; it also keeps a bare
    # trailing point ("100."), which is dropped.
    return f"{value:#.{digits}g}".rstrip(".")

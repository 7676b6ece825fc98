"""PNG charts for kreg_results.py. Importing this module imports matplotlib (Agg backend): the caller catches
the ImportError and stops (or, with --no-charts, never imports this module).

Each chart function returns (title, path, None) when it wrote a PNG, or (title, None, reason) when the
report has nothing to draw.
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402

import kreg_report as kr  # noqa: E402

DPI = 120
CHART_FILES = {"tflops": "tflops_vs_size.png", "time": "time_vs_size.png", "roofline": "roofline.png",
               "gbps": "gbps_vs_size.png", "gbps_block": "gbps_vs_block.png"}
MARKERS = "osD^vP*Xh<>"
# The measured cuBLAS ceiling (meta.gpu.ceilings) and computed peak (meta.gpu.facts.peaks) a GEMM dtype's
# roofline points are drawn under, and what the legend calls them.
DTYPE_ROOFS = {
    "fp32": ("sgemm_tflops", "fp32_tflops", "SGEMM", "FP32"),
    "tf32": ("tf32_tflops", "tf32_tensor_tflops", "cuBLAS TF32", "TF32 tensor"),
    "bf16": ("bf16_tflops", "bf16_tensor_tflops", "cuBLAS BF16", "BF16 tensor"),
}


def style(i):
    """A distinct colour and marker for the i-th series (tab20 has 20 colours, the lecture has 13 kernels)."""
    return {"color": plt.get_cmap("tab20")(i % 20), "marker": MARKERS[i % len(MARKERS)]}


def square_series(res, problems=None):
    """{(kernel, dtype): [(size, record), ...]} for ok rows of square shapes (GEMM's by default), sizes ascending."""
    series = {}
    for kernel in res.kernels:
        for problem in res.gemm_problems if problems is None else problems:
            record = res.row(kernel, problem)
            if record is not None and kr.is_square_problem(problem) and kr.median_ms(record) is not None:
                series.setdefault((kernel, problem[3]), []).append((problem[0], record))
    return series


def series_label(key, several_dtypes):
    kernel, dtype = key
    return f"{kernel} ({dtype})" if several_dtypes else kernel


def save(fig, path, res):
    if res.meta.get("synthetic") is True:  # a chart can travel without its document: mark it too
        fig.text(0.45, 0.5, "SYNTHETIC DATA", fontsize=48, color="red", alpha=0.2, rotation=25,
                 ha="center", va="center")
    fig.savefig(path, dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def size_chart(res, charts_dir, name, title, ylabel, value, log_y, problems=None, xlabel="M = N = K"):
    series = square_series(res, problems)
    if not series:
        return (title, None, "no ok rows of square shapes")
    several_dtypes = len({dtype for _, dtype in series}) > 1
    fig, ax = plt.subplots(figsize=(9, 5.5))
    sizes = sorted({size for points in series.values() for size, _ in points})
    for i, (key, points) in enumerate(series.items()):
        draw_series(ax, [s for s, _ in points], [r for _, r in points], value, series_label(key, several_dtypes), style(i))
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ticks = kr.size_ticks(sizes)  # 512 and 517 share a tick: their labels would overlap
    ax.xaxis.set_major_locator(FixedLocator([position for position, _ in ticks]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([label for _, label in ticks])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if problems is not None:
        copy_line(ax, res)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    path = os.path.join(charts_dir, name)
    save(fig, path, res)
    return (title, path, None)


def draw_series(ax, xs, records, value, label, series_style):
    """A line of value(record) against xs, with the median's confidence interval (as the runner stored it) as
    error bars where the row has one."""
    ys = [value(r) for r in records]
    lows, highs = [], []
    for y, r in zip(ys, records):
        interval = kr.value_interval(value, r)
        lows.append(max(0.0, y - interval[0]) if interval else 0.0)
        highs.append(max(0.0, interval[1] - y) if interval else 0.0)
    ax.errorbar(xs, ys, yerr=[lows, highs], label=label, capsize=2, elinewidth=0.8, **series_style)


def copy_line(ax, res):
    """The measured device-to-device copy bandwidth, the roof of a transpose's GB/s."""
    copy = number(res.ceilings, "dram_copy_gbps")
    if copy:
        ax.axhline(copy, color="black", linestyle="--", alpha=0.7, label=f"measured copy {copy:.0f} GB/s")


def block_chart(res, charts_dir, name, title):
    """Block transposes: GB/s against the block (each at its own M x N, a multiple of the block), a line per
    kernel and dtype."""
    series = {}
    for kernel in res.kernels:
        for problem in res.movement_problems:
            record = res.row(kernel, problem)
            if record is not None and problem[5] is not None and kr.median_ms(record) is not None:
                series.setdefault((kernel, problem[3]), []).append((problem[5], record))
    if not series:
        return (title, None, "no ok block transpose rows")
    several_dtypes = len({dtype for _, dtype in series}) > 1
    fig, ax = plt.subplots(figsize=(9, 5.5))
    blocks = sorted({block for points in series.values() for block, _ in points})
    for i, (key, points) in enumerate(series.items()):
        points.sort(key=lambda p: p[0])
        draw_series(ax, [b for b, _ in points], [r for _, r in points], kr.achieved_gbps,
                    series_label(key, several_dtypes), style(i))
    ax.xaxis.set_major_locator(FixedLocator(blocks))
    ax.set_xlabel("block (tile edge); M = N = the largest multiple of it the sweep chose")
    ax.set_ylabel("GB/s")
    ax.set_title(title)
    copy_line(ax, res)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    path = os.path.join(charts_dir, name)
    save(fig, path, res)
    return (title, path, None)


def largest_square_points(res):
    """(ai_kind, [(kernel, dtype, size, ai, record)]): each kernel at its largest square size with an ok row,
    every point with the same definition of arithmetic intensity (kreg_report.consistent_ai)."""
    chosen = [(kernel, dtype, rows[-1][0], rows[-1][1]) for (kernel, dtype), rows in square_series(res).items()]
    kind, ais = kr.consistent_ai([record for _, _, _, record in chosen])
    return kind, [(kernel, dtype, size, ai, record) for (kernel, dtype, size, record), ai in zip(chosen, ais)]


def number(mapping, key):
    value = (mapping or {}).get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def draw_roof(ax, res, x_lo, x_hi, dtypes):
    """The measured bandwidth slope and, for each dtype drawn, its measured cuBLAS ceiling, its computed peak
    dashed and the measured ridge point (fp32 alone: SGEMM and the FP32 peak, as the lecture's chart)."""
    bandwidth = number(res.ceilings, "dram_copy_gbps")
    roofs = []
    for dtype in sorted(dtypes, key=lambda d: list(DTYPE_ROOFS).index(d) if d in DTYPE_ROOFS else len(DTYPE_ROOFS)):
        if dtype in DTYPE_ROOFS:
            measured_key, peak_key, measured_name, peak_name = DTYPE_ROOFS[dtype]
            roofs.append((number(res.ceilings, measured_key), number((res.facts or {}).get("peaks"), peak_key),
                          measured_name, peak_name))
    if bandwidth:
        tops = [v for measured, peak, _, _ in roofs for v in (measured, peak) if v]
        top = max(tops) if tops else bandwidth * x_hi / 1e3
        x_top = min(x_hi, top * 1e3 / bandwidth)
        ax.plot([x_lo, x_top], [bandwidth * x_lo / 1e3, bandwidth * x_top / 1e3], color="black",
                label=f"measured DRAM copy {bandwidth:.0f} GB/s")
    for measured, peak, measured_name, peak_name in roofs:
        if measured:
            ax.axhline(measured, color="black", linestyle="-", alpha=0.7,
                       label=f"measured {measured_name} {measured:.1f} TFLOP/s")
        if peak:
            ax.axhline(peak, color="gray", linestyle="--", label=f"computed {peak_name} peak {peak:.1f} TFLOP/s")
        if bandwidth and measured:
            ax.axvline(measured * 1e3 / bandwidth, color="gray", linestyle=":", alpha=0.6,
                       label=f"ridge (measured{'' if len(roofs) == 1 else ', ' + measured_name}) "
                             f"{measured * 1e3 / bandwidth:.1f} FLOP/B")
    return bool(bandwidth or any(measured or peak for measured, peak, _, _ in roofs))


def roofline_chart(res, charts_dir):
    title = "Roofline: each kernel at its largest square size"
    kind, points = largest_square_points(res)
    if not points:
        return (title, None, "no ok rows of square shapes")
    ais = [p[3] for p in points]
    x_lo, x_hi = min(ais) / 4, max(ais) * 4
    fig, ax = plt.subplots(figsize=(9, 6))
    has_roof = draw_roof(ax, res, x_lo, x_hi, {p[1] for p in points})
    several_dtypes = len({p[1] for p in points}) > 1
    for i, (kernel, dtype, size, ai, record) in enumerate(points):
        draw_series(ax, [ai], [record], kr.achieved_tflops, f"{series_label((kernel, dtype), several_dtypes)} @ {size}",
                    dict(style(i), linestyle="none", zorder=3))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(kr.AI_KINDS[kind])
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title if has_roof else title + " (no ceilings in this report)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    path = os.path.join(charts_dir, res.chart_prefix + CHART_FILES["roofline"])
    save(fig, path, res)
    return (title, path, None)


def planned(res, with_roofline):
    """The charts a report gets: GEMM's TFLOP/s and time (also for a report with no rows, which says why they
    are missing), the roofline with roofline data, GB/s against size for transposes and against the block for
    block transposes. FLOP charts of a transpose would plot zeros."""
    names = []
    if res.gemm_problems or not res.movement_problems:
        names += ["tflops", "time"] + (["roofline"] if with_roofline else [])
    if any(p[4] == "transpose" for p in res.movement_problems):
        names.append("gbps")
    if any(p[4] == "block_transpose" for p in res.movement_problems):
        names.append("gbps_block")
    return names


def chart_files(res, with_roofline):
    """The file names render_all may write: the caller checks them before anything is overwritten."""
    return [res.chart_prefix + CHART_FILES[name] for name in planned(res, with_roofline)]


def render_all(res, charts_dir, with_roofline):
    """Every chart the report has data for; the roofline only when the rows carry roofline data."""
    def file(name):
        return res.chart_prefix + CHART_FILES[name]

    draw = {
        "tflops": lambda: size_chart(res, charts_dir, file("tflops"), "TFLOP/s against size (square shapes)",
                                     "TFLOP/s", kr.achieved_tflops, log_y=False),
        "time": lambda: size_chart(res, charts_dir, file("time"), "Median time against size (square shapes)",
                                   "median ms", kr.median_ms, log_y=True),
        "roofline": lambda: roofline_chart(res, charts_dir),
        "gbps": lambda: size_chart(res, charts_dir, file("gbps"), "Transpose GB/s against size (square shapes)",
                                   "GB/s", kr.achieved_gbps, log_y=False,
                                   problems=[p for p in res.movement_problems if p[4] == "transpose"], xlabel="M = N"),
        "gbps_block": lambda: block_chart(res, charts_dir, file("gbps_block"), "Block transpose GB/s against the block"),
    }
    return {name: draw[name]() for name in planned(res, with_roofline)}

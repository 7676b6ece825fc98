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
CHART_FILES = {"tflops": "tflops_vs_size.png", "time": "time_vs_size.png", "roofline": "roofline.png"}
MARKERS = "osD^vP*Xh<>"


def style(i):
    """A distinct colour and marker for the i-th series (tab20 has 20 colours, the lecture has 13 kernels)."""
    return {"color": plt.get_cmap("tab20")(i % 20), "marker": MARKERS[i % len(MARKERS)]}


def square_series(res):
    """{(kernel, dtype): [(size, record), ...]} for ok rows of square shapes, sizes ascending."""
    series = {}
    for kernel in res.kernels:
        for problem in res.problems:
            record = res.row(kernel, problem)
            if record is not None and kr.is_square(problem[:3]) and kr.median_ms(record) is not None:
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


def size_chart(res, charts_dir, name, title, ylabel, value, log_y):
    series = square_series(res)
    if not series:
        return (title, None, "no ok rows of square shapes")
    several_dtypes = len({dtype for _, dtype in series}) > 1
    fig, ax = plt.subplots(figsize=(9, 5.5))
    sizes = sorted({size for points in series.values() for size, _ in points})
    for i, (key, points) in enumerate(series.items()):
        ax.plot([s for s, _ in points], [value(r) for _, r in points], label=series_label(key, several_dtypes),
                **style(i))
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(s) for s in sizes])
    ax.set_xlabel("M = N = K")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    path = os.path.join(charts_dir, name)
    save(fig, path, res)
    return (title, path, None)


def largest_square_points(res):
    """[(kernel, dtype, size, ai, ai_kind, tflops)]: each kernel at its largest square size with an ok row."""
    points = []
    for (kernel, dtype), rows in square_series(res).items():
        size, record = rows[-1]
        ai, kind = kr.modelled_ai(record), "modelled"
        if ai is None:
            ai, kind = kr.min_dram_ai(record), "min DRAM"
        points.append((kernel, dtype, size, ai, kind, kr.achieved_tflops(record)))
    return points


def number(mapping, key):
    value = (mapping or {}).get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def draw_roof(ax, res, x_lo, x_hi):
    """The measured bandwidth slope and SGEMM ceiling, and the computed FP32 peak dashed."""
    bandwidth = number(res.ceilings, "dram_copy_gbps")
    sgemm = number(res.ceilings, "sgemm_tflops")
    fp32_peak = number((res.facts or {}).get("peaks"), "fp32_tflops")
    if bandwidth:
        roofs = [v for v in (sgemm, fp32_peak) if v]
        top = max(roofs) if roofs else bandwidth * x_hi / 1e3
        x_top = min(x_hi, top * 1e3 / bandwidth)
        ax.plot([x_lo, x_top], [bandwidth * x_lo / 1e3, bandwidth * x_top / 1e3], color="black",
                label=f"measured DRAM copy {bandwidth:.0f} GB/s")
    if sgemm:
        ax.axhline(sgemm, color="black", linestyle="-", alpha=0.7, label=f"measured SGEMM {sgemm:.1f} TFLOP/s")
    if fp32_peak:
        ax.axhline(fp32_peak, color="gray", linestyle="--", label=f"computed FP32 peak {fp32_peak:.1f} TFLOP/s")
    if bandwidth and sgemm:
        ax.axvline(sgemm * 1e3 / bandwidth, color="gray", linestyle=":", alpha=0.6,
                   label=f"ridge (measured) {sgemm * 1e3 / bandwidth:.1f} FLOP/B")
    return bool(bandwidth or sgemm or fp32_peak)


def roofline_chart(res, charts_dir):
    title = "Roofline: each kernel at its largest square size"
    points = largest_square_points(res)
    if not points:
        return (title, None, "no ok rows of square shapes")
    ais = [p[3] for p in points]
    x_lo, x_hi = min(ais) / 4, max(ais) * 4
    fig, ax = plt.subplots(figsize=(9, 6))
    has_roof = draw_roof(ax, res, x_lo, x_hi)
    several_dtypes = len({p[1] for p in points}) > 1
    for i, (kernel, dtype, size, ai, kind, tflops) in enumerate(points):
        ax.scatter([ai], [tflops], zorder=3, s=40, **style(i),
                   label=f"{series_label((kernel, dtype), several_dtypes)} @ {size} ({kind} AI)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title if has_roof else title + " (no ceilings in this report)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    path = os.path.join(charts_dir, CHART_FILES["roofline"])
    save(fig, path, res)
    return (title, path, None)


def chart_files(with_roofline):
    """The file names render_all may write: the caller checks them before anything is overwritten."""
    return [f for name, f in CHART_FILES.items() if with_roofline or name != "roofline"]


def render_all(res, charts_dir, with_roofline):
    """Every chart the report has data for; the roofline only when the rows carry roofline data."""
    charts = {
        "tflops": size_chart(res, charts_dir, CHART_FILES["tflops"], "TFLOP/s against size (square shapes)",
                             "TFLOP/s", kr.achieved_tflops, log_y=False),
        "time": size_chart(res, charts_dir, CHART_FILES["time"], "Median time against size (square shapes)",
                           "median ms", kr.median_ms, log_y=True),
    }
    if with_roofline:
        charts["roofline"] = roofline_chart(res, charts_dir)
    return charts

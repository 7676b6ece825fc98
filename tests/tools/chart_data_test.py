#!/usr/bin/env python3
"""What the charts draw, on a committed H200 report (docs/results/h200-sweep-2026-11-30c.json), without
matplotlib: the size axis never gives two labels one place (512 and 517 printed as "5117"), the roofline uses
one definition of arithmetic intensity for every point, and error bars come from the median's interval the
runner stored. With matplotlib, the charts are drawn from those numbers (errorbar containers, tick labels).
Exit 0 passed, 1 failed."""

import argparse
import math
import os
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.tools)
    import kreg_report as kr

    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    report = kr.load_report(args.report)
    records = report["records"]
    sizes = sorted({r["m"] for r in records if r["m"] == r["n"] == r["k"]})
    check(512 in sizes and 517 in sizes, f"the report should hold 512 and 517 (it has {sizes})")

    # Ticks: no two closer than MIN_TICK_RATIO, every size named once.
    ticks = kr.size_ticks(sizes)
    positions = [p for p, _ in ticks]
    for a, b in zip(positions, positions[1:]):
        check(b / a >= kr.MIN_TICK_RATIO, f"ticks {a} and {b} are too close to be read apart")
    named = [int(part) for _, label in ticks for part in label.split("/")]
    check(named == sizes, f"tick labels name {named}, the sizes are {sizes}")
    check(("512", "512/517") in [(str(p), label) for p, label in ticks], f"512 and 517 share one tick: {ticks}")
    check(kr.size_ticks([64, 128, 256]) == [(64, "64"), (128, "128"), (256, "256")], "sizes apart keep a tick each")

    # Roofline: one kind of AI for the whole chart. This report has kernels without a traffic model (cuBLAS),
    # so every point uses the minimum-DRAM intensity.
    ok = [r for r in records if kr.median_ms(r) is not None and r["m"] == r["n"] == r["k"] == 4096]
    check(any(kr.modelled_ai(r) is None for r in ok) and any(kr.modelled_ai(r) is not None for r in ok),
          "the report should mix rows with and without a traffic model")
    kind, ais = kr.consistent_ai(ok)
    check(kind == "min DRAM", f"a chart with a kernel lacking a model must use min DRAM AI, got {kind}")
    check(ais == [kr.min_dram_ai(r) for r in ok], "every point's AI must be the minimum-DRAM one")
    modelled = [r for r in ok if kr.modelled_ai(r) is not None]
    kind, ais = kr.consistent_ai(modelled)
    check(kind == "modelled" and ais == [kr.modelled_ai(r) for r in modelled], "all modelled: the modelled AI")
    check(kind in kr.AI_KINDS and "modelled" in kr.AI_KINDS[kind], "the axis label names the definition")

    # Error bars: the stored interval, turned into TFLOP/s and ms; the median lies inside it.
    with_interval = 0
    for r in records:
        interval = kr.median_interval_ms(r)
        if interval is None:
            continue
        with_interval += 1
        stats = r["stats"]
        check(interval == (stats["median_ci_low_ms"], stats["median_ci_high_ms"]), "the interval is the stored one")
        low, high = kr.value_interval(kr.achieved_tflops, r)
        tflops = kr.achieved_tflops(r)
        check(math.isclose(low, kr.flops(r) / (interval[1] * 1e-3) / 1e12) and low <= tflops * (1 + 1e-12) and
              tflops <= high * (1 + 1e-12), f"{r['kernel']} {r['m']}: TFLOP/s {tflops} outside [{low}, {high}]")
        check(kr.value_interval(kr.median_ms, r) == interval, "the time's error bar is the interval itself")
    check(with_interval > 100, f"only {with_interval} rows with an interval")
    gbps_row = {"kernel": "t", "dtype": "fp32", "m": 8, "n": 8, "k": 0, "operation": "transpose", "status": "ok",
                "gbps": 99.0, "stats": {"median_ms": 1.0, "median_ci_low_ms": 0.5, "median_ci_high_ms": 2.0}}
    low, high = kr.value_interval(kr.achieved_gbps, gbps_row)
    check(math.isclose(high / low, 4.0), f"a stored gbps must not pin the error bar: [{low}, {high}]")

    # With matplotlib: the charts carry those error bars and tick labels.
    try:
        import kreg_charts
    except ImportError as e:
        print(f"note: no matplotlib ({e}); the charts themselves are checked by the tools.results_* tests")
    else:
        import matplotlib.pyplot as plt
        drawn = {}
        real_savefig = plt.Figure.savefig

        def keep(fig, path, **kwargs):
            drawn[os.path.basename(path)] = fig
            return real_savefig(fig, path, **kwargs)

        plt.Figure.savefig = keep
        plt.close = lambda *a, **k: None
        res = kr_results_view(args.tools, args.report)
        with tempfile.TemporaryDirectory() as out:
            kreg_charts.render_all(res, out, with_roofline=True)
        for name in ("tflops_vs_size.png", "time_vs_size.png", "roofline.png"):
            fig = next((f for n, f in drawn.items() if n.endswith(name)), None)
            check(fig is not None, f"{name} not drawn")
            if fig is None:
                continue
            ax = fig.axes[0]
            check(any(type(c).__name__ == "ErrorbarContainer" for c in ax.containers), f"{name} has no error bars")
            if name != "roofline.png":
                labels = [t.get_text() for t in ax.get_xticklabels()]
                check("512/517" in labels and "517" not in labels, f"{name} tick labels {labels}")
            else:
                check(ax.get_xlabel() == kr.AI_KINDS["min DRAM"], f"roofline x label {ax.get_xlabel()!r}")

    for f in failures:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failure(s)")
    return 1 if failures else 0


def kr_results_view(tools, report):
    """The report as kreg_results.py hands it to the charts."""
    import kreg_report as kr
    import kreg_results
    loaded = kr.load_report(report)
    return kreg_results.Results(loaded, loaded.get("baseline"), report)


if __name__ == "__main__":
    sys.exit(main())

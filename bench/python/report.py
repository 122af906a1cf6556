# Copyright 2026 The shoal Authors.
"""The head-to-head's figures: QPS at a target recall along a sweep, the
tables printed at the end of a run, and the ann-benchmarks-style plot."""

import math

TARGETS = (0.90, 0.95, 0.99)
MODES = ("single", "batch")


def qps_at_recall(points, mode, target):
    """QPS at `target` recall along a sweep: None when no point reached it.

    Points are first reduced to their frontier (for each recall, the best
    QPS of any point with at least that recall), then the two frontier
    points around the target are joined by a straight line in (recall,
    log QPS), as ann-benchmarks draws them. A target below the sweep's lowest
    recall gets the best QPS of all (no extrapolation)."""
    pts = sorted((p[mode]["recall"], p[mode]["qps"]) for p in points if mode in p)
    if not pts or pts[-1][0] < target:
        return None
    best = [q for _, q in pts]
    for i in range(len(best) - 2, -1, -1):
        best[i] = max(best[i], best[i + 1])
    i = next(i for i, (r, _) in enumerate(pts) if r >= target)
    if i == 0 or pts[i][0] == target:
        return best[i]
    (r0, q0), (r1, q1) = (pts[i - 1][0], best[i - 1]), (pts[i][0], best[i])
    t = (target - r0) / (r1 - r0)
    return math.exp(math.log(q0) + t * (math.log(q1) - math.log(q0)))


def summarize(result):
    """Adds result["at_recall"][mode][target] = QPS or None."""
    result["at_recall"] = {
        mode: {f"{t:.2f}": qps_at_recall(result.get("points", []), mode, t) for t in TARGETS}
        for mode in MODES}


def add_ratios(results, reference="shoal"):
    """result["ratio"]: each figure divided by the reference peer's (None when
    either is missing). QPS > 1 is faster than shoal; build and memory > 1 is
    slower / larger than shoal."""
    ref = next((r for r in results if r["peer"] == reference and "error" not in r), None)
    for r in results:
        if "error" in r:
            continue
        ratio = {}
        for mode in MODES:
            for t, q in r["at_recall"][mode].items():
                base = ref["at_recall"][mode][t] if ref else None
                ratio[f"{mode}@{t}"] = q / base if q and base else None
        for key, get in (("build_seconds", lambda x: x.get("build_seconds")),
                         ("memory_mib", memory_mib)):
            mine, base = get(r), get(ref) if ref else None
            ratio[key] = mine / base if mine and base else None
        r["ratio"] = ratio


def memory_mib(result):
    """The memory figure of the table: the larger of the build's peak and
    the RSS after the sweep (both above the loaded data), plus the part of
    the files the index keeps on tmpfs that is not mapped into that RSS."""
    m = result.get("memory")
    if not m:
        return None
    peak = max(x for x in (m.get("build_peak_mib"), m.get("after_sweep_mib"),
                           m.get("index_mib")) if x is not None)
    unmapped = max(0.0, (m.get("files_mib") or 0) - (m.get("mapped_shmem_mib") or 0))
    return peak + unmapped


def _qps(q):
    if q is None:
        return "not reached"
    return f"{q / 1000:.1f}K" if q >= 1000 else f"{q:.0f}"


def _ratio(x):
    return f" ({x:.2f}x)" if x is not None else ""


def _table(header, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def format_tables(results):
    """The text report: QPS at the target recalls (single, then batch), build
    time and memory, and the peers that failed with their errors."""
    ok = [r for r in results if "error" not in r]
    out = []
    for mode in MODES:
        header = ["peer", "knob"] + [f"QPS@{t:.2f}" for t in TARGETS] + ["max recall"]
        rows = []
        for r in ok:
            cells = [r["peer"], r["knob"]]
            for t in TARGETS:
                key = f"{t:.2f}"
                cells.append(_qps(r["at_recall"][mode][key]) +
                             _ratio(r["ratio"].get(f"{mode}@{key}")))
            recalls = [p[mode]["recall"] for p in r["points"] if mode in p]
            cells.append(f"{max(recalls):.4f}" if recalls else "-")
            rows.append(cells)
        if rows and any(c[-1] != "-" for c in rows):
            title = ("single query: one query a call, one thread" if mode == "single" else
                     "batch: all queries in one call on --threads threads")
            out.append(f"{title} (ratio: QPS / shoal's)\n" + _table(header, rows))
    header = ["peer", "version", "build s", "memory MiB", "index MiB", "files MiB", "batch API"]
    rows = []
    for r in ok:
        m = r["memory"]
        rows.append([r["peer"], r.get("version", ""),
                     f"{r['build_seconds']:.1f}" + _ratio(r["ratio"]["build_seconds"]),
                     f"{memory_mib(r):.0f}" + _ratio(r["ratio"]["memory_mib"]),
                     f"{m['index_mib']:.0f}", f"{m.get('files_mib', 0):.0f}", r["batch_api"]])
    if rows:
        out.append("build and memory (ratio: / shoal's; memory = max(build peak, RSS after "
                   "the sweep) above the loaded data, + files on tmpfs not mapped into it)\n" + _table(header, rows))
    failed = [r for r in results if "error" in r]
    if failed:
        out.append("peers that did not run\n" + _table(
            ["peer", "stage", "error"],
            [[r["peer"], r.get("error_stage", "?"), r["error"]] for r in failed]))
    return "\n\n".join(out)


PLOT_TOP = 0.9995   # recall 1.0 is drawn here: a logit axis has no place for it


def plot(results, path, title):
    """Recall (x, logit scale: 0.9, 0.99, 0.999 equally apart) against QPS
    (log y), one line per peer; single and batch side by side. Imports
    matplotlib only here (Agg: no display needed)."""
    import warnings

    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    with warnings.catch_warnings():   # a pip matplotlib over Debian's warns about Axes3D
        warnings.simplefilter("ignore")
        import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(14, 6), sharex=True)
    lowest = max(0.5, min((p[m]["recall"] for r in results for p in r.get("points", [])
                           for m in MODES if m in p and p[m]["recall"] > 0), default=0.5))
    for ax, mode in zip(axes, MODES):
        for r in results:
            pts = sorted((min(p[mode]["recall"], PLOT_TOP), p[mode]["qps"])
                         for p in r.get("points", []) if mode in p and p[mode]["recall"] > 0)
            if not pts:
                continue
            style = {"linewidth": 2.5, "color": "black"} if r["peer"] == "shoal" else {}
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                    label=r["peer"], **style)
        ax.set_yscale("log")
        ax.set_xscale("logit")
        ticks = [t for t in (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999) if t >= lowest]
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([f"{t:g}" for t in ticks]))
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel(f"recall@10 (logit scale; 1.0 drawn at {PLOT_TOP})")
        ax.set_ylabel("queries per second")
        ax.set_title("single query, 1 thread" if mode == "single" else "batch, all threads")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_xlim(lowest, PLOT_TOP * 1.0002)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

#!/usr/bin/python3
# Copyright 2026 The shoal Authors.
"""Draws recall/QPS curves from comprehensive_bench --output JSON files.

ann-benchmarks style: x is recall@k, y is queries per second on a log scale,
one line per index (its Pareto frontier: the points no other point of the
same index beats on both recall and QPS; the points it hides are drawn
faintly). Two panels: one query at a time from one thread (shoal's Search
fans a call out over its shards), and every query in one batch on all
threads.

  comprehensive_bench --dataset medium --compare --output medium.json
  tools/plot_bench.py medium.json -o docs/medium-recall-qps.png

Several JSON files may be given (e.g. runs of different versions); each
index is then labelled with its file's name too. Needs python3-matplotlib.

With --churn, draws the churn phase instead (--phases churn): recall@k, QPS,
segments per shard and space amplification after every round, one line per
run (uniform and clustered deletes), the fresh build's recall dashed.

  comprehensive_bench --dataset medium --phases churn --output churn.json
  tools/plot_bench.py --churn churn.json -o docs/medium-churn.png

With --filter, draws the filter phase instead (--phases filter): QPS at the
cheapest point reaching recall@k 0.95 against selectivity (log-log), one
line per index over the uniform labels, the other scenarios (clusters,
range, two-label AND) as labelled markers at their measured selectivity;
an index missing from a selectivity never reached 0.95 there.

  comprehensive_bench --dataset medium --phases filter --output filter.json
  tools/plot_bench.py --filter filter.json -o docs/medium-filter-qps.png
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def load_curves(path, label_files):
    """[(label, knob, points)] of one report: shoal after BulkLoad, then the peers."""
    with open(path) as f:
        report = json.load(f)
    runs = []
    segments = report.get("segments") or []
    if segments and segments[0].get("points"):
        runs.append(segments[0])
    runs.extend(r for r in report.get("peers") or [] if r.get("points"))
    suffix = f" ({os.path.basename(path)})" if label_files else ""
    return report, [(r["index"] + suffix, r["knob"], r["points"]) for r in runs]


def frontier(points):
    """(recall, qps, knob) of the Pareto frontier, by ascending recall."""
    best, out = -1.0, []
    for recall, qps, knob in sorted(points, key=lambda p: (-p[0], -p[1])):
        if qps > best:
            out.append((recall, qps, knob))
            best = qps
    return out[::-1]


def draw(ax, curves, mode, min_recall, annotate):
    for i, (label, knob, points) in enumerate(curves):
        pts = [(p[f"{mode}_recall"], p[f"{mode}_qps"], p["knob"]) for p in points
               if p.get(f"{mode}_qps")]
        if not pts:
            continue
        color = f"C{i % 10}"
        front = frontier(pts)
        hidden = [p for p in pts if p not in front]
        ax.plot([p[0] for p in front], [p[1] for p in front], "-o", color=color,
                markersize=4, linewidth=1.5, label=f"{label} ({knob})")
        if hidden:
            ax.plot([p[0] for p in hidden], [p[1] for p in hidden], "o", color=color,
                    markersize=3, alpha=0.3)
        if annotate:
            for recall, qps, value in front:
                ax.annotate(str(value), (recall, qps), fontsize=6, color=color,
                            xytext=(2, 2), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_xlim(left=min_recall, right=1.0005)
    ax.grid(True, which="both", linewidth=0.3, alpha=0.6)


def draw_churn(paths, output):
    """Four panels over the rounds of every churn run in `paths`."""
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    panels = [("recall", "recall@k at the default list size"),
              ("qps", "queries per second, 1 thread"),
              ("segments_per_shard", "segments per shard"),
              ("space_amplification", "space amplification (segment bytes / live vector)")]
    cfg, drawn = None, 0
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        cfg = report["config"]
        suffix = f" ({os.path.basename(path)})" if len(paths) > 1 else ""
        for i, run in enumerate(report.get("churn") or []):
            color = f"C{(drawn + i) % 10}"
            rounds = [r["round"] for r in run["rounds"]]
            label = f"{run['deletes']} deletes{suffix}"
            for ax, (key, title) in zip(axes.flat, panels):
                ax.plot(rounds, [r[key] for r in run["rounds"]], "-o", color=color,
                        markersize=3, linewidth=1.2, label=label)
                ax.set_title(title, fontsize=10)
                ax.set_xlabel("round")
                ax.grid(True, linewidth=0.3, alpha=0.6)
            axes.flat[0].axhline(run["fresh_recall"], color=color, linestyle="--",
                                 linewidth=1, label=f"fresh build of the last live set{suffix}")
        drawn += len(report.get("churn") or [])
    if drawn == 0:
        sys.exit("no churn runs in the input (run with --phases churn)")
    axes.flat[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"churn on {cfg['dataset']}: {cfg['num_vectors']:,} x {cfg['dim']}, "
                 f"metric {cfg['metric']}", fontsize=11)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"wrote {output}")


def draw_filter(path, output):
    """QPS at recall 0.95 against selectivity, single and batch panels."""
    with open(path) as f:
        report = json.load(f)
    flt = report.get("filter")
    if not flt or not flt.get("scenarios"):
        sys.exit("no filter figures in the input (run with --phases filter)")
    cfg = report["config"]
    level = flt.get("recall_level", 0.95)
    names = []  # indexes in order of first appearance
    for sc in flt["scenarios"]:
        for run in sc["runs"]:
            if run["index"] not in names:
                names.append(run["index"])
    markers = {"cluster near": "^", "cluster far": "v", "range": "s", "and": "D"}
    fig, axes = plt.subplots(1, 2, figsize=(14, 6))
    threads = cfg.get("worker_threads") or cfg.get("hardware_threads")
    titles = {"single": "one query at a time, 1 thread",
              "batch": f"all queries in one batch, {threads} threads"}
    for ax, mode in zip(axes, ("single", "batch")):
        for i, name in enumerate(names):
            color = f"C{i % 10}"
            line, others = [], []
            for sc in flt["scenarios"]:
                run = next((r for r in sc["runs"] if r["index"] == name), None)
                best = run and run.get(f"best_{mode}")
                if not best:
                    continue
                point = (sc["selectivity"], best["qps"], sc)
                (line if sc["family"] == "uniform" else others).append(point)
            line.sort(key=lambda p: p[0])
            ax.plot([p[0] for p in line], [p[1] for p in line], "-o", color=color,
                    markersize=4, linewidth=1.5, label=name)
            for sel, qps, sc in others:
                key = sc["name"] if sc["family"] == "cluster" else sc["family"]
                ax.plot([sel], [qps], markers.get(key, "x"), color=color, markersize=6,
                        markerfacecolor="none")
                if i == 0:
                    ax.annotate(sc["name"], (sel, qps), fontsize=7, color=color,
                                xytext=(3, 3), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(titles[mode], fontsize=10)
        ax.set_xlabel("selectivity (share of vectors matching the filter, log scale)")
        ax.set_ylabel(f"queries per second at recall@{cfg.get('k', 10)} >= {level} (log scale)")
        ax.grid(True, which="both", linewidth=0.3, alpha=0.6)
    axes[0].legend(fontsize=8, loc="best")
    fig.suptitle(f"filtered search on {cfg['dataset']}: {cfg['num_vectors']:,} x {cfg['dim']}, "
                 f"{cfg['num_queries']} queries, metric {cfg['metric']}; lines: uniform labels; "
                 "open markers: cluster near (^) / far (v), range (s), AND (D)", fontsize=10)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"wrote {output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="+", help="comprehensive_bench --output files")
    parser.add_argument("-o", "--output", default="recall-qps.png", help="PNG to write")
    parser.add_argument("--min-recall", type=float, default=0.8,
                        help="left end of the recall axis (default 0.8)")
    parser.add_argument("--no-annotate", action="store_true",
                        help="do not label points with their knob value")
    parser.add_argument("--churn", action="store_true",
                        help="draw the churn phase's rounds instead of recall/QPS curves")
    parser.add_argument("--filter", action="store_true",
                        help="draw the filter phase's QPS against selectivity (one JSON file)")
    args = parser.parse_args()
    if args.churn:
        draw_churn(args.json, args.output)
        return
    if args.filter:
        draw_filter(args.json[0], args.output)
        return

    curves, report = [], None
    for path in args.json:
        report, c = load_curves(path, label_files=len(args.json) > 1)
        curves.extend(c)
    if not curves:
        sys.exit("no recall/QPS curves in the input (run with --phases ...,sweep or --compare)")
    cfg = report["config"]
    k = cfg.get("k", 10)
    threads = cfg.get("worker_threads") or cfg.get("hardware_threads")
    fig, axes = plt.subplots(1, 2, figsize=(14, 6), sharey=False)
    titles = {"single": "one query at a time, 1 thread",
              "batch": f"all queries in one batch, {threads} threads"}
    for ax, mode in zip(axes, ("single", "batch")):
        draw(ax, curves, mode, args.min_recall, not args.no_annotate)
        ax.set_title(titles[mode], fontsize=10)
        ax.set_xlabel(f"recall@{k}")
        ax.set_ylabel("queries per second (log scale)")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"{cfg['dataset']}: {cfg['num_vectors']:,} x {cfg['dim']}, "
                 f"{cfg['num_queries']} queries, metric {cfg['metric']} "
                 f"({cfg.get('source', '')}); up and to the right is better", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# Copyright 2026 The shoal Authors.
"""shoal against the ANN libraries that install here, from Python, on the
same vectors, the same truth and the same threads, in one run.

Each peer (peers/) runs in a process of its own (child.py): import, build
over all base vectors, then a sweep of its search knob measuring recall@k
against the exact truth and QPS, single query (one a call, one thread) and
batch (all queries in one call on --threads threads). Then a table of QPS at
recall 0.90/0.95/0.99 (interpolated along each sweep), build time and
memory, each with its ratio to shoal's; --output writes it all as JSON,
--plot draws recall against QPS as ann-benchmarks does. A peer that does not
import, build or search is listed with its error, never left out.

    # a data set exported by the C++ benchmark (base, queries, exact truth):
    build/bench/comprehensive_bench --dataset embed --export_dir /dev/shm/embed-export
    head_to_head.py --data /dev/shm/embed-export --output embed.json --plot embed.png
    # your own vectors (.fbin, .npy or .fvecs); the truth is computed and cached:
    head_to_head.py --base docs.npy --query queries.npy --metric cosine
"""

import argparse
import collections
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import datasets  # noqa: E402
import peers  # noqa: E402
import report  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_argument_group("data (--data, or --base and --query)")
    src.add_argument("--data", help="a directory of comprehensive_bench --export_dir")
    src.add_argument("--base", help="base vectors: .fbin, .npy or .fvecs (row i is id i)")
    src.add_argument("--query", help="query vectors, same formats")
    src.add_argument("--truth", help="their exact neighbours (.ibin, nearest first); "
                     "default: computed with numpy and cached next to --query")
    src.add_argument("--metric", choices=datasets.METRICS,
                     help="default: dataset.json's with --data, else l2")
    src.add_argument("--cosine", choices=("native", "unit"), default="native",
                     help="with --metric cosine: 'native' uses each peer's own cosine (unit "
                     "vectors and ip for a peer without one); 'unit' hands every peer unit "
                     "vectors and its l2 metric (same neighbours)")
    src.add_argument("--max_base", type=int, help="use only the first N base rows "
                     "(the truth is then recomputed)")
    src.add_argument("--max_queries", type=int, help="use only the first N queries")
    run = p.add_argument_group("run")
    run.add_argument("--peers", help="comma-separated subset, in table order; "
                     f"known: {', '.join(peers.PEERS)}")
    run.add_argument("--threads", type=int, default=os.cpu_count(),
                     help="threads of every build and batch search (default: all cores)")
    run.add_argument("--k", type=int, default=10, help="neighbours per query (recall@k)")
    run.add_argument("--quick", action="store_true",
                     help="every other knob value, shorter timing (a smoke test)")
    run.add_argument("--single_queries", type=int,
                     help="single-query loop over the first N queries (default: all; "
                     "--quick: 500)")
    run.add_argument("--min_seconds", type=float,
                     help="repeat a batch until it took this long (default 1, --quick 0.2)")
    run.add_argument("--stop_recall", type=float, default=0.999,
                     help="end a peer's sweep once both recalls reach this")
    run.add_argument("--batch_only", action="store_true", help="skip the single-query loops")
    run.add_argument("--timeout", type=float, default=7200, help="seconds per peer")
    run.add_argument("--workdir", default="/dev/shm",
                     help="where a scratch directory (shoal-h2h-*) is made for indexes that "
                     "live in files; removed at the end (default: /dev/shm, tmpfs)")
    run.add_argument("--verbose", action="store_true", help="show the libraries' own output")
    out = p.add_argument_group("output")
    out.add_argument("--output", help="write every figure as JSON here")
    out.add_argument("--plot", help="write the recall/QPS plot here (.png)")
    args = p.parse_args(argv)
    if bool(args.data) == bool(args.base or args.query):
        p.error("give --data DIR, or --base FILE and --query FILE")
    if args.base and not args.query or args.query and not args.base:
        p.error("--base and --query go together")
    if args.data and args.truth:
        p.error("--truth is for --base/--query; an export directory has its own")
    args.peer_names = _peer_names(p, args.peers)
    if args.threads < 1:
        p.error("--threads must be at least 1")
    if args.single_queries is None:
        args.single_queries = 500 if args.quick else 1 << 62
    if args.min_seconds is None:
        args.min_seconds = 0.2 if args.quick else 1.0
    return args


def _peer_names(p, text):
    if not text:
        return list(peers.PEERS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in peers.PEERS]
    if unknown:
        p.error(f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(peers.PEERS)}")
    return [n for n in peers.PEERS if n in names]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- data ----

def prepare_data(args):
    """Reads base, queries and truth, checks they agree; returns a dict with
    the base path and rows to read, the queries and truth (as arrays), and a
    description for the report."""
    info = {}
    if args.data:
        base_path, query_path, truth_path, info = datasets.load_export_dir(args.data)
        name = info.get("name", os.path.basename(os.path.normpath(args.data)))
        metric = args.metric or info.get("metric", "l2")
        if args.metric and info.get("metric") and args.metric != info["metric"]:
            truth_path = None   # the export's truth is for its own metric
    else:
        base_path, query_path, truth_path = args.base, args.query, args.truth
        name = os.path.basename(base_path)
        metric = args.metric or "l2"
    base, base_total = datasets.read_vectors(base_path, args.max_base)
    queries, query_total = datasets.read_vectors(query_path, args.max_queries)
    if base.shape[1] != queries.shape[1]:
        raise datasets.DataError(f"{base_path} has dim {base.shape[1]}, "
                                 f"{query_path} dim {queries.shape[1]}")
    for what, got, total in (("base", base, base_total), ("query", queries, query_total)):
        if got.shape[0] < total:
            log(f"data: using the first {got.shape[0]} of {total} {what} rows (as asked)")
    if args.k > base.shape[0]:
        raise datasets.DataError(f"--k {args.k} is more than the {base.shape[0]} base rows")
    if truth_path and base.shape[0] == base_total:
        truth = datasets.read_truth(truth_path)
        if truth.shape[0] != query_total or truth.shape[1] < args.k:
            raise datasets.DataError(f"{truth_path}: {truth.shape[0]} x {truth.shape[1]} ids, "
                                     f"want {query_total} x >= {args.k}")
        truth = truth[:queries.shape[0], :args.k]
        if truth.min() < 0 or truth.max() >= base.shape[0]:
            raise datasets.DataError(f"{truth_path}: holds ids outside 0..{base.shape[0] - 1} "
                                     f"(from {truth.min()} to {truth.max()}): the truth of "
                                     "another base?")
        datasets.check_truth(base, queries, truth, metric, args.k)
        truth_source = truth_path
    else:
        if truth_path:
            log("data: the given truth is for other base rows or metric; recomputing")
        truth, truth_source = datasets.cached_truth(base_path, base, query_path, queries,
                                                    metric, args.k, log)
    return {"base": base_path, "base_rows": base.shape[0], "queries": queries, "truth": truth,
            "describe": {"name": name, "base": os.path.abspath(base_path),
                         "query": os.path.abspath(query_path), "truth": truth_source,
                         "metric": metric, "num_vectors": base.shape[0],
                         "num_queries": queries.shape[0], "dim": base.shape[1],
                         "export_info": info}}


# ---- the peers, one child process each ----

def run_peer(name, args, data):
    """Runs child.py for one peer; its result dict, with "error" when it did
    not finish (including a crash or a timeout, with the output's tail)."""
    workdir = os.path.join(args.workdir, name)
    os.makedirs(workdir, exist_ok=True)
    spec = {"peer": name, "base": data["base"], "base_rows": data["base_rows"],
            "queries": os.path.join(args.workdir, "queries.npy"),
            "truth": os.path.join(args.workdir, "truth.npy"),
            "metric": data["describe"]["metric"], "k": args.k, "threads": args.threads,
            "quick": args.quick, "single_queries": args.single_queries,
            "min_seconds": args.min_seconds, "stop_recall": args.stop_recall,
            "batch_only": args.batch_only, "cosine": args.cosine, "workdir": workdir}
    spec_path, result_path = (os.path.join(workdir, f) for f in ("spec.json", "result.json"))
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(args.threads)
    tail = collections.deque(maxlen=20)
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, os.path.join(HERE, "child.py"), spec_path,
                              result_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", env=env)
    watchdog = threading.Timer(args.timeout, child.kill)
    watchdog.start()
    for line in child.stdout:
        tail.append(line.rstrip())
        if args.verbose or line.startswith(f"[{name}]"):
            log(line.rstrip())
    rc = child.wait()
    timed_out = not watchdog.is_alive() and rc < 0
    watchdog.cancel()
    result = {"peer": name}
    if os.path.isfile(result_path):
        with open(result_path) as f:
            result = json.load(f)
    elif timed_out:
        result.update(error=f"timed out after {args.timeout:.0f} s (killed)", error_stage="?")
    else:
        how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        result.update(error=f"child process {how}: " + " | ".join(list(tail)[-3:]),
                      error_stage="crash")
    if "error" in result:
        result["output_tail"] = list(tail)
    shutil.rmtree(workdir, ignore_errors=True)
    result["wall_seconds"] = time.monotonic() - start
    return result


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "platform": platform.platform()}


def main(argv=None):
    args = parse_args(argv)
    try:
        data = prepare_data(args)
    except datasets.DataError as e:
        sys.exit(f"head_to_head: {e}")
    d = data["describe"]
    log(f"data: {d['name']}, {d['num_vectors']} x {d['dim']}, {d['num_queries']} queries, "
        f"{d['metric']}; {args.threads} threads; peers: {', '.join(args.peer_names)}")
    os.makedirs(args.workdir, exist_ok=True)
    args.workdir = tempfile.mkdtemp(prefix="shoal-h2h-", dir=args.workdir)
    try:
        np.save(os.path.join(args.workdir, "queries.npy"), data["queries"])
        np.save(os.path.join(args.workdir, "truth.npy"), data["truth"])
        results = []
        for name in args.peer_names:
            log(f"--- {name}")
            results.append(run_peer(name, args, data))
    finally:
        shutil.rmtree(args.workdir, ignore_errors=True)
    for r in results:
        if "error" not in r:
            report.summarize(r)
    report.add_ratios(results)
    print(f"\n{d['name']}: {d['num_vectors']} x {d['dim']}, {d['num_queries']} queries, "
          f"{d['metric']}, recall@{args.k}, {args.threads} threads\n")
    print(report.format_tables(results))
    title = (f"{d['name']} ({d['num_vectors']} x {d['dim']}, {d['metric']}), "
             f"recall@{args.k}, {args.threads} threads")
    if args.output:
        with open(args.output, "w") as f:
            json.dump({"dataset": d, "k": args.k, "threads": args.threads,
                       "cosine": args.cosine if d["metric"] == "cosine" else None,
                       "quick": args.quick, "single_queries": min(args.single_queries,
                                                                   d["num_queries"]),
                       "machine": machine(),
                       "date": datetime.datetime.now().isoformat(timespec="seconds"),
                       "results": results}, f, indent=1)
        log(f"wrote {args.output}")
    if args.plot:
        report.plot(results, args.plot, title)
        log(f"wrote {args.plot}")


if __name__ == "__main__":
    main()

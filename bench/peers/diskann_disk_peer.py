#!/usr/bin/env python3
# Copyright 2026 The shoal Authors.
"""DiskANN's own disk index (diskannpy, from PyPI) as a peer of shoal's disk
mode (issue 20), on a data set written by `comprehensive_bench --export_dir`.

Builds the index once (timed, in a child process so that its memory does not
count as the searcher's), then for every (cache, W, L) searches all queries
one at a time on one thread, and with batch_search on each --threads count,
and reports recall@k against groundtruth.ibin, QPS, latency and the mean
number of 4 KiB reads a query makes.

Reads are counted by the kernel, not by DiskANN: the `read_bytes` of
/proc/self/io (bytes this process had fetched from the block device) before
and after each search loop, divided by 4096 and by the queries searched.
DiskANN opens its disk index with O_DIRECT and reads whole 4 KiB sectors
(libaio), so the page cache cannot hide a read and every pass over the
queries reads as much as the first; the script compares the first pass with
the mean of all passes and warns when they differ (a buffered file system,
or a read outside the search). Run it on a real disk: tmpfs (/dev/shm) refuses
O_DIRECT.

Only numpy and diskannpy are needed; scripts/diskann_peer.sh sets them up.
"""

import argparse
import contextlib
import importlib.metadata
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

SECTOR = 4096
PREFIX = "ann"
# DiskANN's get_memory_budget(): a search budget above 1.25 GB loses 0.25 GB
# to the node cache before the PQ size is derived from it.
CACHE_SLACK_GB, CACHE_THRESHOLD_GB = 0.25, 1.0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True,
                   help="directory of comprehensive_bench --export_dir (base.fbin, "
                        "query.fbin, groundtruth.ibin, dataset.json)")
    p.add_argument("--index_dir", required=True,
                   help="where the disk index lives; must be on a real disk (O_DIRECT)")
    p.add_argument("--metric", choices=["l2", "cosine"], default=None,
                   help="default: dataset.json's. cosine: DiskANN's disk index has no "
                        "cosine, so base and queries are normalized and searched with l2 "
                        "(same order)")
    p.add_argument("--R", type=int, default=64, help="graph degree (DiskANN's R)")
    p.add_argument("--L_build", type=int, default=100, help="build complexity (L)")
    p.add_argument("--pq_bytes", "--pq_bytes_budget", type=int, default=0,
                   help="PQ bytes per vector held in memory (0 = dim / 4: 32 for 128-d); "
                        "search_memory_maximum is derived from it")
    p.add_argument("--build_memory_gb", type=float, default=8.0,
                   help="build_memory_maximum (enough for a one-shot build, no partitions)")
    p.add_argument("--build_threads", type=int, default=os.cpu_count())
    p.add_argument("--rebuild", action="store_true", help="build even if the index exists")
    p.add_argument("--L", default="10,12,15,20,25,30,40,50,75,100,150,200",
                   help="search complexities (list sizes), comma-separated")
    p.add_argument("--W", default="1,2,4", help="beam widths, comma-separated")
    p.add_argument("--threads", default=str(os.cpu_count()),
                   help="thread counts of batch_search, comma-separated ('' = none)")
    p.add_argument("--cache_nodes", default="0,10000",
                   help="num_nodes_to_cache values (cache_mechanism 1: nodes most "
                        "visited by DiskANN's sample queries), comma-separated")
    p.add_argument("--k", type=int, default=10, help="neighbours per query (recall@k)")
    p.add_argument("--min_seconds", type=float, default=1.0,
                   help="repeat passes over the queries until a point took this long")
    p.add_argument("--output", default="", help="also write the figures to this JSON file")
    p.add_argument("--build_only", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


# ---- data ----

def read_bin(path, dtype):
    """A .fbin/.ibin file: n:u32 dim:u32 then n*dim elements."""
    n, d = np.fromfile(path, dtype=np.uint32, count=2)
    data = np.fromfile(path, dtype=dtype, offset=8)
    if data.size != int(n) * int(d):
        sys.exit(f"{path}: holds {data.size} values, header says {n} x {d}")
    return data.reshape(int(n), int(d))


def normalized(x):
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1)).astype(np.float32)


def check_truth(base_path, queries, truth, metric, k, count=20):
    """Recomputes the exact top-k of the first `count` queries: guards against
    an export that does not match its files."""
    base = np.memmap(base_path, dtype=np.float32, mode="r", offset=8).reshape(-1, queries.shape[1])
    q = queries[:count].astype(np.float64)
    if metric == "cosine":
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-30)
    dist = np.empty((q.shape[0], base.shape[0]), dtype=np.float64)
    for start in range(0, base.shape[0], 20000):
        b = np.asarray(base[start:start + 20000], dtype=np.float64)
        if metric == "cosine":
            b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-30)
        dist[:, start:start + b.shape[0]] = (
            (q * q).sum(1)[:, None] - 2 * q @ b.T + (b * b).sum(1)[None, :])
    # A truth id is wrong when it is farther than the exact k-th nearest (ties
    # and the last bits of rounding may order equal distances either way).
    bad = 0
    for i in range(q.shape[0]):
        kth = np.partition(dist[i], k - 1)[k - 1]
        bad += int((dist[i][truth[i, :k].astype(np.int64)] > kth + 1e-9 * abs(kth)).sum())
    if bad > 0:
        sys.exit(f"groundtruth.ibin disagrees with a numpy scan on {bad} of "
                 f"{count * k} ids: wrong export?")


# ---- build ----

def search_memory_gb(pq_bytes, n):
    """The search_memory_maximum for which DiskANN picks pq_bytes chunks:
    floor(budget_bytes / n) == pq_bytes, with half a byte of margin."""
    gb = (pq_bytes + 0.5) * n / 2**30
    return gb + CACHE_SLACK_GB if gb > CACHE_THRESHOLD_GB else gb


def build_params(args, n, dim, metric):
    pq_bytes = args.pq_bytes or max(1, dim // 4)
    return {"R": args.R, "L_build": args.L_build, "metric": metric, "num_vectors": n,
            "dim": dim, "pq_bytes_wanted": pq_bytes,
            "search_memory_maximum_gb": search_memory_gb(pq_bytes, n),
            "build_memory_maximum_gb": args.build_memory_gb, "pq_disk_bytes": 0,
            "build_threads": args.build_threads}


def index_files(index_dir):
    return {f: os.path.getsize(os.path.join(index_dir, f))
            for f in sorted(os.listdir(index_dir)) if f.startswith(PREFIX + "_")}


def build_child(args):
    """Runs in the child: builds the index and writes build_info.json."""
    import diskannpy
    info = json.load(open(os.path.join(args.index_dir, "build_params.json")))
    data = os.path.join(args.data, "base.fbin")
    if info["metric"] == "cosine":  # searched as l2 over unit vectors
        data = os.path.join(args.index_dir, "base_normalized.fbin")
        diskannpy.vectors_to_file(data, normalized(read_bin(
            os.path.join(args.data, "base.fbin"), np.float32)))
    start = time.perf_counter()
    diskannpy.build_disk_index(
        data=data, distance_metric="l2", index_directory=args.index_dir,
        complexity=info["L_build"], graph_degree=info["R"],
        search_memory_maximum=info["search_memory_maximum_gb"],
        build_memory_maximum=info["build_memory_maximum_gb"],
        num_threads=info["build_threads"], pq_disk_bytes=0,
        vector_dtype=np.float32, index_prefix=PREFIX)
    info["build_seconds"] = time.perf_counter() - start
    info["build_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(os.path.join(args.index_dir, "build_info.json"), "w") as f:
        json.dump(info, f, indent=2)


def describe_index(index_dir, dim, R):
    """What the build made: PQ bytes per vector (the pq_compressed.bin header),
    the node layout of the disk index, the file sizes."""
    n, chunks = np.fromfile(os.path.join(index_dir, PREFIX + "_pq_compressed.bin"),
                            dtype=np.uint32, count=2)
    node_bytes = dim * 4 + 4 + 4 * R  # full vector, degree, R neighbour ids
    return {"pq_bytes": int(chunks), "pq_rows": int(n), "node_bytes": node_bytes,
            "nodes_per_sector": SECTOR // node_bytes, "files": index_files(index_dir)}


def fs_type(path):
    """The type of the file system holding `path` (longest mount point of
    /proc/mounts that is a prefix of it)."""
    path, best = os.path.realpath(path), ("", "?")
    with open("/proc/mounts") as f:
        for line in f:
            _, mount, kind = line.split()[:3]
            inside = path == mount or path.startswith(mount.rstrip("/") + "/")
            if inside and len(mount) >= len(best[0]):
                best = (mount, kind)
    return best[1]


def ensure_index(args, params):
    os.makedirs(args.index_dir, exist_ok=True)
    kind = fs_type(args.index_dir)
    if kind in ("tmpfs", "ramfs", "overlay", "?"):
        sys.exit(f"{args.index_dir} is on {kind}: DiskANN needs O_DIRECT on a real disk, "
                 "and reads from memory would not count as disk reads")
    info_path = os.path.join(args.index_dir, "build_info.json")
    if os.path.exists(info_path) and not args.rebuild:
        info = json.load(open(info_path))
        same = {k: info.get(k) for k in params} == params
        if not same:
            sys.exit(f"{args.index_dir} holds an index built with other parameters "
                     f"({info_path}); pass --rebuild")
        print(f"[build]  reusing {args.index_dir} (built in {info['build_seconds']:.1f} s)")
        return info
    for f in index_files(args.index_dir):
        os.remove(os.path.join(args.index_dir, f))
    with open(os.path.join(args.index_dir, "build_params.json"), "w") as f:
        json.dump(params, f, indent=2)
    log = os.path.join(args.index_dir, "build.log")
    print(f"[build]  R={params['R']} L={params['L_build']} "
          f"search_memory_maximum={params['search_memory_maximum_gb']:.6f} GB "
          f"(for {params['pq_bytes_wanted']} PQ bytes/vector), "
          f"{params['build_threads']} threads; log in {log}", flush=True)
    with open(log, "w") as out:
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--build_only"]
                             + sys.argv[1:], stdout=out, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"build failed (exit {rc}); see {log}")
    info = json.load(open(info_path))
    print(f"[build]  {info['build_seconds']:.1f} s, peak RSS "
          f"{info['build_peak_rss_mib']:.0f} MiB", flush=True)
    return info


# ---- search ----

def read_bytes():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    raise RuntimeError("no read_bytes in /proc/self/io")


def rss_mib(field="VmRSS"):
    """VmRSS (now) or VmHWM (peak since start or reset_peak_rss()), in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss():
    """Restarts VmHWM from the current RSS (Linux >= 4.0), so that the peak
    reported is the searcher's, not that of the set-up before it."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


@contextlib.contextmanager
def output_to(path):
    """Sends the process's stdout and stderr (DiskANN's C++ logging) to `path`."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "a") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def recall(ids, truth, k):
    hits = sum(len(set(ids[i, :k].tolist()) & set(truth[i, :k].tolist()))
               for i in range(truth.shape[0]))
    return hits / (truth.shape[0] * k)


def passes(run_once, min_seconds):
    """Calls run_once() (one pass over the queries) until min_seconds have
    passed; returns (seconds, passes, bytes read by the first pass, by all)."""
    reads, seconds, first, n = 0, 0.0, 0, 0
    while n == 0 or seconds < min_seconds:
        r0 = read_bytes()
        t0 = time.perf_counter()
        run_once()
        seconds += time.perf_counter() - t0
        r = read_bytes() - r0
        first = r if n == 0 else first
        reads += r
        n += 1
    return seconds, n, first, reads


def single_thread(index, queries, truth, k, L, W, min_seconds):
    nq = queries.shape[0]
    ids = np.zeros((nq, k), dtype=np.int64)
    lat = []

    def once():
        for i in range(nq):
            t0 = time.perf_counter_ns()
            got = index.search(queries[i], k, L, W)
            lat.append(time.perf_counter_ns() - t0)
            ids[i] = got.identifiers[:k]

    seconds, n, first, reads = passes(once, min_seconds)
    lat_us = np.array(lat) / 1e3
    return {"mode": "single", "threads": 1, "L": L, "W": W, "passes": n,
            "recall": recall(ids, truth, k), "qps": n * nq / seconds,
            "mean_us": float(lat_us.mean()), "p95_us": float(np.percentile(lat_us, 95)),
            "p999_us": float(np.percentile(lat_us, 99.9)),
            "reads_per_query": reads / SECTOR / (n * nq),
            "reads_per_query_first_pass": first / SECTOR / nq}


def batch(index, queries, truth, k, L, W, threads, min_seconds):
    nq = queries.shape[0]
    out = {}

    def once():
        out["ids"] = index.batch_search(queries, k, L, threads, W).identifiers

    seconds, n, first, reads = passes(once, min_seconds)
    return {"mode": "batch", "threads": threads, "L": L, "W": W, "passes": n,
            "recall": recall(out["ids"], truth, k), "qps": n * nq / seconds,
            "reads_per_query": reads / SECTOR / (n * nq),
            "reads_per_query_first_pass": first / SECTOR / nq}


def search_all(args, queries, truth, log):
    import diskannpy
    threads = ints(args.threads)
    rows = []
    for cache in ints(args.cache_nodes):
        t0 = time.perf_counter()
        with output_to(log):
            # cache_mechanism 0: no cache, and no warm-up pass of DiskANN's
            # ~10% sample queries to choose one (a minute on 1M vectors).
            # At least two thread contexts: with one, diskannpy 0.7.0 never
            # returned from loading the index ("Loading centroid data from
            # medoids", a timed futex wait in a loop; 2026-11-27, --threads '').
            index = diskannpy.StaticDiskIndex(args.index_dir, max(threads + [2]), cache,
                                              cache_mechanism=1 if cache > 0 else 0,
                                              index_prefix=PREFIX)
        print(f"[load]   cache {cache} nodes: {time.perf_counter() - t0:.1f} s, "
              f"RSS {rss_mib():.0f} MiB", flush=True)
        for W in ints(args.W):
            for L in ints(args.L):
                if L < args.k:
                    continue
                warm = min(100, queries.shape[0])
                index.batch_search(queries[:warm], args.k, L, 1, W)
                point = [single_thread(index, queries, truth, args.k, L, W, args.min_seconds)]
                point += [batch(index, queries, truth, args.k, L, W, t, args.min_seconds)
                          for t in threads]
                for row in point:
                    row.update(cache_nodes=cache, rss_mib=rss_mib())
                    print_row(row)
                    warn_if_cached(row)
                rows += point
        with output_to(log):  # its destructor talks too
            del index
    return rows


def warn_if_cached(row):
    first, mean = row["reads_per_query_first_pass"], row["reads_per_query"]
    if row["passes"] > 1 and abs(first - mean) > 0.1 * max(first, 1e-9) + 0.05:
        print(f"  WARNING: first pass read {first:.2f}/query, all passes {mean:.2f}/query: "
              "reads are being cached or shared; the read counts are not trustworthy")


# ---- report ----

HEADER = (f"{'cache':>6} {'W':>2} {'L':>4} {'mode':>6} {'thr':>3} {'recall':>7} "
          f"{'reads/q':>8} {'QPS':>9} {'mean us':>8} {'p95 us':>8} {'p99.9 us':>9}")


def print_row(r):
    lat = (f"{r['mean_us']:8.0f} {r['p95_us']:8.0f} {r['p999_us']:9.0f}"
           if r["mode"] == "single" else "")
    print(f"{r['cache_nodes']:6d} {r['W']:2d} {r['L']:4d} {r['mode']:>6} {r['threads']:3d} "
          f"{r['recall']:7.4f} {r['reads_per_query']:8.2f} {r['qps']:9.0f} {lat}", flush=True)


def at_recall(rows, target):
    """Per (cache, W, mode, threads): the smallest-L point with recall >= target."""
    best = {}
    for r in sorted(rows, key=lambda r: r["L"]):
        key = (r["cache_nodes"], r["W"], r["mode"], r["threads"])
        if r["recall"] >= target and key not in best:
            best[key] = r
    return [best[key] for key in sorted(best)]


def main():
    args = parse_args()
    desc = json.load(open(os.path.join(args.data, "dataset.json")))
    metric = args.metric or desc["metric"]
    if metric not in ("l2", "cosine"):
        sys.exit(f"metric {metric}: the peer runs l2 or cosine only")
    params = build_params(args, desc["num_vectors"], desc["dim"], metric)
    if args.build_only:
        build_child(args)
        return
    queries = read_bin(os.path.join(args.data, "query.fbin"), np.float32)
    truth = read_bin(os.path.join(args.data, "groundtruth.ibin"), np.uint32)
    if truth.shape[0] != queries.shape[0] or truth.shape[1] < args.k:
        sys.exit(f"groundtruth.ibin is {truth.shape}, want {queries.shape[0]} x >= {args.k}")
    check_truth(os.path.join(args.data, "base.fbin"), queries, truth, metric, args.k)
    if metric == "cosine":
        queries = normalized(queries)
    print(f"[data]   {desc['name']} ({desc['source']}): {desc['num_vectors']} x {desc['dim']}, "
          f"{queries.shape[0]} queries, {metric}; truth checked on 20 queries", flush=True)
    info = ensure_index(args, params)
    reset_peak_rss()
    layout = describe_index(args.index_dir, desc["dim"], args.R)
    print(f"[index]  PQ {layout['pq_bytes']} bytes/vector in memory "
          f"(search_memory_maximum {params['search_memory_maximum_gb']:.6f} GB); disk node "
          f"{layout['node_bytes']} B, {layout['nodes_per_sector']} per 4 KiB sector; "
          f"disk.index {layout['files'].get(PREFIX + '_disk.index', 0) / 2**20:.1f} MiB; "
          f"on {fs_type(args.index_dir)}", flush=True)
    print(HEADER)
    rows = search_all(args, queries, truth, os.path.join(args.index_dir, "search.log"))
    peak = rss_mib("VmHWM")
    print(f"\npeak RSS: search {peak:.0f} MiB (queries, truth, index loads and searches; "
          f"VmHWM), build {info['build_peak_rss_mib']:.0f} MiB (child process)")
    print("\nsmallest L reaching recall@{} >= 0.95:".format(args.k))
    print(HEADER)
    for r in at_recall(rows, 0.95):
        print_row(r)
    if args.output:
        report = {"dataset": desc, "metric": metric, "build": info, "index": layout,
                  "search_peak_rss_mib": peak, "k": args.k, "rows": rows,
                  "diskannpy": importlib.metadata.version("diskannpy"),
                  "read_counting": "read_bytes of /proc/self/io around each loop / 4096 "
                                   "/ queries; DiskANN reads its disk index with O_DIRECT"}
        with open(args.output + ".tmp", "w") as f:
            json.dump(report, f, indent=2)
        os.replace(args.output + ".tmp", args.output)
        print(f"[output] wrote {args.output}")


if __name__ == "__main__":
    main()

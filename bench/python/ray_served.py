#!/usr/bin/env python3
"""A collection served by 2 Ray actors against one database, in turns.

Issue 47's goal: served by 2 actors, search_batch within 10% of one
database's QPS on the same machine, at the same recall. On 2 cores:

  one     one database in this process: 2 shards, 2 worker threads;
  parts   the same records split as shoal.ray splits them (splitmix64) into
          2 databases of 1 shard and 1 worker thread each, in this process,
          searched by 2 Python threads and merged (shoal.ray's merge);
  served  those 2 databases' files (checkpoints: hard links, the same
          graphs) served by shoal.ray from 2 actors of 1 CPU.

served / one is the goal; parts / one is what splitting the records alone
does; served / parts is what Ray's scatter-gather costs on the same graphs.
For --rounds rounds, at each list size, search_batch of the queries (tiled
--repeat times, so that a call is long enough to time) on each, the order
rotated every round. Prints recall@k, median QPS and the median of the
rounds' ratios; then the per-call overhead: one query a call (search and
search_batch) on one and served, in turns, median latency.

    python bench/python/ray_served.py --data /dev/shm/embed-export
    python bench/python/ray_served.py --synthetic 200000x128

--data: a directory holding base.fbin, query.fbin, groundtruth.ibin and
dataset.json (the C++ bench's --export_dir); --synthetic NxD: clustered
Gaussian vectors (seeded, L2), exact truth by numpy. Run it alone: wrap it
in `flock /tmp/shoal-bench.lock` on a shared machine.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time

import numpy as np
import ray

import shoal
import shoal.ray as sray
from shoal.ray._layout import part_dir, write_parts
from shoal.ray._merge import merge_batch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import datasets  # noqa: E402


def load(args):
    if args.synthetic:
        n, dim = (int(v) for v in args.synthetic.lower().split("x"))
        rng = np.random.default_rng(11)
        centres = rng.standard_normal((200, dim)).astype(np.float32) * 3
        base = centres[rng.integers(0, 200, n)] + rng.standard_normal((n, dim)).astype(np.float32)
        queries = (centres[rng.integers(0, 200, 1000)]
                   + rng.standard_normal((1000, dim)).astype(np.float32))
        truth = datasets.exact_knn(base, queries, "l2", args.k)
        return base, queries, truth, "l2", f"synthetic {n} x {dim}, L2"
    with open(os.path.join(args.data, "dataset.json")) as f:
        meta = json.load(f)
    base, _ = datasets.read_vectors(os.path.join(args.data, "base.fbin"))
    queries, _ = datasets.read_vectors(os.path.join(args.data, "query.fbin"))
    truth = datasets.read_truth(os.path.join(args.data, "groundtruth.ibin"))
    return base, queries, truth, meta["metric"], (
        f"{meta['name']}: {base.shape[0]} x {base.shape[1]}, {meta['metric']}")


def recall(found, truth, k):
    hits = sum(len(set(f[:k].tolist()) & set(t[:k].tolist())) for f, t in zip(found, truth))
    return hits / (len(truth) * k)


def timed(fn, *a, **kw):
    start = time.perf_counter()
    fn(*a, **kw)
    return time.perf_counter() - start


def in_threads(calls):
    """Runs each (fn, args, kwargs) of `calls` on a thread of its own; waits,
    and raises the first exception one of them raised."""
    errors = []

    def run(fn, a, kw):
        try:
            fn(*a, **kw)
        except BaseException as e:  # noqa: BLE001 - raised below
            errors.append(e)
    threads = [threading.Thread(target=run, args=c) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/dev/shm/embed-export")
    p.add_argument("--synthetic", help="NxD, e.g. 200000x128 (instead of --data)")
    p.add_argument("--dir", default="/dev/shm/shoal-ray-bench")
    p.add_argument("--list-sizes", default="20,40,80")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--repeat", type=int, default=10, help="queries tiled this many times a call")
    p.add_argument("--single-calls", type=int, default=300, help="one-query calls a round")
    p.add_argument("--output", help="a JSON file for the figures")
    args = p.parse_args()
    list_sizes = [int(v) for v in args.list_sizes.split(",")]

    base, queries, truth, metric, name = load(args)
    n, dim = base.shape
    ids = np.arange(n, dtype=np.uint64)
    batch = np.ascontiguousarray(np.tile(queries, (args.repeat, 1)))
    print(f"data: {name}; {len(queries)} queries, batches of {len(batch)}; k {args.k}")

    shutil.rmtree(args.dir, ignore_errors=True)
    os.makedirs(args.dir)
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=1 << 30,
             log_to_driver=False)
    out = {"data": name, "queries_per_call": len(batch), "k": args.k, "points": []}
    try:
        db = shoal.open(os.path.join(args.dir, "one"), dim=dim, metric=metric, shard_count=2,
                        worker_threads=2)
        owner = sray.part_of(ids, 2)
        parts = [shoal.open(os.path.join(args.dir, f"part{p}"), dim=dim, metric=metric,
                            shard_count=1, worker_threads=1) for p in (0, 1)]
        out["build_s"] = {"one": timed(db.bulk_load, ids, base),
                          "parts": timed(in_threads, [
                              (parts[p].bulk_load, (ids[owner == p], base[owner == p]), {})
                              for p in (0, 1)])}
        print(f"bulk_load: one database {out['build_s']['one']:.1f} s, "
              f"2 parts at once {out['build_s']['parts']:.1f} s")
        served_path = os.path.join(args.dir, "served")
        write_parts(served_path, 2)
        for p in (0, 1):
            parts[p].checkpoint(part_dir(served_path, p))
        coll = sray.serve(served_path, 2, num_cpus=1, worker_threads=1)

        def parts_search_batch(q, k, list_size):
            answers = [None, None]

            def one_part(p):
                r = parts[p].search_batch(q, k, list_size=list_size)
                answers[p] = (r.ids, r.distances, r.counts)
            in_threads([(one_part, (p,), {}) for p in (0, 1)])
            return merge_batch(answers, len(q), k)

        class Parts:
            search_batch = staticmethod(parts_search_batch)

        systems = {"one": db, "parts": Parts, "served": coll}

        for ls in list_sizes:
            r = {s: recall(c.search_batch(queries, args.k, list_size=ls).ids, truth, args.k)
                 for s, c in systems.items()}
            out["points"].append({"list_size": ls, "recall": r, "qps": {s: [] for s in systems}})
        names = list(systems)
        for rnd in range(args.rounds):
            order = names[rnd % 3:] + names[:rnd % 3]
            for point in out["points"]:
                for s in order:
                    t = timed(systems[s].search_batch, batch, args.k,
                              list_size=point["list_size"])
                    point["qps"][s].append(len(batch) / t)

        print(f"\nsearch_batch, {args.rounds} rounds in turns: recall@{args.k}, median QPS, "
              "median of the rounds' ratios (range):")
        for point in out["points"]:
            q = point["qps"]
            point["ratios"] = {}
            print(f"list size {point['list_size']}: recall " + ", ".join(
                f"{s} {point['recall'][s]:.4f}" for s in systems))
            print("  QPS " + ", ".join(
                f"{s} {statistics.median(q[s]):.0f} ({min(q[s]):.0f}-{max(q[s]):.0f})"
                for s in systems))
            for a, b in (("served", "one"), ("parts", "one"), ("served", "parts")):
                ratios = [x / y for x, y in zip(q[a], q[b])]
                point["ratios"][f"{a}/{b}"] = [statistics.median(ratios), min(ratios), max(ratios)]
                print(f"  {a} / {b}: {statistics.median(ratios):.3f} "
                      f"({min(ratios):.3f}-{max(ratios):.3f})")

        # Per call: one query a call, in turns; and the driver's own parts of
        # a batch call (ray.put of the queries, the merge).
        ls = list_sizes[len(list_sizes) // 2]
        lat = {f"{s}.{call}": [] for s in ("one", "served") for call in ("search", "search_batch")}
        for rnd in range(args.rounds):
            for s in (["one", "served"] if rnd % 2 == 0 else ["served", "one"]):
                c = systems[s]
                for call in ("search", "search_batch"):
                    fn = c.search if call == "search" else c.search_batch
                    arg = (lambda i: queries[i]) if call == "search" else (
                        lambda i: queries[i:i + 1])
                    start = time.perf_counter()
                    for i in range(args.single_calls):
                        fn(arg(i % len(queries)), args.k, list_size=ls)
                    lat[f"{s}.{call}"].append(
                        (time.perf_counter() - start) / args.single_calls * 1e6)
        out["latency_us"] = {key: statistics.median(v) for key, v in lat.items()}
        put_s = statistics.median(timed(ray.put, batch) for _ in range(20))
        fake = [(np.sort(np.random.default_rng(i).integers(0, 2**63, (len(batch), args.k),
                                                             dtype=np.uint64), axis=1),
                 np.sort(np.random.default_rng(i).random((len(batch), args.k),
                                                         dtype=np.float32), axis=1),
                 np.full(len(batch), args.k, np.int64)) for i in range(2)]
        merge_s = statistics.median(timed(merge_batch, fake, len(batch), args.k)
                                    for _ in range(20))
        out["driver_s"] = {"ray_put": put_s, "merge": merge_s}
        L = out["latency_us"]
        print(f"\none query a call (list size {ls}), median of {args.rounds} rounds of "
              f"{args.single_calls} calls:")
        for call in ("search", "search_batch"):
            print(f"  {call:12s}: one database {L['one.' + call]:7.1f} us, served "
                  f"{L['served.' + call]:7.1f} us, overhead {L['served.' + call] - L['one.' + call]:6.1f} us")
        print(f"a call of {len(batch)} queries, in the driver: ray.put {put_s * 1e3:.2f} ms, "
              f"merge of 2 x ({len(batch)}, {args.k}) {merge_s * 1e3:.2f} ms")
        coll.close()
        db.close()
        for part in parts:
            part.close()
    finally:
        ray.shutdown()
        shutil.rmtree(args.dir, ignore_errors=True)
    if args.output:
        with open(args.output, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

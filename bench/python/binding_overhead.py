#!/usr/bin/env python3
"""What the Python binding costs over the C++ calls it makes, measured in turns.

The same work through `shoal` (this process) and through the C++ API
(build/bench/binding_ref, a child process), on the same files and database,
alternating for --rounds rounds; the medians and their ratios are printed
(issue 45's goals: search_batch within 5% of SearchBatch, put_batch of 1M x
128 within 10% of PutBatch, one search within 2 us of Search).

    python bench/python/binding_overhead.py --ref build-release/bench/binding_ref

Needs the shoal package installed (pip install .) and a Release build of
binding_ref. Data: synthetic (numpy, seeded), written as .fbin to --dir.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

import shoal


def write_fbin(path, x):
    with open(path, "wb") as f:
        np.array(x.shape, dtype=np.uint32).tofile(f)
        x.astype(np.float32).tofile(f)


def clustered(rng, n, dim, clusters=100):
    centres = rng.standard_normal((clusters, dim)).astype(np.float32) * 3
    return (centres[rng.integers(0, clusters, n)]
            + rng.standard_normal((n, dim)).astype(np.float32))


def ref(args, *flags):
    out = subprocess.run([args.ref, *flags], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def python_put(path, base, batch, memtable_mb):
    shutil.rmtree(path, ignore_errors=True)
    db = shoal.open(path, dim=base.shape[1], memtable_bytes=memtable_mb << 20)
    ids = np.arange(base.shape[0], dtype=np.uint64)
    start = time.perf_counter()
    for first in range(0, len(ids), batch):
        db.put_batch(ids[first:first + batch], base[first:first + batch])
    seconds = time.perf_counter() - start
    db.close()
    return seconds


def python_search(path, queries, k, list_size):
    db = shoal.open(path)

    def single():
        start = time.perf_counter()
        for q in queries:
            db.search(q, k, list_size=list_size)
        return time.perf_counter() - start

    single()  # warm-up, as binding_ref does
    single_seconds = single()
    start = time.perf_counter()
    db.search_batch(queries, k, list_size=list_size)
    batch_seconds = time.perf_counter() - start
    db.close()
    return single_seconds, batch_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="build-release/bench/binding_ref")
    parser.add_argument("--dir", default="/dev/shm/shoal-binding-overhead")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--put_rows", type=int, default=1_000_000)
    parser.add_argument("--put_dim", type=int, default=128)
    parser.add_argument("--base_rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--list_size", type=int, default=40)
    parser.add_argument("--memtable_mb", type=int, default=1024,
                        help="memtable size of the put runs: large enough that they time the "
                             "writes, not the flushes and graph builds they would wait for")
    args = parser.parse_args()
    if not os.access(args.ref, os.X_OK):
        sys.exit(f"binding_overhead: no binding_ref at {args.ref} (build the bench targets)")

    os.makedirs(args.dir, exist_ok=True)
    rng = np.random.default_rng(42)
    put_base = rng.standard_normal((args.put_rows, args.put_dim)).astype(np.float32)
    put_file = os.path.join(args.dir, "put.fbin")
    write_fbin(put_file, put_base)
    base = clustered(rng, args.base_rows, args.dim)
    queries = clustered(rng, args.queries, args.dim)
    query_file = os.path.join(args.dir, "query.fbin")
    write_fbin(query_file, queries)
    search_db = os.path.join(args.dir, "search-db")
    shutil.rmtree(search_db, ignore_errors=True)
    with shoal.open(search_db, dim=args.dim) as db:
        db.bulk_load(np.arange(args.base_rows), base)
        db.wait_for_compact()

    put_db = os.path.join(args.dir, "put-db")
    figures = {key: [] for key in ("cpp_put", "py_put", "cpp_single", "py_single",
                                   "cpp_batch", "py_batch")}
    for r in range(args.rounds):
        # C++ first in even rounds, Python first in odd ones.
        order = ("cpp", "py") if r % 2 == 0 else ("py", "cpp")
        for side in order:
            if side == "cpp":
                figures["cpp_put"].append(ref(args, "--op", "put", "--base", put_file,
                                              "--dir", put_db, "--memtable_mb",
                                              str(args.memtable_mb))["put_seconds"])
                s = ref(args, "--op", "search", "--query", query_file, "--dir", search_db,
                        "--k", str(args.k), "--list", str(args.list_size))
                figures["cpp_single"].append(s["single_seconds"])
                figures["cpp_batch"].append(s["batch_seconds"])
            else:
                figures["py_put"].append(python_put(put_db, put_base, args.put_rows,
                                                    args.memtable_mb))
                single, batch = python_search(search_db, queries, args.k, args.list_size)
                figures["py_single"].append(single)
                figures["py_batch"].append(batch)
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(
            f"{k} {v[-1]:.3f}s" for k, v in figures.items()), flush=True)

    med = {k: statistics.median(v) for k, v in figures.items()}
    n = args.queries
    print(f"\nmedians of {args.rounds} rounds (C++ and Python in turns):")
    print(f"  put_batch {args.put_rows} x {args.put_dim}: C++ {med['cpp_put']:.3f} s, "
          f"Python {med['py_put']:.3f} s: Python/C++ time {med['py_put'] / med['cpp_put']:.3f}")
    print(f"  search (one query, 1 thread): C++ {1e6 * med['cpp_single'] / n:.2f} us, "
          f"Python {1e6 * med['py_single'] / n:.2f} us: "
          f"+{1e6 * (med['py_single'] - med['cpp_single']) / n:.2f} us a query")
    print(f"  search_batch of {n}: C++ {n / med['cpp_batch']:.0f} QPS, Python "
          f"{n / med['py_batch']:.0f} QPS: Python/C++ QPS {med['cpp_batch'] / med['py_batch']:.3f}")
    print(json.dumps({"rounds": args.rounds, "medians": med, "all": figures}))


if __name__ == "__main__":
    main()

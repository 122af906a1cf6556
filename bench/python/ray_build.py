# Copyright 2026 The shoal Authors.
"""shoal.ray.build against one process's bulk_load (issue 47's build goal).

    flock /tmp/shoal-bench.lock python bench/python/ray_build.py /dev/shm/embed-export

On an export directory (base.fbin, query.fbin, groundtruth.ibin, dataset.json:
bench/python/datasets.py) it times, each into a fresh database of 2 shards
on tmpfs:

  bulk_load    one process, worker_threads=2 (the input read first, untimed)
  ray 1        shoal.ray.build, 1 task (num_cpus=1, SegmentWriter threads=1)
  ray 2        2 tasks, split="shards" (each task one shard)
  ray 2 rows   2 tasks, split="rows" (each task half the rows, every shard)

and the recall@10 and QPS of each at list sizes 10/20/40 (search_batch of
the queries, 2 threads). Build times include the tasks' reads and the ingest.
On a host shared with other work, a task may get less than a core: the
table also gives each task's CPU seconds, and the speed-up they imply.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import datasets  # noqa: E402

import ray  # noqa: E402

import shoal  # noqa: E402
import shoal.ray as sray  # noqa: E402

LIST_SIZES = (10, 20, 40)


def evaluate(db, queries, truth, k):
    out = []
    for ls in LIST_SIZES:
        db.search_batch(queries[:100], k, list_size=ls)  # warm
        t = time.perf_counter()
        r = db.search_batch(queries, k, list_size=ls)
        dt = time.perf_counter() - t
        hits = sum(len(set(a) & set(b)) for a, b in zip(r.ids.tolist(), truth[:, :k].tolist()))
        out.append((ls, hits / truth[:, :k].size, len(queries) / dt))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export_dir")
    args = ap.parse_args()
    base_path, query_path, truth_path, info = datasets.load_export_dir(args.export_dir)
    metric, k = info["metric"], 10
    queries, _ = datasets.read_vectors(query_path)
    truth = datasets.read_truth(truth_path)
    src = base_path
    work = tempfile.mkdtemp(prefix="shoal-raybuild-bench-", dir="/dev/shm")
    try:
        dim = queries.shape[1]
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        runs = []

        def fresh(name):
            return shoal.open(os.path.join(work, name), dim=dim, metric=metric, shard_count=2,
                              worker_threads=2)

        x, _ = datasets.read_vectors(src)
        ids = np.arange(len(x), dtype=np.uint64)
        with fresh("bulk") as db:
            t, cpu = time.perf_counter(), time.process_time()
            db.bulk_load(ids, x)
            secs, cpu = time.perf_counter() - t, time.process_time() - cpu
            runs.append(("bulk_load, 1 process, 2 threads", secs, [cpu], os.getloadavg()[0],
                         evaluate(db, queries, truth, k)))
        del x
        for name, workers, split in (("ray 1 task", 1, "shards"),
                                     ("ray 2 tasks, split=shards", 2, "shards"),
                                     ("ray 2 tasks, split=rows", 2, "rows")):
            with fresh(name.replace(" ", "_").replace(",", "")) as db:
                t = time.perf_counter()
                out = sray.build(src, db, workers=workers, split=split, num_cpus=1, threads=1,
                                 staging_dir=work)
                runs.append((name, time.perf_counter() - t, out["task_cpu_seconds"],
                             os.getloadavg()[0], evaluate(db, queries, truth, k)))
            print(runs[-1], flush=True)
        ray1, ray1_cpu = runs[1][1], max(runs[1][2])
        print(f"\n{len(truth)} queries, {info.get('name')} {info.get('num_vectors')} x {dim}, "
              f"{metric}")
        # "CPU-bound": the speed-up if every task had a core of its own (the
        # 1-task run's CPU seconds over this run's longest task's).
        print("| build | seconds | ray 1 / this | CPU s (tasks) | CPU-bound ray 1 / this | "
              "load | " + " | ".join(f"recall@10, QPS at L={ls}" for ls in LIST_SIZES) + " |")
        for name, secs, cpus, load, ev in runs:
            cells = " | ".join(f"{r:.4f}, {q:.0f}" for _, r, q in ev)
            cpu_cells = " + ".join(f"{c:.1f}" for c in cpus)
            print(f"| {name} | {secs:.1f} | {ray1 / secs:.2f} | {cpu_cells} | "
                  f"{ray1_cpu / max(cpus):.2f} | {load:.1f} | {cells} |")
    finally:
        ray.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

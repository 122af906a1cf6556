"""The distributed build: segment files built in parallel Ray tasks with
shoal.SegmentWriter, then ingested (all or nothing per database).

    ray.init()
    with shoal.open("/data/db", dim=128, shard_count=2) as db:
        shoal.ray.build("/data/base.fbin", db.collection("default"), workers=2)

Each task opens the input itself (numpy memmap, ``_source``) and writes its
files into a staging directory on its node; the driver only plans the tasks
and ingests what they wrote. The target is a shoal.Collection (one
``ingest_segments`` call: all or nothing) or a served collection
(``shoal.ray.serve``: each part ingests its own files, on its own node;
all or nothing within a part, not across parts).

How the work is split (``split``):

- ``"shards"`` (the default): each task builds whole shards, keeping only
  their rows (``part_of`` for the part, the engine's ``shard_of`` inside it)
  while it reads every row. The files are the ones a bulk_load builds: one
  graph a shard, so searches cost what they cost after a bulk_load.
- ``"rows"``: each task reads one row range and builds every shard of it,
  so each shard gets one file per task, each a graph that searches walk:
  searches get slower with the number of tasks.

docs/architecture.md, "shoal.ray (issue 47)", has the measurements behind
the default.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import shoal

from ._plan import Task, kept, plan
from ._served import ShardedCollection, _gather
from ._source import Source, open_source

_CHUNK_ROWS = 65536  # rows a task reads, routes and adds at a time


def _run_task(source: Source, staging: str, options: Dict[str, Any], n_parts: int,
              task: Task, threads: int) -> Tuple[List[str], float, float]:
    """One task's work, in its Ray worker: its files' paths, its seconds
    and its process's CPU seconds (on a shared host, how much of a core
    the task got: wall / CPU)."""
    wall, cpu = time.perf_counter(), time.process_time()
    files = _write(source, staging, options, n_parts, task, threads)
    return files, time.perf_counter() - wall, time.process_time() - cpu


def _write(source: Source, staging: str, options: Dict[str, Any], n_parts: int,
           task: Task, threads: int) -> List[str]:
    writer = shoal.SegmentWriter(staging, **options, prefix=task.prefix, threads=threads)
    vectors = source.vectors()
    for a in range(task.start, task.stop, _CHUNK_ROWS):
        b = min(task.stop, a + _CHUNK_ROWS)
        ids = source.ids(a, b)
        keep = kept(ids, task, n_parts, options["shard_count"])
        rows = vectors[a:b] if keep is None else vectors[a:b][keep]
        if len(rows):
            writer.add(ids if keep is None else ids[keep],
                       np.ascontiguousarray(rows, dtype=np.float32))
    return writer.finish()


@dataclasses.dataclass
class _Target:
    options: List[Dict[str, Any]]  # each part's SegmentWriter keywords
    nodes: List[str]  # each part's Ray node
    staging_base: Optional[str]  # where staging directories go by default


def _target(into: Any) -> _Target:
    here = ray.get_runtime_context().get_node_id()
    if isinstance(into, ShardedCollection):
        into._check_open()
        infos = _gather([a.info.remote() for a in into.actors])
        options = _gather([a.writer_options.remote() for a in into.actors])
        return _Target(options, [i["node_id"] for i in infos], into.path)
    if isinstance(into, shoal.DB):
        into = into.collection("default")
    if not isinstance(into, shoal.Collection):
        raise TypeError("into: a shoal.Collection, shoal.DB or shoal.ray.ShardedCollection "
                        f"expected, got {type(into).__name__}")
    return _Target([into.writer_options], [here], None)


def _ingest(into: Any, files: List[List[str]], method: str) -> None:
    """Each part's files, in task order (a later row of a repeated id wins)."""
    if isinstance(into, ShardedCollection):
        _gather([a.ingest_segments.remote(f, method) for a, f in zip(into.actors, files) if f])
        return
    if isinstance(into, shoal.DB):
        into = into.collection("default")
    if files[0]:
        into.ingest_segments(files[0], method=method)


def build(vectors: str, into: Any, *, ids: Optional[str] = None, first_id: int = 0,
          workers: int = 2, split: str = "shards", num_cpus: float = 1, threads: int = 1,
          staging_dir: Optional[str] = None, method: str = "link") -> Dict[str, Any]:
    """Builds the records of a file in parallel Ray tasks and ingests them
    into `into`.

    vectors: a ``.npy`` (2-D float array) or ``.fbin`` file, readable at
        the same path on every node that runs a task.
    into: a shoal.Collection (or a shoal.DB: its "default" collection), or a
        ShardedCollection from shoal.ray.serve.
    ids: a ``.npy`` of the rows' integer ids; None: row i gets first_id + i.
    workers: Ray tasks (at least one a part of a served collection; with
        split="shards", at most one a shard).
    split: "shards" (each task builds whole shards) or "rows" (each task
        builds every shard of a row range: one file a shard and task).
    num_cpus, threads: Ray's CPUs for a task, and its SegmentWriter's
        graph-building threads.
    staging_dir: where tasks write their files before the ingest (a
        temporary directory made there, removed after); on the database's
        file system the ingest hard-links them, elsewhere it copies. None:
        inside a served collection's directory, or the system's temp dir.
    method: ingest_segments' method ("link", "copy" or "move").

    Returns {"rows", "tasks", "files", "task_seconds", "task_cpu_seconds"}
    (each task's time, and its CPU time: less than its time when the host
    gave it less than a core). Raises InvalidArgumentError for an
    input that does not fit the collection (its dim; the ids file's shape
    or type), before any task runs; a task's error (a NaN, a negative id;
    after removing every task's files) as the task raised it. Nothing is ingested unless every task succeeded.
    """
    if split not in ("shards", "rows"):
        raise ValueError(f"split must be 'shards' or 'rows', got {split!r}")
    target = _target(into)
    source = open_source(vectors, ids, first_id, target.options[0]["dim"])
    tasks = plan(split, workers, [o["shard_count"] for o in target.options], source.rows)
    staging = tempfile.mkdtemp(prefix=".shoal-build-", dir=staging_dir or target.staging_base)
    try:
        run = ray.remote(_run_task)
        refs = [run.options(num_cpus=num_cpus, scheduling_strategy=NodeAffinitySchedulingStrategy(
                    target.nodes[t.part], soft=False)).remote(
                    source, staging, target.options[t.part], len(target.options), t, threads)
                for t in tasks]
        ray.wait(refs, num_returns=len(refs))  # every task ended: none still writes
        done = _gather(refs)
        files: List[List[str]] = [[] for _ in target.options]
        for t, (f, _, _) in zip(tasks, done):
            files[t.part].extend(f)
        _ingest(into, files, method)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"rows": source.rows, "tasks": len(tasks), "files": sum(len(f) for f in files),
            "task_seconds": [d[1] for d in done], "task_cpu_seconds": [d[2] for d in done]}

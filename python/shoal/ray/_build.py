"""The distributed build: segment files built in parallel Ray tasks with
shoal.SegmentWriter, then ingested (all or nothing per database).

    ray.init()
    with shoal.open("/data/db", dim=128, shard_count=2) as db:
        shoal.ray.build("/data/base.fbin", db.collection("default"), workers=2)
        # or records with their parts, from Parquet:
        shoal.ray.build(ray.data.read_parquet("/data/docs/"), db, vector_column="emb",
                        id_column="doc_id", label_column="tags", payload_column="text")

Each task reads its own input and writes its files into a staging
directory on its node; the driver only plans the tasks and ingests what
they wrote. The target is a shoal.Collection (one ``ingest_segments``
call: all or nothing) or a served collection (``shoal.ray.serve``: each
part ingests its own files, on its own node; all or nothing within a part,
not across parts).

The input, and how a task reads it:

- a ``.npy``/``.fbin`` file (``_source``): each task maps the file (numpy
  memmap) and reads its range of rows; ids and vectors only.
- a ``ray.data.Dataset`` (``_dataset``): records with their labels,
  attributes and payloads. Ray Data runs the dataset in its own tasks
  (only the columns named, in the dataset's order) into Arrow blocks in
  the object store; one routing task a block splits it into one piece a
  build task (the rows that task keeps); each build task receives only
  its pieces. Every row is read once and moved once, to the node of the
  task that builds it. The cost: the dataset's columns are held in the
  object store (spilled to disk when larger) from the read until the
  build tasks end, twice while blocks are being routed. Not chosen: every
  task iterating the whole dataset itself (a Dataset pickles as its plan),
  which reads and decodes it once a task, and starts a Ray Data execution
  inside tasks that hold the cluster's CPUs (a small cluster waits
  forever); Ray Data's groupby, which neither keeps the rows' order (a
  later row of an id must win) nor places a task on its part's node.

How the work is split (``split``):

- ``"shards"`` (the default): each task builds whole shards, keeping only
  their rows (``part_of`` for the part, the engine's ``shard_of`` inside it)
  while it reads every row (a file) or gets every block's piece (a
  Dataset). The files are the ones a bulk_load builds: one graph a shard,
  so searches cost what they cost after a bulk_load.
- ``"rows"``: each task reads one range of rows (a file) or blocks (a
  Dataset) and builds every shard of it, so each shard gets one file per
  task, each a graph that searches walk: searches get slower with the
  number of tasks.

docs/architecture.md, "shoal.ray (issue 47)", has the measurements behind
the default.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import shoal

from ._plan import Task, plan
from ._served import ShardedCollection, _gather
from ._source import Source, open_source


def _run_task(source: Optional[Source], staging: str, options: Dict[str, Any], n_parts: int,
              task: Task, threads: int, *pieces: Any) -> Tuple[List[str], int, float, float]:
    """One task's work, in its Ray worker: its files' paths, the rows it
    added, its seconds and its process's CPU seconds (on a shared host, how
    much of a core the task got: wall / CPU). Its rows: those it keeps of
    the file `source`, or (source None) its `pieces` of a Dataset."""
    wall, cpu = time.perf_counter(), time.process_time()
    writer = shoal.SegmentWriter(staging, **options, prefix=task.prefix, threads=threads)
    if source is not None:
        chunks = source.chunks(task, n_parts, options["shard_count"])
    else:
        from ._dataset import chunks as dataset_chunks

        chunks = dataset_chunks(pieces)
    for ids, vectors, parts in chunks:
        writer.add(ids, vectors, **parts)
    rows = writer.rows
    files = writer.finish()
    return files, rows, time.perf_counter() - wall, time.process_time() - cpu


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


@dataclasses.dataclass
class _Input:
    source: Optional[Source]  # a file input; None for a Dataset
    tasks: List[Task]
    pieces: List[List[Any]]  # each task's pieces (refs) of a Dataset; [] for a file


def _file_input(path: Any, ids: Optional[str], first_id: int, target: _Target, split: str,
                workers: int) -> _Input:
    source = open_source(path, ids, first_id, target.options[0]["dim"])
    tasks = plan(split, workers, [o["shard_count"] for o in target.options], source.rows)
    return _Input(source, tasks, [[] for _ in tasks])


def _dataset_input(ds: Any, columns: Any, target: _Target, split: str, workers: int,
                   num_cpus: float) -> _Input:
    """Runs the dataset into blocks and submits a routing task a block
    (each its block split into one piece a task); the tasks' pieces."""
    from . import _dataset

    _dataset.check(ds, columns)
    blocks = _dataset.blocks(ds, columns)
    shard_counts = [o["shard_count"] for o in target.options]
    tasks = plan(split, workers, shard_counts, len(blocks))
    route = ray.remote(_dataset.route).options(num_returns=len(tasks), num_cpus=num_cpus)
    pieces: List[List[Any]] = [[] for _ in tasks]
    for index, block in enumerate(blocks):
        out = route.remote(block, index, columns, tasks, shard_counts)
        for t, ref in enumerate([out] if len(tasks) == 1 else out):
            if tasks[t].start <= index < tasks[t].stop:
                pieces[t].append(ref)
    return _Input(None, tasks, pieces)


def build(data: Any, into: Any, *, ids: Optional[str] = None, first_id: int = 0,
          vector_column: Optional[str] = None, id_column: Optional[str] = None,
          label_column: Optional[str] = None,
          attribute_columns: Union[None, Mapping[str, str], Sequence[str]] = None,
          payload_column: Optional[str] = None, workers: int = 2, split: str = "shards",
          num_cpus: float = 1, threads: int = 1, staging_dir: Optional[str] = None,
          method: str = "link") -> Dict[str, Any]:
    """Builds the records of a file or a Ray Dataset in parallel Ray tasks
    and ingests them into `into`.

    data: a ``.npy`` (2-D float array) or ``.fbin`` file, readable at the
        same path on every node that runs a task (ids and vectors only); or
        a ``ray.data.Dataset`` (e.g. ``ray.data.read_parquet(...)``) with a
        column for each part of the records (the *_column keywords).
    into: a shoal.Collection (or a shoal.DB: its "default" collection), or a
        ShardedCollection from shoal.ray.serve.
    ids: (a file) a ``.npy`` of the rows' integer ids; None: row i gets
        first_id + i.
    vector_column: (a Dataset) its vectors: a fixed-size list of floats, a
        tensor column of shape (dim,), or lists of floats of length dim;
        None: "vector".
    id_column: (a Dataset) its ids: integers in [0, 2**64), required (a
        distributed dataset's rows have no stable numbers); None: "id".
    label_column: (a Dataset) lists of integer labels (null: none).
    attribute_columns: (a Dataset) integer columns for the collection's
        attributes: a mapping of attribute name -> column, or a list of
        columns named as the attributes (null: absent).
    payload_column: (a Dataset) binary or string payloads (null: none).
    workers: Ray tasks that build (at least one a part of a served
        collection; with split="shards", at most one a shard).
    split: "shards" (each task builds whole shards) or "rows" (each task
        builds every shard of a range of rows or blocks: one file a shard
        and task).
    num_cpus, threads: Ray's CPUs for a task (building or routing a
        Dataset's block), and a SegmentWriter's graph-building threads.
    staging_dir: where tasks write their files before the ingest (a
        temporary directory made there, removed after); on the database's
        file system the ingest hard-links them, elsewhere it copies. None:
        inside a served collection's directory, or the system's temp dir.
    method: ingest_segments' method ("link", "copy" or "move").

    A later row of a repeated id wins (a Dataset's rows in its order).
    Returns {"rows", "tasks", "files", "task_seconds", "task_cpu_seconds"}
    (rows built; each build task's time, and its CPU time: less than its
    time when the host gave it less than a core). Raises
    InvalidArgumentError for an input that does not fit the collection, before
    any task runs: a file's dim, the ids file's shape or type; a Dataset's
    missing column, a column's type, a vector column's dim (when its type
    has one), an attribute the collection does not declare. A task's error
    (a NaN, a negative id, a vector of another length in a list column) is
    raised as the task raised it, after every task ended and their files
    were removed. Nothing is ingested unless every task succeeded.
    """
    if split not in ("shards", "rows"):
        raise ValueError(f"split must be 'shards' or 'rows', got {split!r}")
    target = _target(into)
    named = {"vector_column": vector_column, "id_column": id_column,
             "label_column": label_column, "attribute_columns": attribute_columns,
             "payload_column": payload_column}
    if isinstance(data, (str, os.PathLike)):
        given = [k for k, v in named.items() if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: for a ray.data.Dataset input, not a file")
        work = _file_input(data, ids, first_id, target, split, workers)
    else:
        from ray.data import Dataset  # needs Ray Data (pyarrow); a file build does not

        from . import _dataset

        if not isinstance(data, Dataset):
            raise TypeError("data: a .npy/.fbin path or a ray.data.Dataset expected, got "
                            f"{type(data).__name__}")
        if ids is not None or first_id:
            raise ValueError("ids, first_id: for a file input; a Dataset's ids are its "
                             "id_column")
        columns = _dataset.columns_of(vector_column, id_column, label_column,
                                      attribute_columns, payload_column,
                                      target.options[0]["dim"], target.options[0]["attributes"])
        work = _dataset_input(data, columns, target, split, workers, num_cpus)
    tasks = work.tasks
    staging = tempfile.mkdtemp(prefix=".shoal-build-", dir=staging_dir or target.staging_base)
    try:
        run = ray.remote(_run_task)
        refs = [run.options(num_cpus=num_cpus, scheduling_strategy=NodeAffinitySchedulingStrategy(
                    target.nodes[t.part], soft=False)).remote(
                    work.source, staging, target.options[t.part], len(target.options), t,
                    threads, *work.pieces[i])
                for i, t in enumerate(tasks)]
        work.pieces.clear()  # the tasks hold their pieces now: freed as they end
        ray.wait(refs, num_returns=len(refs))  # every task ended: none still writes
        done = _gather(refs)
        files: List[List[str]] = [[] for _ in target.options]
        for t, (f, _, _, _) in zip(tasks, done):
            files[t.part].extend(f)
        _ingest(into, files, method)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"rows": sum(d[1] for d in done), "tasks": len(tasks),
            "files": sum(len(f) for f in files),
            "task_seconds": [d[2] for d in done], "task_cpu_seconds": [d[3] for d in done]}

"""The plan of a distributed build: which task builds which rows.

A task builds, for one part of the target (0 for a Collection), a set of
that part's shards from a range of the input: rows of a file, or blocks of
a Ray Dataset. It keeps only the rows of its part (``part_of``) and its
shards (the engine's ``shard_of`` inside the part), so two tasks never
build the same id: with ``split="shards"`` every task reads the whole input
and builds whole shards; with ``split="rows"`` each task reads one range
and builds every shard of its part.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Sequence

import numpy as np

from ._routing import part_of
from ._shards import shard_of


@dataclasses.dataclass(frozen=True)
class Task:
    part: int  # which part's database the files are for (0 for a Collection)
    shards: Sequence[int]  # the shards of that part it builds
    start: int  # its range of the input: rows of a file, blocks of a Dataset
    stop: int
    prefix: str  # its files' prefix in the staging directory


def deal(items: Sequence[int], k: int) -> List[List[int]]:
    """`items` dealt round-robin into min(k, len(items)) non-empty hands."""
    k = max(1, min(k, len(items)))
    return [list(items[i::k]) for i in range(k)]


def plan(split: str, workers: int, shard_counts: Sequence[int], size: int) -> List[Task]:
    """The tasks over an input of `size` rows (or blocks): `workers` shared
    over the parts (at least one a part), in the input's order within a
    part (ingesting them in this order, a later row of an id wins)."""
    n_parts = len(shard_counts)
    per_part = deal(list(range(workers)), n_parts) if workers >= n_parts else [[0]] * n_parts
    tasks: List[Task] = []
    for part, shard_count in enumerate(shard_counts):
        k = len(per_part[part])
        if split == "shards":
            for shards in deal(list(range(shard_count)), k):
                tasks.append(Task(part, shards, 0, size, f"t{len(tasks):05d}"))
        else:
            bounds = np.linspace(0, size, k + 1).astype(int)
            for a, b in zip(bounds[:-1], bounds[1:]):
                tasks.append(Task(part, list(range(shard_count)), int(a), int(b),
                                  f"t{len(tasks):05d}"))
    return tasks


def kept(ids: np.ndarray, task: Task, n_parts: int, shard_count: int) -> Optional[np.ndarray]:
    """The rows of `ids` ((n,) uint64) that `task` builds, as a boolean
    mask (None: all of them)."""
    keep = None
    if n_parts > 1:
        keep = part_of(ids, n_parts) == task.part
    if len(task.shards) < shard_count:
        mine = np.isin(shard_of(ids, shard_count), task.shards)
        keep = mine if keep is None else keep & mine
    return keep

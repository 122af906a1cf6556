"""One part of a served collection: a shoal database, run as a Ray actor.

A plain class (``ray.remote`` is applied by ``_served``), so it also runs
in-process. Each method is one call on the part's collection (its
database's "default"); arrays come in as Ray hands them over (read-only
views of the object store, which the binding reads without a copy) and go
back as numpy arrays.

Ray reruns the constructor when the actor's process dies (max_restarts):
the database then recovers from its own logs, which hold every write a
call returned from (with fsync="never" a killed process loses nothing
acknowledged; "always" is needed against a machine crash).
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Optional

import numpy as np

import shoal

# How long a restarted part waits for its previous process to release the
# database's lock (the old process may still be exiting).
_LOCK_WAIT_S = 30.0


def _open(path: str, options: Dict[str, Any]) -> shoal.DB:
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            return shoal.open(path, **options)
        except shoal.FailedPreconditionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _search_args(list_size: Optional[int], filter: Any) -> Dict[str, Any]:
    kw: Dict[str, Any] = {"filter": filter}
    if list_size is not None:
        kw["list_size"] = list_size
    return kw


class Part:
    """The database at `path`, opened with `options` (shoal.open's keywords)."""

    def __init__(self, path: str, options: Dict[str, Any]) -> None:
        self._db = _open(path, options)

    def info(self) -> Dict[str, Any]:
        import ray  # only inside an actor

        ctx = ray.get_runtime_context()
        c = self._db.collection("default")
        return {"pid": os.getpid(), "dim": c.dim, "metric": c.metric,
                "attributes": tuple(c.attributes), "shard_count": c.shard_count,
                "node_id": ctx.get_node_id(),
                "restarted": ctx.was_current_actor_reconstructed}

    # ---- Writes ----

    def put(self, id: int, vector: np.ndarray, **parts: Any) -> None:
        self._db.put(id, vector, **parts)

    def put_batch(self, ids: np.ndarray, vectors: np.ndarray, **parts: Any) -> None:
        self._db.put_batch(ids, vectors, **parts)

    def bulk_load(self, ids: np.ndarray, vectors: np.ndarray, **parts: Any) -> None:
        self._db.bulk_load(ids, vectors, **parts)

    def ingest_segments(self, files: list, method: str) -> None:
        self._db.ingest_segments(files, method=method)

    def delete(self, id: int) -> None:
        self._db.delete(id)

    def writer_options(self) -> Dict[str, Any]:
        return self._db.collection("default").writer_options

    # ---- Reads ----

    def get(self, id: int) -> np.ndarray:
        return self._db.get(id)

    def get_record(self, id: int, vector: bool) -> shoal.Record:
        return self._db.get_record(id, vector=vector)

    def get_records(self, ids: np.ndarray, vector: bool) -> list:
        return self._db.get_records(ids, vector=vector)

    def search(self, query: np.ndarray, k: int, list_size: Optional[int], filter: Any):
        return self._db.search(query, k, **_search_args(list_size, filter))

    def search_batch(self, queries: np.ndarray, k: int, list_size: Optional[int], filter: Any):
        r = self._db.search_batch(queries, k, **_search_args(list_size, filter))
        return r.ids, r.distances, r.counts

    # ---- The database ----

    def flush(self) -> None:
        self._db.flush()

    def compact(self) -> None:
        self._db.compact()

    def wait_for_compact(self) -> None:
        self._db.wait_for_compact()

    def stats(self) -> Dict[str, Any]:
        return self._db.stats()["default"]

    def close(self) -> None:
        self._db.close()

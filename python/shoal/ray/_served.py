"""A collection served by N Ray actors: writes routed by id, searches
scattered to every part and their top-k merged exactly."""

from __future__ import annotations

import operator
import os
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import shoal

from . import _layout
from ._merge import merge_batch, merge_one
from ._part import Part
from ._routing import as_id, as_ids, part_of, part_of_id, split, take

# Ray's max_direct_call_object_size: arguments below it are copied into the
# call's message, larger ones are put in the object store.
_INLINE_BYTES = 100 * 1024

_STATS_SUMMED = ("shards", "live_vectors", "stored_vectors", "deleted", "segments",
                 "memtable_bytes", "wal_bytes", "segment_payload_bytes")


def _gather(refs: Any, timeout: Optional[float] = None) -> Any:
    """ray.get(refs), raising a part's own exception (shoal.NotFoundError,
    shoal.InvalidArgumentError, ...) rather than Ray's wrapper of it."""
    try:
        return ray.get(refs, timeout=timeout)
    except ray.exceptions.RayTaskError as e:
        if e.cause is not None:
            raise e.cause from e
        raise


class ShardedCollection:
    """A collection whose records are spread over N parts, each a shoal
    database in a Ray actor (made by ``serve``).

    The part of a record is fixed by its id (splitmix64(id) % N). A write
    goes to its part's database and is durable in that part's logs when the
    call returns, as with ``shoal.open``'s `fsync` policy. A search is sent
    to every part, and their top-k are merged exactly: the answer is the k
    nearest of the union of the parts' answers, nearest first, ties by id.
    Filters (``shoal.Filter``) are passed to every part.

    Calls block until every part involved has answered. A part's process
    that dies is restarted by Ray and reopens its directory: writes it had
    acknowledged are there; calls caught by the failure are retried on the
    restarted part (all of them are idempotent: a put rewrites the same
    record) unless ``serve(max_task_retries=0)``, which raises
    ``ray.exceptions.RayActorError`` instead.

    Atomicity: a batch is atomic within each part (a part's share of a
    put_batch is one call of its database's), not across parts. Bad input
    that can be checked here (ids, shapes, lengths, attribute names) is
    refused before anything is written; a part that refuses its share
    afterwards leaves the other parts' shares written.

    Safe to use from several threads at once (each part runs up to
    `max_concurrency` calls at a time). ``close()`` closes every part's
    database and ends the actors; later calls raise
    FailedPreconditionError.
    """

    def __init__(self, path: str, actors: Sequence[Any], info: Dict[str, Any]) -> None:
        self._path = path
        self._actors = list(actors)
        self._dim = info["dim"]
        self._metric = info["metric"]
        self._attributes = info["attributes"]
        self._shard_count = info["shard_count"]
        self._closed = False

    # ---- What it is ----

    @property
    def path(self) -> str:
        return self._path

    @property
    def n_parts(self) -> int:
        return len(self._actors)

    @property
    def actors(self) -> tuple:
        """The parts' actor handles, part i at index i."""
        return tuple(self._actors)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def metric(self) -> str:
        return self._metric

    @property
    def attributes(self) -> tuple:
        return self._attributes

    @property
    def shard_count(self) -> int:
        """Shards of all parts together."""
        return self._shard_count

    @property
    def closed(self) -> bool:
        return self._closed

    def part_of(self, id: int) -> int:
        """The part that holds `id`."""
        return part_of_id(as_id(id), self.n_parts)

    def __repr__(self) -> str:
        return (f"shoal.ray.ShardedCollection({self._path!r}, parts={self.n_parts}, "
                f"dim={self._dim}, metric={self._metric!r})")

    # ---- Writes ----

    def put(self, id: int, vector: Any, *, labels: Any = None, attributes: Any = None,
            payload: Any = None) -> None:
        """Inserts or replaces the record of `id` in its part (see
        shoal.Collection.put)."""
        key = as_id(id)
        actor = self._actor_of(key)
        _gather(actor.put.remote(key, vector, labels=labels, attributes=attributes,
                                 payload=payload))

    def put_batch(self, ids: Any, vectors: Any, *, labels: Any = None, attributes: Any = None,
                  payloads: Any = None) -> None:
        """Puts many records: one put_batch a part, on all parts at once, each
        part's rows in their order in the batch (a later row of a repeated
        id wins). Arguments as shoal.Collection.put_batch."""
        self._scatter_rows("put_batch", ids, vectors, labels, attributes, payloads)

    def bulk_load(self, ids: Any, vectors: Any, *, labels: Any = None, attributes: Any = None,
                  payloads: Any = None) -> None:
        """shoal.Collection.bulk_load on every part with its rows, at once
        (each part builds its graphs on its own threads)."""
        self._scatter_rows("bulk_load", ids, vectors, labels, attributes, payloads)

    def delete(self, id: int) -> None:
        """Deletes `id` (absent: not an error)."""
        key = as_id(id)
        _gather(self._actor_of(key).delete.remote(key))

    # ---- Reads ----

    def get(self, id: int) -> np.ndarray:
        """The vector of `id`; NotFoundError (a KeyError) when absent."""
        key = as_id(id)
        return _gather(self._actor_of(key).get.remote(key))

    def get_record(self, id: int, *, vector: bool = True) -> shoal.Record:
        """The record of `id` (a shoal.Record); NotFoundError when absent."""
        key = as_id(id)
        return _gather(self._actor_of(key).get_record.remote(key, vector))

    def get_records(self, ids: Any, *, vector: bool = True) -> List[Optional[shoal.Record]]:
        """The records of `ids` in order (None for an absent id)."""
        self._check_open()
        keys = as_ids(ids)
        out: List[Optional[shoal.Record]] = [None] * len(keys)
        pieces = split(part_of(keys, self.n_parts), self.n_parts)
        answers = _gather([self._actors[p].get_records.remote(keys[index], vector)
                           for p, index in pieces])
        for (_, index), records in zip(pieces, answers):
            for i, r in zip(index.tolist(), records):
                out[i] = r
        return out

    def search(self, query: Any, k: int = 10, *, list_size: Optional[int] = None,
               filter: Optional[shoal.Filter] = None):
        """The k nearest records to `query`: (ids, distances) of length
        m <= k, nearest first, ties by id (as shoal.Collection.search).
        list_size: each part's search list (None: the engine's default)."""
        self._check_open()
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (self._dim,):
            raise shoal.InvalidArgumentError(
                f"query must be ({self._dim},), got shape {q.shape}")
        k = operator.index(k)
        answers = _gather([a.search.remote(q, k, list_size, filter) for a in self._actors])
        return merge_one(answers, k)

    def search_batch(self, queries: Any, k: int = 10, *, list_size: Optional[int] = None,
                     filter: Optional[shoal.Filter] = None) -> shoal.SearchResults:
        """search for each row of `queries`: a shoal.SearchResults of (n, k)
        arrays padded with shoal.NO_ID / inf, and `.counts`, as
        shoal.Collection.search_batch.

        queries: an (n, dim) array, put once in Ray's object store where
        every part reads it without a copy (below 100 KiB it is sent inside
        each part's call instead); or an ObjectRef of one (e.g. from
        ray.put), passed on as it is."""
        self._check_open()
        k = operator.index(k)
        if isinstance(queries, ray.ObjectRef):
            ref = queries
        else:
            q = np.asarray(queries)
            if q.ndim != 2 or q.shape[1] != self._dim:
                raise shoal.InvalidArgumentError(
                    f"queries must be (n, {self._dim}), got shape {q.shape}")
            if q.shape[0] == 0:
                return merge_batch([(np.empty((0, k), np.uint64), np.empty((0, k), np.float32),
                                     np.empty(0, np.int64))], 0, k)
            q = np.ascontiguousarray(q, dtype=np.float32)
            # A large batch goes into the object store once, for every part;
            # a small one travels inside each call (Ray inlines arguments
            # below 100 KiB), which saves the put (~1 ms here).
            ref = ray.put(q) if q.nbytes >= _INLINE_BYTES else q
        answers = _gather([a.search_batch.remote(ref, k, list_size, filter)
                           for a in self._actors])
        return merge_batch(answers, answers[0][0].shape[0], k)

    # ---- The parts' databases ----

    def flush(self) -> None:
        """Flushes every part's memtables into segments."""
        self._broadcast("flush")

    def compact(self) -> None:
        """Compacts every part, at once."""
        self._broadcast("compact")

    def wait_for_compact(self) -> None:
        self._broadcast("wait_for_compact")

    def stats(self) -> Dict[str, Any]:
        """The collection's stats (shoal.DB.stats' keys, summed over the
        parts), and "parts": each part's own."""
        parts = self._broadcast("stats")
        out: Dict[str, Any] = {"dim": self._dim, "metric": self._metric}
        for key in _STATS_SUMMED:
            out[key] = sum(p[key] for p in parts)
        out["parts"] = parts
        return out

    def close(self) -> None:
        """Closes every part's database (all writes durable as the fsync
        policy says) and ends the actors. Calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            _gather([a.close.remote() for a in self._actors])
        finally:
            for a in self._actors:
                ray.kill(a, no_restart=True)

    def __enter__(self) -> "ShardedCollection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- Helpers ----

    def _check_open(self) -> None:
        if self._closed:
            raise shoal.FailedPreconditionError("shoal.ray: this collection is closed")

    def _actor_of(self, key: int) -> Any:
        self._check_open()
        return self._actors[part_of_id(key, self.n_parts)]

    def _broadcast(self, method: str) -> list:
        self._check_open()
        return _gather([getattr(a, method).remote() for a in self._actors])

    def _scatter_rows(self, method: str, ids: Any, vectors: Any, labels: Any,
                      attributes: Any, payloads: Any) -> None:
        self._check_open()
        keys = as_ids(ids)
        n = len(keys)
        rows = np.asarray(vectors)
        if rows.ndim != 2 or rows.shape != (n, self._dim):
            raise shoal.InvalidArgumentError(
                f"vectors must be ({n}, {self._dim}) for {n} ids, got shape {rows.shape}")
        if isinstance(attributes, dict):
            unknown = sorted(set(attributes) - set(self._attributes))
            if unknown:
                raise shoal.InvalidArgumentError(
                    f"attributes {unknown} are not declared by the collection "
                    f"(it declares {list(self._attributes)})")
        pieces = split(part_of(keys, self.n_parts), self.n_parts)
        # Checked for every part before any is written to.
        shares = []
        for p, index in pieces:
            whole = len(index) == n  # one part has every row, in order
            shares.append((p, {
                "ids": keys if whole else keys[index],
                "vectors": rows if whole else rows[index],
                "labels": labels if whole else take(labels, index, n, "labels"),
                "attributes": attributes if whole else take(attributes, index, n, "attributes"),
                "payloads": payloads if whole else take(payloads, index, n, "payloads"),
            }))
        _gather([getattr(self._actors[p], method).remote(
            share.pop("ids"), share.pop("vectors"), **share) for p, share in shares])


def serve(path: str, n_parts: Optional[int] = None, *, dim: int = 0, metric: str = "l2",
          shard_count: int = 0, attributes: Sequence[str] = (), num_cpus: float = 1,
          worker_threads: int = 0, node_ids: Optional[Sequence[str]] = None,
          max_concurrency: int = 4, max_task_retries: int = -1,
          startup_timeout_s: float = 300.0, **options: Any) -> ShardedCollection:
    """Serves the collection at `path` (a directory) from `n_parts` Ray
    actors, each owning the database of its part (``<path>/part-<i>/``);
    made when missing, reopened when it exists.

    Call ``ray.init()`` first (or let Ray start a local cluster).

    n_parts: the number of parts (actors); fixed when the collection is
        made (``<path>/parts.json``); None or the same number to reopen.
    dim, metric, attributes: the collection's, as shoal.open's (dim is
        required to make it; on reopening, 0 means as stored).
    shard_count: shards of all parts together, a multiple of n_parts (each
        part gets shard_count / n_parts); 0: one per part and actor CPU.
    num_cpus: the CPUs Ray reserves for each part's actor.
    worker_threads: each part's engine threads (flushes, merges,
        search_batch); 0: the actor's num_cpus (at least 1).
    node_ids: the Ray node of each part (its directory lives on that node's
        disk); None: every part on this driver's node. Each part is pinned
        to its node, so that a restart finds its directory.
    max_concurrency: calls a part runs at once (threads of the actor).
    max_task_retries: Ray's retries of a call caught by a part's death
        (-1: until the part is back; 0: raise RayActorError).
    startup_timeout_s: how long to wait for every part to open (a part
        Ray cannot place, for lack of CPUs, waits forever otherwise).
    options: the other keywords of shoal.open (fsync, memtable_bytes,
        segment_storage, max_degree, build_list_size, code, ...).

    Returns a ShardedCollection. Raises ValueError when `n_parts` differs
    from the stored number, or dim is missing for a new collection.
    """
    path = os.path.abspath(os.fspath(path))
    stored = _layout.read_parts(path)
    if stored is None:
        if n_parts is None or n_parts < 1:
            raise ValueError(f"{path}: no collection here; give n_parts >= 1 to make one")
        if dim <= 0:
            raise ValueError(f"{path}: no collection here; give dim > 0 to make one")
        per_cpu = max(1, int(num_cpus))
        if shard_count == 0:
            shard_count = n_parts * per_cpu
        if shard_count % n_parts:
            raise ValueError(f"shard_count {shard_count} is not a multiple of n_parts {n_parts}")
        _layout.write_parts(path, n_parts)
    elif n_parts is not None and n_parts != stored:
        raise ValueError(f"{path}: the collection has {stored} parts, not {n_parts} "
                         "(resharding is not supported)")
    n = stored or n_parts
    if node_ids is None:
        node_ids = [ray.get_runtime_context().get_node_id()] * n
    if len(node_ids) != n:
        raise ValueError(f"node_ids: {len(node_ids)} given for {n} parts")
    part_options = dict(options, dim=dim, metric=metric, attributes=list(attributes),
                        shard_count=shard_count // n if shard_count else 0,
                        worker_threads=worker_threads or max(1, int(num_cpus)))
    remote_part = ray.remote(Part)
    actors = [
        remote_part.options(
            num_cpus=num_cpus, max_restarts=-1, max_task_retries=max_task_retries,
            max_concurrency=max_concurrency,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(_layout.part_dir(path, i), part_options)
        for i, node_id in enumerate(node_ids)
    ]
    try:
        infos = _gather([a.info.remote() for a in actors], timeout=startup_timeout_s)
    except BaseException as e:
        for a in actors:
            ray.kill(a, no_restart=True)
        if isinstance(e, ray.exceptions.GetTimeoutError):
            raise TimeoutError(
                f"{path}: the {n} parts did not open within {startup_timeout_s} s; can the "
                f"cluster place {n} actors of num_cpus={num_cpus} on their nodes? "
                f"(ray.available_resources(): {ray.available_resources()})") from e
        raise
    first = infos[0]
    for i, info in enumerate(infos):
        if (info["dim"], info["metric"], info["attributes"]) != (
                first["dim"], first["metric"], first["attributes"]):
            for a in actors:
                ray.kill(a, no_restart=True)
            raise ValueError(f"{path}: part {i} holds a collection of dim {info['dim']}, "
                             f"metric {info['metric']}, attributes {info['attributes']}; "
                             f"part 0 one of {first['dim']}, {first['metric']}, "
                             f"{first['attributes']}")
    first = dict(first, shard_count=sum(info["shard_count"] for info in infos))
    return ShardedCollection(path, actors, first)

"""A LangChain vector store on shoal (the optional extra ``shoal[langchain]``).

Each document is one shoal record: its vector, and a payload holding the
document's string id, ``page_content`` and ``metadata`` as one utf-8 JSON
object (``{"v": 1, "id": ..., "page_content": ..., "metadata": {...}}``).
The engine writes a record's vector and payload as one log record, so after a
crash (a killed process; a machine crash too with ``fsync="always"``) a
document is stored whole or not at all: never a vector without its text, nor
a text beside a stale vector.

Metadata round-trips as JSON does: str keys and JSON values come back equal;
tuples come back as lists, non-str keys as str; a value JSON cannot hold
(bytes, a datetime, NaN) is refused with ValueError before anything is
written. A payload is at most 1 MiB (the engine's kMaxPayloadBytes).

String ids become shoal's uint64 ids through ``string_id_to_key`` (the first
8 bytes of blake2b, little-endian). Two string ids may hash alike; the store
never lets one overwrite or delete the other. A write whose key already holds
a record of a *different* string id raises ``IdCollisionError`` and writes
nothing of its batch; ``delete`` and ``get_by_ids`` skip a key that holds
another string id. (Probing for a free key was rejected: the key of an id
would then depend on the order documents arrived, and every read would need
the probe chain.) At 2**64 keys a collision is expected only past ~5e9
documents; the check costs one payload read per written document.

Example::

    from shoal.langchain import ShoalVectorStore
    store = ShoalVectorStore(embedding, path="/data/rag")
    ids = store.add_texts(["shoal is a vector database"], [{"year": 2026}])
    docs = store.similarity_search("what is shoal?", k=4)
    store.close()
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

try:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import VectorStore
    from langchain_core.vectorstores.utils import maximal_marginal_relevance
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "shoal.langchain needs langchain-core: pip install 'shoal[langchain]'"
    ) from e

import shoal

__all__ = ["IdCollisionError", "ShoalVectorStore", "string_id_to_key"]

_PAYLOAD_VERSION = 1
_NO_ID = 2**64 - 1  # search_batch's padding id: never a document's key


class IdCollisionError(ValueError):
    """Two different string ids map to the same shoal key."""


def string_id_to_key(doc_id: str) -> int:
    """The shoal id (uint64) that stores the document whose id is `doc_id`.

    Stable across processes and versions: the first 8 bytes of
    blake2b(utf-8 of `doc_id`), little-endian.
    """
    digest = hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _encode_payload(doc_id: str, text: str, metadata: dict[str, Any]) -> bytes:
    try:
        body = json.dumps(
            {"v": _PAYLOAD_VERSION, "id": doc_id, "page_content": text,
             "metadata": metadata},
            ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"document {doc_id!r}: metadata must be JSON-serializable "
            f"(str keys; str, int, float, bool, None, lists, dicts): {e}") from e
    return body.encode("utf-8")


def _decode_payload(payload: bytes) -> dict[str, Any] | None:
    """The payload's JSON object, or None when the record is not ours."""
    try:
        obj = json.loads(bytes(payload).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        return None
    return obj


def _to_document(obj: dict[str, Any]) -> Document:
    return Document(id=obj["id"], page_content=obj.get("page_content", ""),
                    metadata=obj.get("metadata") or {})


class ShoalVectorStore(VectorStore):
    """LangChain ``VectorStore`` keeping documents in a shoal collection.

    Args:
        embedding: the ``Embeddings`` that turn texts into vectors.
        path: a shoal database directory, opened (created when missing) and
            closed by ``close()``. Give `path` or `db`, not both.
        db: an open ``shoal.DB``; the store does not close it.
        collection: the collection's name (default ``"langchain"``). It is
            created at the first add, when the vectors' dim is known; an
            existing one is used as it is (its metric must be `metric`).
        metric: ``"cosine"`` (default), ``"l2"`` or ``"ip"``.
        fsync: with `path`, when writes reach stable storage (``"never"``,
            the engine's default: every acknowledged add survives a killed
            process, a machine crash keeps a prefix; ``"interval"``;
            ``"always"``: an add returns once durable). Ignored with `db`.
        filter_fields: names of integer metadata fields that searches may
            filter on. They are declared as the collection's int64
            attributes when it is created (an existing collection must
            declare them), and each document's value is written as the
            record's attribute: a document whose value is not an int is
            refused (ValueError) so that a filter can never silently miss it.
        collection_options: passed to ``db.create_collection`` (e.g.
            ``shard_count``, ``max_degree``, ``code``).

    Scores: ``similarity_search_with_score`` returns the engine's distance
    (smaller is closer): ``1 - cos`` for cosine, squared L2 for l2, ``-dot``
    for ip. ``similarity_search_with_relevance_scores`` maps it to
    "larger is more relevant" by the metric's rule.

    Filters: ``filter={"year": 2026, "tenant": 7}`` on any search keeps
    exactly the documents whose declared `filter_fields` equal those ints
    (the engine filters during the graph search: k results when k match,
    no over-fetch). A ``shoal.Filter`` (labels, ranges, id lists) is passed
    to the engine as it is. A key not in `filter_fields`, or a non-int value,
    raises ``NotImplementedError``: other metadata is stored but not indexed.

    Thread-safety: safe for concurrent use from several threads (LangChain's
    async methods run the sync ones in an executor). Writes of one store are
    serialized by a lock, so that the collision check and the write are one
    step; two stores on the same collection in one process share that lock.
    """

    # (id(db), collection) -> the lock of its writes: see "Thread-safety".
    _locks: dict[tuple[int, str], threading.RLock] = {}
    _locks_guard = threading.Lock()

    def __init__(
        self,
        embedding: Embeddings,
        *,
        path: str | None = None,
        db: Any = None,
        collection: str = "langchain",
        metric: str = "cosine",
        fsync: str = "never",
        filter_fields: Sequence[str] = (),
        collection_options: dict[str, Any] | None = None,
    ) -> None:
        if (path is None) == (db is None):
            raise ValueError("ShoalVectorStore: give exactly one of `path` and `db`")
        if metric not in ("cosine", "l2", "ip"):
            raise ValueError(f"metric must be 'cosine', 'l2' or 'ip', not {metric!r}")
        self._embedding = embedding
        self._owns_db = db is None
        self._db = shoal.open(str(path), fsync=fsync) if db is None else db
        self._name = collection
        self._metric = metric
        self._filter_fields = tuple(filter_fields)
        self._collection_options = dict(collection_options or {})
        with self._locks_guard:
            self._lock = self._locks.setdefault((id(self._db), collection),
                                                threading.RLock())
        self._coll = None  # the shoal Collection, once it exists
        try:
            self._open_collection()
        except BaseException:
            self.close()
            raise

    # ---- Lifecycle ----

    @property
    def embeddings(self) -> Embeddings:
        return self._embedding

    @property
    def db(self) -> Any:
        """The ``shoal.DB`` the documents are in."""
        return self._db

    def close(self) -> None:
        """Closes the database when the store opened it (from `path`): every
        write is then durable. Idempotent."""
        if self._owns_db and not self._db.closed:
            self._db.close()
        self._coll = None

    def __enter__(self) -> ShoalVectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def delete_collection(self) -> None:
        """Drops the collection and all its documents; this store's next add
        makes a new one. Other stores open on the collection then raise
        shoal.NotFoundError until they are made anew."""
        with self._lock:
            if self._collection() is not None:
                self._db.drop_collection(self._name)
            self._coll = None

    def _open_collection(self) -> None:
        if self._name not in self._db.list_collections():
            return
        coll = self._db.collection(self._name)
        if coll.metric != self._metric:
            raise ValueError(
                f"collection {self._name!r} has metric {coll.metric!r}, "
                f"not {self._metric!r}")
        missing = set(self._filter_fields) - set(coll.attributes)
        if missing:
            raise ValueError(
                f"collection {self._name!r} does not declare the attributes "
                f"{sorted(missing)} (it declares {list(coll.attributes)})")
        self._coll = coll

    def _collection(self) -> Any:
        """The collection, or None while nothing was added."""
        if self._db.closed:
            raise shoal.FailedPreconditionError("the store's database is closed")
        if self._coll is None:
            with self._lock:
                if self._coll is None:
                    self._open_collection()
        return self._coll

    def _collection_for(self, dim: int) -> Any:
        """The collection, created with `dim` when absent."""
        coll = self._collection()
        if coll is None:
            with self._lock:
                if self._coll is None:
                    self._coll = self._db.create_collection(
                        self._name, dim, self._metric,
                        attributes=self._filter_fields,
                        **self._collection_options)
                coll = self._coll
        if coll.dim != dim:
            raise ValueError(f"collection {self._name!r} holds vectors of dim "
                             f"{coll.dim}, the embedding gave {dim}")
        return coll

    # ---- Writes ----

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Embeds `texts` and stores them as documents, in one ``put_batch``.

        Returns the documents' ids: `ids[i]` when given, else a new uuid4.
        A given id that is already stored is replaced (text, metadata and
        vector together). Raises ``IdCollisionError`` when an id's key holds
        a document of another id, ValueError on bad metadata; either way
        nothing of the call is written.
        """
        texts = list(texts)
        vectors = self._embedding.embed_documents(texts) if texts else []
        return self.add_embeddings(texts, vectors, metadatas, ids=ids)

    def add_embeddings(
        self,
        texts: Sequence[str],
        embeddings: Sequence[Sequence[float]],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str | None] | None = None,
    ) -> list[str]:
        """``add_texts`` with vectors computed by the caller."""
        n = len(texts)
        if len(embeddings) != n:
            raise ValueError(f"{n} texts but {len(embeddings)} embeddings")
        if metadatas is not None and len(metadatas) != n:
            raise ValueError(f"{n} texts but {len(metadatas)} metadatas")
        if ids is not None and len(ids) != n:
            raise ValueError(f"{n} texts but {len(ids)} ids")
        if n == 0:
            return []
        out_ids = [i if i else str(uuid.uuid4()) for i in (ids or [None] * n)]
        metas = [dict(m or {}) for m in (metadatas or [{}] * n)]
        vectors = np.ascontiguousarray(np.asarray(embeddings, dtype=np.float32))
        if vectors.ndim != 2:
            raise ValueError("embeddings must all have the same length")

        # A later duplicate of an id wins, as a later add would.
        last = {doc_id: i for i, doc_id in enumerate(out_ids)}
        rows = sorted(last.values())
        keys = self._keys([out_ids[i] for i in rows])
        payloads = [_encode_payload(out_ids[i], texts[i], metas[i]) for i in rows]
        attributes = [self._attributes(out_ids[i], metas[i]) for i in rows]
        with self._lock:
            coll = self._collection_for(vectors.shape[1])
            self._check_collisions(coll, keys, [out_ids[i] for i in rows])
            kw: dict[str, Any] = {"payloads": payloads}
            if self._filter_fields:
                kw["attributes"] = attributes
            coll.put_batch(np.asarray(keys, dtype=np.uint64), vectors[rows], **kw)
        return out_ids

    def _keys(self, doc_ids: Sequence[str]) -> list[int]:
        keys = []
        seen: dict[int, str] = {}
        for doc_id in doc_ids:
            if not isinstance(doc_id, str):
                raise TypeError(f"document ids are str, not {type(doc_id).__name__}")
            key = string_id_to_key(doc_id)
            if key == _NO_ID:
                raise IdCollisionError(
                    f"document id {doc_id!r} hashes to shoal's reserved id 2**64-1")
            if seen.setdefault(key, doc_id) != doc_id:
                raise IdCollisionError(
                    f"document ids {seen[key]!r} and {doc_id!r} hash to the same "
                    f"shoal id {key}; nothing was written")
            keys.append(key)
        return keys

    def _check_collisions(self, coll: Any, keys: list[int],
                          doc_ids: list[str]) -> None:
        # REQUIRES: self._lock held (the check and the write are one step).
        records = coll.get_records(np.asarray(keys, dtype=np.uint64), vector=False)
        for key, doc_id, rec in zip(keys, doc_ids, records):
            if rec is None:
                continue
            obj = _decode_payload(rec.payload)
            if obj is None or obj["id"] != doc_id:
                other = "a record not written by ShoalVectorStore" if obj is None \
                    else f"document {obj['id']!r}"
                raise IdCollisionError(
                    f"document id {doc_id!r} maps to shoal id {key}, which holds "
                    f"{other}; nothing was written (give this document another id)")

    def _attributes(self, doc_id: str, metadata: dict[str, Any]) -> dict[str, int]:
        attrs = {}
        for name in self._filter_fields:
            if name not in metadata or metadata[name] is None:
                continue
            value = metadata[name]
            if not isinstance(value, int):
                raise ValueError(
                    f"document {doc_id!r}: filter field {name!r} must be an int, "
                    f"not {type(value).__name__}")
            if not -(2**63) <= value < 2**63:
                raise ValueError(f"document {doc_id!r}: filter field {name!r} "
                                 f"= {value} is outside int64")
            attrs[name] = int(value)
        return attrs

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Deletes the documents of `ids`; absent ids are ignored. Returns True.

        `ids=None` raises ValueError (use ``delete_collection`` to remove
        everything): deleting all by mistake is not undone.
        """
        if ids is None:
            raise ValueError("delete needs ids; delete_collection() removes all")
        ids = list(ids)
        with self._lock:
            coll = self._collection()
            if coll is None or not ids:
                return True
            for key, _ in self._find(coll, ids):
                coll.delete(key)
        return True

    # ---- Reads ----

    def _find(self, coll: Any, doc_ids: Sequence[str]) -> Iterator[tuple[int, dict]]:
        """(key, payload object) of each stored document of `doc_ids`, in
        their order; absent ones and keys holding another id are skipped."""
        for doc_id in doc_ids:
            if not isinstance(doc_id, str):
                raise TypeError(f"document ids are str, not {type(doc_id).__name__}")
        keys = [string_id_to_key(i) for i in doc_ids]
        records = coll.get_records(np.asarray(keys, dtype=np.uint64), vector=False)
        for key, doc_id, rec in zip(keys, doc_ids, records):
            if rec is None:
                continue
            obj = _decode_payload(rec.payload)
            if obj is not None and obj["id"] == doc_id:
                yield key, obj

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The stored documents of `ids`, in the order of `ids`; absent ids
        are skipped (no error)."""
        coll = self._collection()
        if coll is None or not ids:
            return []
        return [_to_document(obj) for _, obj in self._find(coll, list(ids))]

    def _search(self, vector: Sequence[float], k: int, filter: Any,
                list_size: int | None) -> list[tuple[Document, float, Any]]:
        """(document, distance, record) of the k nearest, closest first."""
        coll = self._collection()
        if coll is None or k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        kw: dict[str, Any] = {}
        if list_size is not None:
            kw["list_size"] = list_size
        engine_filter = self._engine_filter(filter)
        if engine_filter is not None:
            kw["filter"] = engine_filter
        keys, distances = coll.search(q, k, **kw)
        if len(keys) == 0:
            return []
        records = coll.get_records(np.asarray(keys, dtype=np.uint64))
        hits = []
        for dist, rec in zip(distances.tolist(), records):
            obj = None if rec is None else _decode_payload(rec.payload)
            if obj is not None:  # None: deleted since the search, or not ours
                hits.append((_to_document(obj), float(dist), rec))
        return hits

    def _engine_filter(self, filter: Any) -> Any:
        if filter is None or isinstance(filter, shoal.Filter):
            return filter
        if not isinstance(filter, dict):
            raise NotImplementedError(
                "filter must be a dict {field: int} over filter_fields, or a "
                f"shoal.Filter, not {type(filter).__name__}")
        result = None
        for name, value in filter.items():
            if name not in self._filter_fields:
                raise NotImplementedError(
                    f"filter on {name!r}: only the store's filter_fields "
                    f"{list(self._filter_fields)} are indexed (exact equality "
                    "on ints); declare it when the collection is created")
            if not isinstance(value, int):
                raise NotImplementedError(
                    f"filter on {name!r}: only int equality is supported, "
                    f"not {value!r}")
            if value == 2**63 - 1:
                term = shoal.at_least(name, value)
            else:
                term = shoal.range(name, value, value + 1)
            result = term if result is None else result & term
        return result

    def similarity_search_with_score_by_vector(
        self, embedding: Sequence[float], k: int = 4, *, filter: Any = None,
        list_size: int | None = None, **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """The k documents nearest `embedding` with their distances (smaller
        is closer), closest first; fewer when the store holds fewer.
        `list_size` is the engine's search breadth (default 100)."""
        return [(doc, dist) for doc, dist, _ in
                self._search(embedding, k, filter, list_size)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """``similarity_search_with_score_by_vector`` of `query`'s embedding."""
        if self._collection() is None:
            return []
        return self.similarity_search_with_score_by_vector(
            self._embedding.embed_query(query), k, **kwargs)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        return [doc for doc, _ in
                self.similarity_search_with_score_by_vector(embedding, k, **kwargs)]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        if self._metric == "cosine":
            return self._cosine_relevance_score_fn  # 1 - distance = cos
        if self._metric == "ip":
            return self._max_inner_product_relevance_score_fn
        # LangChain's Euclidean rule wants the L2 norm; shoal gives its square.
        return lambda d: self._euclidean_relevance_score_fn(float(np.sqrt(max(d, 0.0))))

    def max_marginal_relevance_search_by_vector(
        self, embedding: list[float], k: int = 4, fetch_k: int = 20,
        lambda_mult: float = 0.5, *, filter: Any = None,
        list_size: int | None = None, **kwargs: Any,
    ) -> list[Document]:
        """MMR over the `fetch_k` nearest documents (with `filter`)."""
        hits = self._search(embedding, max(fetch_k, k), filter, list_size)
        if not hits:
            return []
        chosen = maximal_marginal_relevance(
            np.asarray(embedding, dtype=np.float32),
            [np.asarray(rec.vector, dtype=np.float32) for _, _, rec in hits],
            k=k, lambda_mult=lambda_mult)
        return [hits[i][0] for i in chosen]

    def max_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5,
        **kwargs: Any,
    ) -> list[Document]:
        if self._collection() is None:
            return []
        return self.max_marginal_relevance_search_by_vector(
            self._embedding.embed_query(query), k, fetch_k, lambda_mult, **kwargs)

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> ShoalVectorStore:
        """A store (constructor keywords in `kwargs`: `path` or `db`,
        `collection`, ...) holding `texts`."""
        store = cls(embedding, **kwargs)
        try:
            store.add_texts(texts, metadatas, ids=ids)
        except BaseException:
            store.close()
            raise
        return store

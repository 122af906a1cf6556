"""The pure-Python result types: a record read back, a batch's results."""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np


class Record:
    """A record read back by Collection.get_record / get_records.

    id: int; vector: (dim,) float32 (normalized under cosine; None when read
    with vector=False); labels: sorted
    list of int; attributes: dict of attribute name -> int; payload: bytes
    (b"" when none; ``record.text`` decodes it as UTF-8).
    """

    __slots__ = ("id", "vector", "labels", "attributes", "payload")

    def __init__(self, id: int, vector: Optional[np.ndarray], labels: List[int],
                 attributes: Dict[str, int], payload: bytes) -> None:
        self.id = id
        self.vector = vector
        self.labels = labels
        self.attributes = attributes
        self.payload = payload

    @property
    def text(self) -> str:
        """The payload decoded as UTF-8."""
        return self.payload.decode("utf-8")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        same_vector = (self.vector is None and other.vector is None) or (
            self.vector is not None and other.vector is not None
            and np.array_equal(self.vector, other.vector))
        return (self.id == other.id and same_vector
                and self.labels == other.labels and self.attributes == other.attributes
                and self.payload == other.payload)

    def __repr__(self) -> str:
        payload = self.payload if len(self.payload) <= 40 else self.payload[:40] + b"..."
        vector = "None" if self.vector is None else f"<{self.vector.shape[0]} floats>"
        return (f"shoal.Record(id={self.id}, vector={vector}, "
                f"labels={self.labels}, attributes={self.attributes}, payload={payload!r})")


class SearchResults(tuple):
    """What search_batch returns: unpacks as ``(ids, distances)``.

    ids: (n, k) uint64; distances: (n, k) float32; row i belongs to query i,
    nearest first. A row with fewer than k results (fewer records, or fewer
    matches of the filter, than k) is padded at its end with id
    ``shoal.NO_ID`` (2**64 - 1) and distance ``inf`` (a k above 65536: the
    arrays are only as wide as the longest row); ``counts`` ((n,) int64)
    gives each row's number of results.
    """

    def __new__(cls, ids: np.ndarray, distances: np.ndarray, counts: np.ndarray) -> "SearchResults":
        self = super().__new__(cls, (ids, distances))
        self.counts = counts
        return self

    @property
    def ids(self) -> np.ndarray:
        return self[0]

    @property
    def distances(self) -> np.ndarray:
        return self[1]

    def __repr__(self) -> str:
        return f"shoal.SearchResults(queries={self[0].shape[0]}, k={self[0].shape[1]})"

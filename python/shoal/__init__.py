"""shoal: a sharded, durable, embedded vector database.

    import numpy as np, shoal

    with shoal.open("/tmp/db", dim=128, metric="cosine") as db:
        db.put_batch(np.arange(1000), np.random.rand(1000, 128).astype(np.float32))
        ids, distances = db.search(np.random.rand(128).astype(np.float32), k=10)

Every write is in a checksummed write-ahead log and searchable when the call
returns. The C++ library is the product; this package is a thin layer over
it (nanobind): numpy arrays in and out, float32 input read without a copy,
the GIL released in every call that does I/O or searches.
"""

from ._results import Record, SearchResults
from ._shoal import (
    DB,
    NO_ID,
    AlreadyExistsError,
    Collection,
    DataLossError,
    Error,
    ExportIterator,
    FailedPreconditionError,
    Filter,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    SegmentWriter,
    StorageError,
    all_labels,
    any_label,
    at_least,
    below,
    ids,
    no_label,
    open,
    range,
)

__version__ = "0.1.0"

__all__ = [
    "DB",
    "NO_ID",
    "AlreadyExistsError",
    "Collection",
    "DataLossError",
    "Error",
    "ExportIterator",
    "FailedPreconditionError",
    "Filter",
    "InvalidArgumentError",
    "NotFoundError",
    "PermissionDeniedError",
    "Record",
    "ResourceExhaustedError",
    "SearchResults",
    "SegmentWriter",
    "StorageError",
    "all_labels",
    "any_label",
    "at_least",
    "below",
    "ids",
    "no_label",
    "open",
    "range",
]

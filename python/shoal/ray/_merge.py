"""The exact merge of the parts' top-k into the collection's top-k.

Every part returns its own k nearest (nearest first, ties by id), so the
collection's k nearest are among their union: sorting the union by
(distance, id) and keeping k gives exactly what one database holding all
the records would return from the same per-part answers. Padding (id
``shoal.NO_ID``, distance inf) sorts after every result.
"""

from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

import shoal

# search_batch pads rows to k up to this k; above it, to the longest row
# (the binding's kMaxPaddedWidth).
MAX_PADDED_WIDTH = 65536


def merge_one(parts: Sequence[Tuple[np.ndarray, np.ndarray]], k: int
              ) -> Tuple[np.ndarray, np.ndarray]:
    """search's answer from each part's (ids, distances): (ids, distances)
    of length min(k, total), nearest first, ties by id."""
    ids = np.concatenate([p[0] for p in parts]).astype(np.uint64, copy=False)
    distances = np.concatenate([p[1] for p in parts]).astype(np.float32, copy=False)
    order = np.lexsort((ids, distances))[:k]
    return ids[order], distances[order]


def merge_batch(parts: Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray]], n: int, k: int
                ) -> shoal.SearchResults:
    """search_batch's answer from each part's (ids, distances, counts):
    (n, k) arrays padded after each row's results, and the rows' counts."""
    counts = np.minimum(np.sum([p[2] for p in parts], axis=0, dtype=np.int64), k)
    width = k
    if k > MAX_PADDED_WIDTH:
        width = int(counts.max()) if n else 0
    ids = np.concatenate([p[0] for p in parts], axis=1)
    distances = np.concatenate([p[1] for p in parts], axis=1)
    # Each part's rows are at least as wide as its counts, so the union is
    # at least `width` wide.
    if len(parts) == 1 and ids.shape[1] == width:
        return shoal.SearchResults(np.array(ids), np.array(distances), counts)
    order = np.lexsort((ids, distances), axis=1)[:, :width]
    return shoal.SearchResults(np.take_along_axis(ids, order, axis=1),
                               np.take_along_axis(distances, order, axis=1), counts)

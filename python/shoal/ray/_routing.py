"""Which part owns an id, and a batch split into its parts' rows.

The part of an id is ``splitmix64(id) % n_parts``: fixed forever for a
served collection (its layout file names the rule), so a restarted or
reopened collection finds every id where it was written.

Why not ``id % n``: ids are often sequential or strided (``10 * doc +
chunk``, only even ids, ...), which ``%`` maps onto the parts unevenly.
Why not the engine's own hash (xxh3, which picks a shard inside a part):
a part would then receive only ids whose xxh3 is, say, even, and with an
even shard count inside the part half of its shards would stay empty.
splitmix64's finalizer is independent of xxh3, mixes every bit, and costs a
few numpy operations over a whole batch.
"""

from __future__ import annotations

import operator
from typing import Any, List, Tuple

import numpy as np

import shoal

ROUTING = "splitmix64"  # the rule's name in the layout file

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(ids: np.ndarray) -> np.ndarray:
    """splitmix64's output for each uint64 in `ids` (a new uint64 array)."""
    z = np.asarray(ids, dtype=np.uint64) + _GAMMA  # uint64 arrays wrap mod 2**64
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def part_of(ids: np.ndarray, n_parts: int) -> np.ndarray:
    """The part (an int64 in [0, n_parts)) of each id of `ids` ((n,) uint64)."""
    return (splitmix64(ids) % np.uint64(n_parts)).astype(np.int64)


def part_of_id(id: int, n_parts: int) -> int:
    """The part of one id."""
    return int(part_of(np.array([id], dtype=np.uint64), n_parts)[0])


def as_ids(ids: Any) -> np.ndarray:
    """`ids` as a (n,) uint64 array, by the binding's rules: uint64 as is,
    non-negative ints of other widths converted, a negative id raises
    InvalidArgumentError, floats TypeError."""
    a = np.asarray(ids)
    if a.ndim != 1:
        raise shoal.InvalidArgumentError(f"ids must be a (n,) array, got shape {a.shape}")
    if a.dtype == np.uint64:
        return a
    if a.size == 0:
        return np.empty(0, dtype=np.uint64)
    if a.dtype.kind == "u":
        return a.astype(np.uint64)
    if a.dtype.kind == "i":
        if a.min() < 0:
            raise shoal.InvalidArgumentError(
                f"ids must be in [0, 2**64), got {int(a.min())}")
        return a.astype(np.uint64)
    if a.dtype.kind == "O":  # Python ints beyond int64
        return np.array([as_id(i) for i in a.tolist()], dtype=np.uint64)
    raise TypeError(f"ids must be integers, got dtype {a.dtype}")


def as_id(id: Any) -> int:
    """One id as an int in [0, 2**64): TypeError for a non-integer,
    InvalidArgumentError out of range."""
    try:
        value = operator.index(id)
    except TypeError:
        raise TypeError(f"id must be an int, got {type(id).__name__}") from None
    if not 0 <= value < 2**64:
        raise shoal.InvalidArgumentError(f"id must be in [0, 2**64), got {value}")
    return value


def split(parts: np.ndarray, n_parts: int) -> List[Tuple[int, np.ndarray]]:
    """(part, row indices) for each part that has rows, the rows of a part in
    their order in the batch (a stable sort: a later row of a repeated id
    stays later, so it still wins)."""
    order = np.argsort(parts, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(parts, minlength=n_parts))))
    return [(p, order[bounds[p]:bounds[p + 1]])
            for p in range(n_parts) if bounds[p + 1] > bounds[p]]


def take(rows: Any, index: np.ndarray, n: int, what: str) -> Any:
    """The rows `index` of a per-row argument (None, an array, or a sequence
    of n items); a dict of name -> n values (put_batch's columnar
    attributes) is taken column by column."""
    if rows is None:
        return None
    if isinstance(rows, dict):
        return {name: take(col, index, n, f"{what}[{name!r}]") for name, col in rows.items()}
    if len(rows) != n:
        raise shoal.InvalidArgumentError(f"{what} has {len(rows)} entries, ids has {n}")
    if isinstance(rows, np.ndarray):
        return rows[index]
    return [rows[i] for i in index.tolist()]

"""A build's input as a Ray Dataset (e.g. ``ray.data.read_parquet``): the
columns that hold the records' parts, checked against the collection, and
each block turned into the rows a task gives its SegmentWriter.

Columns (``Columns``; Arrow types, as ``Dataset.schema()`` shows them):

    vector      a fixed-size list of floats of the collection's dim, a Ray
                tensor column of shape (dim,), or a list of floats that has
                dim values in every row; never null. Other floats than
                float32 are converted.
    id          integers in [0, 2**64); never null. Required: a distributed
                dataset has no row numbers that are the same from one
                execution to the next.
    labels      (optional) a list of integers in [0, 2**32); null: none.
    attributes  (optional) one integer column an attribute; null: absent.
    payload     (optional) binary or string (kept as UTF-8); null: none.

How a block travels (``_build`` drives it): Ray Data reads the dataset in
its own tasks, only these columns (``select_columns``, pushed down into a
Parquet read) and in the dataset's order (``preserve_order``), into Arrow
tables in the object store (``to_arrow_refs``); a routing task a block
(``route``, run where the block is) splits it into one piece a build task,
the rows that task keeps; each build task receives only its pieces.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import ray
import ray.data

import shoal

from ._plan import Task, kept
from ._routing import as_ids

Chunk = Tuple[np.ndarray, np.ndarray, Dict[str, Any]]  # ids, vectors, writer.add keywords

_ATTRIBUTE = "attribute:"  # a piece's column of an attribute: "attribute:<name>"


@dataclasses.dataclass(frozen=True)
class Columns:
    """Which column of the dataset holds which part of the records."""

    vector: str
    id: str
    labels: Optional[str]
    attributes: Tuple[Tuple[str, str], ...]  # (attribute name, column)
    payload: Optional[str]
    dim: int  # the collection's

    def names(self) -> List[str]:
        """The columns read, each once, in a fixed order."""
        named = [self.vector, self.id, self.labels, *(c for _, c in self.attributes),
                 self.payload]
        return list(dict.fromkeys(c for c in named if c is not None))


def columns_of(vector: Optional[str], id: Optional[str], labels: Optional[str],
               attributes: Union[None, Mapping[str, str], Sequence[str]],
               payload: Optional[str], dim: int, declared: Sequence[str]) -> Columns:
    """The build's column keywords as Columns (vector None: "vector", id
    None: "id"; attributes a mapping of attribute -> column, or a list of
    columns named as the attributes). InvalidArgumentError for an attribute
    the collection does not declare."""
    if attributes is None:
        pairs: Tuple[Tuple[str, str], ...] = ()
    elif isinstance(attributes, Mapping):
        pairs = tuple((str(a), str(c)) for a, c in attributes.items())
    elif isinstance(attributes, str):
        raise TypeError("attribute_columns: a mapping or a list of column names, not one str")
    else:
        pairs = tuple((str(c), str(c)) for c in attributes)
    unknown = [a for a, _ in pairs if a not in declared]
    if unknown:
        raise shoal.InvalidArgumentError(
            f"attribute_columns: {unknown} are not declared by the collection "
            f"(it declares {list(declared)})")
    return Columns(vector or "vector", id or "id", labels, pairs, payload, dim)


def _problem(kind: str, t: pa.DataType, dim: int) -> Optional[str]:
    """Why a column of type `t` cannot hold `kind` ("vector", "id",
    "labels", "attribute", "payload"); None when it can."""
    if kind == "vector":
        if isinstance(t, pa.ExtensionType):  # a Ray tensor column
            shape = getattr(t, "shape", None)
            if shape is None or len(shape) != 1:
                return f"a tensor column of shape {shape}, ({dim},) expected"
            if shape[0] != dim:
                return f"vectors of dim {shape[0]}, the collection's dim is {dim}"
            t = t.storage_type
        if pa.types.is_fixed_size_list(t) and t.list_size != dim:
            return f"vectors of dim {t.list_size}, the collection's dim is {dim}"
        if not (pa.types.is_fixed_size_list(t) or pa.types.is_list(t)
                or pa.types.is_large_list(t)) or not pa.types.is_floating(t.value_type):
            return f"type {t}, a list of floats expected"
    elif kind in ("id", "attribute"):
        if not pa.types.is_integer(t):
            return f"type {t}, integers expected"
    elif kind == "labels":
        if not ((pa.types.is_list(t) or pa.types.is_large_list(t)
                 or pa.types.is_fixed_size_list(t)) and pa.types.is_integer(t.value_type)):
            return f"type {t}, a list of integers expected"
    elif not (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_string(t)
              or pa.types.is_large_string(t)):
        return f"type {t}, binary or string expected"
    return None


def _kinds(columns: Columns) -> List[Tuple[str, str]]:
    """(kind, column) of every part read."""
    out = [("vector", columns.vector), ("id", columns.id)]
    out += [("labels", columns.labels)] if columns.labels else []
    out += [("attribute", c) for _, c in columns.attributes]
    out += [("payload", columns.payload)] if columns.payload else []
    return out


def check(ds: "ray.data.Dataset", columns: Columns) -> None:
    """Checks the dataset's schema (read from the files' metadata for
    Parquet: nothing else is read) against `columns`:
    InvalidArgumentError naming the column. A schema that Ray Data cannot
    tell without running the dataset, or a type that is not Arrow's
    (pandas objects), is checked block by block instead (``canonical``)."""
    schema = ds.schema()
    if schema is None:
        return
    types = dict(zip(schema.names, schema.types))
    missing = [c for c in columns.names() if c not in types]
    if missing:
        raise shoal.InvalidArgumentError(
            f"the dataset has no column {missing[0]!r} (its columns: {list(schema.names)})")
    for kind, name in _kinds(columns):
        t = types[name]
        why = _problem(kind, t, columns.dim) if isinstance(t, pa.DataType) else None
        if why:
            raise shoal.InvalidArgumentError(f"column {name!r} ({kind}): {why}")


def blocks(ds: "ray.data.Dataset", columns: Columns) -> List["ray.ObjectRef"]:
    """Runs the dataset (in Ray Data's tasks, only `columns`' columns, in
    the dataset's order) into Arrow tables in the object store: their refs,
    in order. No block passes through this process."""
    projected = ds.select_columns(columns.names())
    # Transforms share their parent's context (the user's): set, then put
    # back. (Ray before Dataset.context ran on the current context.)
    context = getattr(projected, "context", None) or ray.data.DataContext.get_current()
    options = context.execution_options
    before = options.preserve_order
    options.preserve_order = True
    try:
        return projected.to_arrow_refs()
    finally:
        options.preserve_order = before


def _vectors(col: pa.ChunkedArray, name: str, dim: int) -> pa.Array:
    """The column as a fixed_size_list<float32>[dim] array."""
    arr = col.combine_chunks()
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    if arr.null_count:
        row = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise shoal.InvalidArgumentError(f"column {name!r}: row {row} of a block has no vector")
    if not pa.types.is_fixed_size_list(arr.type):
        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(lengths != dim)
        if bad.size:
            raise shoal.InvalidArgumentError(
                f"column {name!r}: row {int(bad[0])} of a block has a vector of dim "
                f"{int(lengths[bad[0]])}, the collection's dim is {dim}")
    values = pc.cast(arr.flatten(), pa.float32(), safe=False)
    return pa.FixedSizeListArray.from_arrays(values, dim)


def canonical(block: pa.Table, columns: Columns) -> pa.Table:
    """The block's records under fixed names ("id" uint64, "vector",
    "labels", "attribute:<name>", "payload"), checked: InvalidArgumentError
    naming the column."""
    for kind, name in _kinds(columns):
        if name not in block.column_names:
            raise shoal.InvalidArgumentError(f"a block of the dataset has no column {name!r}")
        why = _problem(kind, block.schema.field(name).type, columns.dim)
        if why:
            raise shoal.InvalidArgumentError(f"column {name!r} ({kind}): {why}")
    ids = block[columns.id]
    if ids.null_count:
        raise shoal.InvalidArgumentError(f"column {columns.id!r}: a row has no id (null)")
    out = {"id": pa.array(as_ids(ids.to_numpy()), pa.uint64()),
           "vector": _vectors(block[columns.vector], columns.vector, columns.dim)}
    if columns.labels:
        out["labels"] = block[columns.labels]
    for attribute, name in columns.attributes:
        out[_ATTRIBUTE + attribute] = block[name]
    if columns.payload:
        out["payload"] = block[columns.payload]
    return pa.table(out)


def route(block: pa.Table, index: int, columns: Columns, tasks: Sequence[Task],
          shard_counts: Sequence[int]) -> Any:
    """A routing task: block number `index` split into one piece a task
    (the rows it keeps, in the block's order; None for a task whose range
    has not this block). One piece alone when there is one task (Ray's
    num_returns=1 returns the value itself)."""
    table = canonical(block, columns)
    ids = table["id"].to_numpy()
    pieces = []
    for task in tasks:
        if not task.start <= index < task.stop:
            pieces.append(None)
            continue
        keep = kept(ids, task, len(shard_counts), shard_counts[task.part])
        pieces.append(table if keep is None else table.filter(pa.array(keep)))
    return pieces[0] if len(pieces) == 1 else tuple(pieces)


def chunks(pieces: Sequence[Optional[pa.Table]]) -> Iterator[Chunk]:
    """The pieces of a task as SegmentWriter.add's arguments, in order."""
    for piece in pieces:
        if piece is None or piece.num_rows == 0:
            continue
        vectors = piece["vector"].combine_chunks()
        dim = vectors.type.list_size
        parts: Dict[str, Any] = {}
        if "labels" in piece.column_names:
            parts["labels"] = piece["labels"].to_pylist()
        attributes = {name[len(_ATTRIBUTE):]: _values(piece[name])
                      for name in piece.column_names if name.startswith(_ATTRIBUTE)}
        if attributes:
            parts["attributes"] = attributes
        if "payload" in piece.column_names:
            parts["payloads"] = piece["payload"].to_pylist()
        yield (piece["id"].to_numpy(),
               vectors.flatten().to_numpy().reshape(piece.num_rows, dim), parts)


def _values(col: pa.ChunkedArray) -> Any:
    """An attribute column as put_batch takes it (None: absent)."""
    return col.to_pylist() if col.null_count else col.to_numpy()

"""A build's input on disk: vectors in a ``.npy`` or ``.fbin`` file, ids
in a ``.npy`` file or numbered from ``first_id``.

A ``Source`` is a small picklable description (paths, shape, where the
rows start): the driver checks it once, and each Ray task opens the files
itself through numpy's memmap and reads only the rows it asks for, so no
vector passes through the driver or the object store.

    .npy    a 2-D float array (float32 read as is; other floats converted
            a chunk at a time), C order
    .fbin   n:uint32 dim:uint32, then n * dim float32 (big-ann-benchmarks)
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, Iterator, Optional, Tuple

import numpy as np

import shoal

from ._plan import Task, kept
from ._routing import as_ids

CHUNK_ROWS = 65536  # rows a task reads, routes and adds at a time


@dataclasses.dataclass(frozen=True)
class Source:
    path: str
    rows: int
    dim: int
    offset: int  # bytes before the first row
    dtype: str
    ids_path: Optional[str]  # a .npy of (rows,) integer ids, or None
    first_id: int  # ids are first_id + row when ids_path is None

    def vectors(self) -> np.ndarray:
        """The (rows, dim) array, mapped (nothing read yet)."""
        return np.memmap(self.path, dtype=self.dtype, mode="r", offset=self.offset,
                         shape=(self.rows, self.dim))

    def ids(self, start: int, stop: int) -> np.ndarray:
        """The ids of rows [start, stop) as uint64."""
        if self.ids_path is None:
            return np.arange(self.first_id + start, self.first_id + stop, dtype=np.uint64)
        return as_ids(np.load(self.ids_path, mmap_mode="r")[start:stop])

    def rows_of(self, start: int, stop: int) -> Tuple[np.ndarray, np.ndarray]:
        """(ids, float32 C-contiguous vectors) of rows [start, stop)."""
        v = np.ascontiguousarray(self.vectors()[start:stop], dtype=np.float32)
        return self.ids(start, stop), v

    def chunks(self, task: Task, n_parts: int, shard_count: int
               ) -> Iterator[Tuple[np.ndarray, np.ndarray, Dict[str, Any]]]:
        """The rows `task` keeps of its range, as SegmentWriter.add's
        arguments (no records' parts: a file holds ids and vectors only),
        CHUNK_ROWS rows read at a time."""
        vectors = self.vectors()
        for a in range(task.start, task.stop, CHUNK_ROWS):
            b = min(task.stop, a + CHUNK_ROWS)
            ids = self.ids(a, b)
            keep = kept(ids, task, n_parts, shard_count)
            rows = vectors[a:b] if keep is None else vectors[a:b][keep]
            if len(rows):
                yield (ids if keep is None else ids[keep],
                       np.ascontiguousarray(rows, dtype=np.float32), {})


def _npy_header(path: str) -> Tuple[Tuple[int, ...], np.dtype, bool, int]:
    """(shape, dtype, Fortran order, offset of the data) of a .npy file."""
    a = np.load(path, mmap_mode="r")  # reads the header only
    fortran = a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous
    return a.shape, a.dtype, fortran, a.offset


def _vectors_header(path: str) -> Tuple[int, int, int, str]:
    """(rows, dim, offset, dtype) of a .npy or .fbin file."""
    if path.endswith(".fbin"):
        head = np.fromfile(path, dtype=np.uint32, count=2)
        if len(head) != 2:
            raise shoal.InvalidArgumentError(f"{path}: shorter than an .fbin header")
        rows, dim = int(head[0]), int(head[1])
        if os.path.getsize(path) != 8 + 4 * rows * dim:
            raise shoal.InvalidArgumentError(
                f"{path}: {os.path.getsize(path)} bytes, an .fbin of {rows} x {dim} float32 "
                f"has {8 + 4 * rows * dim}")
        return rows, dim, 8, "float32"
    if path.endswith(".npy"):
        shape, dtype, fortran, offset = _npy_header(path)
        if len(shape) != 2 or fortran or dtype.kind != "f":
            raise shoal.InvalidArgumentError(
                f"{path}: a 2-D float array in C order expected, got shape {shape}, "
                f"dtype {dtype}{', Fortran order' if fortran else ''}")
        return shape[0], shape[1], offset, dtype.str
    raise shoal.InvalidArgumentError(f"{path}: a .npy or .fbin file expected")


def open_source(path: str, ids: Optional[str], first_id: int, dim: int) -> Source:
    """Checks the files against a collection of dimension `dim`
    (InvalidArgumentError naming the file) and describes them."""
    path = os.path.abspath(os.fspath(path))
    rows, file_dim, offset, dtype = _vectors_header(path)
    if file_dim != dim:
        raise shoal.InvalidArgumentError(
            f"{path}: vectors of dim {file_dim}, the collection's dim is {dim}")
    ids_path = None
    if ids is not None:
        ids_path = os.path.abspath(os.fspath(ids))
        shape, dtype_ids, _, _ = _npy_header(ids_path)
        if shape != (rows,) or dtype_ids.kind not in "iu":
            raise shoal.InvalidArgumentError(
                f"{ids_path}: ({rows},) integer ids expected for {path}, got shape {shape}, "
                f"dtype {dtype_ids}")
    elif first_id < 0 or first_id + rows > 2**64:
        raise shoal.InvalidArgumentError(f"first_id {first_id}: ids out of [0, 2**64)")
    return Source(path, rows, dim, offset, dtype, ids_path, first_id)

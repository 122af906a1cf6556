# Copyright 2026 The shoal Authors.
"""Vector files and exact ground truth for the head-to-head.

Formats read (all little-endian, float32 rows):
  .fbin   n:uint32 dim:uint32 then n*dim float32 (comprehensive_bench's export)
  .ibin   the same header, int32 elements (groundtruth.ibin: ids, nearest first)
  .npy    a 2-D numpy array (any float dtype; converted to float32 once)
  .fvecs  per row: dim:int32 then dim float32 (the TEXMEX / ann-benchmarks files)

Every malformed file raises DataError with the path and what is wrong; the
command line turns that into a one-line message, not a traceback.

Distances follow shoal's definitions, smaller is closer: l2 is the squared
Euclidean distance, ip the negated inner product, cosine 1 - cos (computed as
l2 over unit vectors, which orders neighbours the same way).
"""

import hashlib
import json
import os

import numpy as np

METRICS = ("l2", "ip", "cosine")
FORMATS = (".fbin", ".npy", ".fvecs")


class DataError(Exception):
    """A data file that is missing, malformed or inconsistent with another."""


def _fmt_of(path):
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise DataError(f"{path}: unknown extension {ext!r}; want one of {', '.join(FORMATS)}")
    return ext


def _read_bin(path, dtype, max_rows):
    """A .fbin/.ibin file: n:u32 dim:u32 then n*dim elements of `dtype`."""
    size = os.path.getsize(path)
    if size < 8:
        raise DataError(f"{path}: {size} bytes, shorter than the 8-byte header")
    n, d = (int(x) for x in np.fromfile(path, dtype=np.uint32, count=2))
    if d == 0:
        raise DataError(f"{path}: header says dim 0")
    want = 8 + n * d * 4
    if size != want:
        raise DataError(f"{path}: {size} bytes, but the header ({n} x {d}) needs {want}")
    rows = n if max_rows is None else min(n, max_rows)
    data = np.fromfile(path, dtype=dtype, count=rows * d, offset=8)
    return data.reshape(rows, d), n


def _read_fvecs(path, max_rows):
    size = os.path.getsize(path)
    if size < 4:
        raise DataError(f"{path}: {size} bytes, too short for an .fvecs row")
    d = int(np.fromfile(path, dtype=np.int32, count=1)[0])
    if d <= 0 or size % (4 * (d + 1)) != 0:
        raise DataError(f"{path}: first row says dim {d}, which does not divide the "
                        f"file's {size} bytes into rows of 4 * (dim + 1)")
    n = size // (4 * (d + 1))
    rows = n if max_rows is None else min(n, max_rows)
    raw = np.fromfile(path, dtype=np.int32, count=rows * (d + 1)).reshape(rows, d + 1)
    bad = np.flatnonzero(raw[:, 0] != d)
    if bad.size:
        raise DataError(f"{path}: row {bad[0]} says dim {raw[bad[0], 0]}, row 0 says {d}")
    return np.ascontiguousarray(raw[:, 1:]).view(np.float32), n


def _read_npy(path, max_rows):
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as e:
        raise DataError(f"{path}: not a readable .npy file ({e})") from None
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise DataError(f"{path}: want a 2-D array (rows, dim), got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        raise DataError(f"{path}: want a float array, got dtype {arr.dtype}")
    n = arr.shape[0]
    rows = n if max_rows is None else min(n, max_rows)
    return np.ascontiguousarray(arr[:rows], dtype=np.float32), n


def read_vectors(path, max_rows=None):
    """(vectors float32 (rows, dim) C-contiguous, rows in the file). Reads the
    first max_rows rows when given (the caller says so; never silently)."""
    if not os.path.isfile(path):
        raise DataError(f"{path}: no such file")
    ext = _fmt_of(path)
    if ext == ".fbin":
        vecs, n = _read_bin(path, np.float32, max_rows)
    elif ext == ".fvecs":
        vecs, n = _read_fvecs(path, max_rows)
    else:
        vecs, n = _read_npy(path, max_rows)
    if vecs.shape[0] == 0:
        raise DataError(f"{path}: holds no vectors")
    if not np.isfinite(vecs).all():
        row = int(np.flatnonzero(~np.isfinite(vecs).all(axis=1))[0])
        raise DataError(f"{path}: row {row} holds a NaN or infinite value")
    return vecs, n


def read_truth(path):
    """groundtruth.ibin: int64 (q, k) ids, nearest first."""
    if not os.path.isfile(path):
        raise DataError(f"{path}: no such file")
    ids, _ = _read_bin(path, np.int32, None)
    return ids.astype(np.int64)


def write_ibin(path, ids):
    """Writes int32 ids (q, k) as .ibin, atomically (a temp file renamed)."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.array(ids.shape, dtype=np.uint32).tofile(f)
        ids.astype(np.int32).tofile(f)
    os.replace(tmp, path)


def normalized(x):
    """Rows scaled to unit length (zero rows stay zero), float32."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1)).astype(np.float32)


def exact_knn(base, queries, metric, k, block=16384):
    """Exact k nearest base rows of every query under `metric`, nearest first:
    int64 (q, k). Scans the base in blocks of `block` rows keeping a running
    top-k, so memory is O(q * (block + k)); distances in float64 for queries
    of up to 1024 at a time, so near-ties are ordered as the engines order them
    in all but the last bits."""
    if metric == "cosine":
        base, queries = normalized(base), normalized(queries)
    k = min(k, base.shape[0])
    out = np.empty((queries.shape[0], k), dtype=np.int64)
    for qs in range(0, queries.shape[0], 1024):
        q = queries[qs:qs + 1024].astype(np.float64)
        best_d = np.full((q.shape[0], 0), np.inf)
        best_i = np.empty((q.shape[0], 0), dtype=np.int64)
        for bs in range(0, base.shape[0], block):
            b = base[bs:bs + block].astype(np.float64)
            if metric == "ip":
                d = -(q @ b.T)
            else:
                d = (b * b).sum(1)[None, :] - 2 * (q @ b.T)  # + |q|^2, same order
            d = np.concatenate([best_d, d], axis=1)
            i = np.concatenate([best_i, np.broadcast_to(
                np.arange(bs, bs + b.shape[0]), (q.shape[0], b.shape[0]))], axis=1)
            keep = np.argpartition(d, k - 1, axis=1)[:, :k] if d.shape[1] > k else \
                np.broadcast_to(np.arange(d.shape[1]), d.shape)
            best_d = np.take_along_axis(d, keep, 1)
            best_i = np.take_along_axis(i, keep, 1)
        # nearest first, ties by id (export_dataset.h's order)
        order = np.lexsort((best_i, best_d), axis=1)
        out[qs:qs + q.shape[0]] = np.take_along_axis(best_i, order, 1)
    return out


def _fingerprint(path, rows):
    st = os.stat(path)
    return {"file": os.path.abspath(path), "bytes": st.st_size,
            "mtime_ns": st.st_mtime_ns, "rows": rows}


def cached_truth(base_path, base, query_path, queries, metric, k, log=print):
    """Exact truth for (base, queries), cached next to the query file as
    <query>.<metric>.k<k>.<hash>.gt.ibin with a .json saying what it was
    computed from; recomputed when the base or query file changed."""
    key = {"base": _fingerprint(base_path, base.shape[0]),
           "query": _fingerprint(query_path, queries.shape[0]), "metric": metric, "k": k}
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
    path = f"{query_path}.{metric}.k{k}.{digest}.gt.ibin"
    if os.path.isfile(path) and os.path.isfile(path + ".json"):
        try:
            truth = read_truth(path)
            if truth.shape == (queries.shape[0], k):
                log(f"ground truth: cached {path}")
                return truth, path
        except DataError:
            pass
    log(f"ground truth: exact scan of {base.shape[0]} x {queries.shape[0]} ({metric}), "
        f"cached as {path}")
    truth = exact_knn(base, queries, metric, k)
    try:
        write_ibin(path, truth)
        with open(path + ".json", "w") as f:
            json.dump(key, f, indent=2)
    except OSError as e:
        log(f"ground truth: not cached ({e})")
    return truth, path


def check_truth(base, queries, truth, metric, k, count=20):
    """Recomputes the exact top-k of the first `count` queries and raises
    DataError when a truth id is farther than the exact k-th neighbour (a
    truth file that does not belong to these vectors or this metric)."""
    count = min(count, queries.shape[0])
    exact = exact_knn(base, queries[:count], metric, k)
    b, q = (normalized(base), normalized(queries[:count])) if metric == "cosine" else \
        (base, queries[:count])

    def dist(i, ids):
        v = b[ids].astype(np.float64)
        if metric == "ip":
            return -(v @ q[i])
        return ((v - q[i]) ** 2).sum(1)

    bad = 0
    for i in range(count):
        kth = dist(i, exact[i, k - 1:k])[0]
        got = dist(i, truth[i, :k])
        bad += int((got > kth + 1e-6 * max(1.0, abs(kth))).sum())
    if bad:
        raise DataError(f"the ground truth disagrees with an exact numpy scan ({metric}) "
                        f"on {bad} of {count * k} ids: a truth file of other vectors, "
                        f"rows or metric?")


def load_export_dir(path):
    """(base path, query path, truth path, dataset.json dict) of a
    comprehensive_bench --export_dir directory."""
    files = {name: os.path.join(path, name)
             for name in ("base.fbin", "query.fbin", "groundtruth.ibin", "dataset.json")}
    missing = [n for n, p in files.items() if not os.path.isfile(p)]
    if missing:
        raise DataError(f"{path}: not an export directory (no {', '.join(missing)}); "
                        "write one with comprehensive_bench --export_dir")
    try:
        with open(files["dataset.json"]) as f:
            info = json.load(f)
    except ValueError as e:
        raise DataError(f"{files['dataset.json']}: not JSON ({e})") from None
    return files["base.fbin"], files["query.fbin"], files["groundtruth.ibin"], info

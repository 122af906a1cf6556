# Copyright 2026 The shoal Authors.
"""The interface every peer adapter implements, and what they share.

An adapter wraps one library's index in five calls: build over all base
vectors (ids 0..n-1), set the search knob, search one query on the calling
thread, search a batch on `threads` threads, and say what it was built with.
The harness (child.py) runs one adapter per process, so the import, the
build and every search happen in a heap of their own.

Metrics: `metrics` maps the harness's metric ("l2", "ip", "cosine") to the
library's own name. A library without cosine gets unit vectors (the harness
normalizes base and queries) and is built with its "ip" metric, or "l2" when
it has no "ip" either: on unit vectors the three order neighbours alike.
With --cosine unit every peer gets unit vectors and its "l2" metric (the
same order again), as users who normalize their embeddings once may do;
graph builds tuned for l2 (alpha > 1) then apply.
"""

import concurrent.futures
import importlib.metadata

import numpy as np


class UnsupportedMetric(Exception):
    """The library cannot search with the metric asked for."""


class Peer:
    """Base class of the adapters. Subclasses set the class attributes and
    implement load(), build(), set_knob(), search() and search_batch()."""

    name = ""            # the row label in the table, e.g. "faiss-HNSW32"
    dist = ""            # the distribution that provides it (its pip name)
    knob = ""            # the search knob swept, e.g. "ef"
    metrics = {}         # harness metric -> the library's own name
    batch_api = "native" # "native": one call on `threads` threads;
                         # "python-threads": a thread pool of single searches

    def __init__(self, metric, threads, workdir, quick, cosine_as_l2=False):
        self.threads = threads
        self.workdir = workdir
        self.quick = quick
        self.metric = metric            # the harness's metric
        self.normalize = False          # True: the harness hands in unit vectors
        if metric == "cosine" and cosine_as_l2 and "l2" in self.metrics:
            self.normalize = True       # --cosine unit: unit vectors searched by l2
            self.native_metric = self.metrics["l2"]
        elif metric in self.metrics:
            self.native_metric = self.metrics[metric]
        elif metric == "cosine" and ("ip" in self.metrics or "l2" in self.metrics):
            self.normalize = True
            self.native_metric = self.metrics.get("ip", self.metrics.get("l2"))
        else:
            raise UnsupportedMetric(f"{self.name} has no {metric} metric "
                                    f"(it has {', '.join(self.metrics) or 'none'})")
        self._pool = None

    # ---- what subclasses implement ----

    def load(self):
        """Imports the library (the first thing the child does; an
        ImportError here is reported as the peer's import failure)."""
        raise NotImplementedError

    def version(self):
        """The installed distribution's version ('' when unknown)."""
        try:
            return importlib.metadata.version(self.dist)
        except importlib.metadata.PackageNotFoundError:
            return getattr(getattr(self, "lib", None), "__version__", "")

    def prepare(self, base):
        """Untimed work before build(): a format conversion the library needs
        (e.g. writing a file it loads). Nothing by default."""

    def build(self, base):
        """Builds the index over `base` (float32 (n, dim), row i is id i) with
        self.threads threads."""
        raise NotImplementedError

    def sweep(self):
        """The knob values to search with, from fastest to most accurate."""
        raise NotImplementedError

    def set_knob(self, value):
        raise NotImplementedError

    def search(self, q, k):
        """Ids (int array, up to k) of one query, on the calling thread only."""
        raise NotImplementedError

    def search_batch(self, queries, k):
        """Ids (n, k) of all queries on self.threads threads. The default
        runs search() in a pool of self.threads Python threads (batch_api =
        "python-threads"): parallel only when the library releases the GIL."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.threads)
        chunks = np.array_split(np.arange(queries.shape[0]), self.threads * 4)
        out = np.full((queries.shape[0], k), -1, dtype=np.int64)

        def run(rows):
            for i in rows:
                ids = np.asarray(self.search(queries[i], k))[:k]
                out[i, :ids.shape[0]] = ids

        list(self._pool.map(run, [c for c in chunks if c.size]))
        return out

    def params(self):
        """The build parameters (dict) reported with the results."""
        return {}

    def footprint_bytes(self):
        """Bytes the index keeps outside the process's RSS (files on tmpfs),
        0 when it keeps none."""
        return 0

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def ladder(values, quick):
    """`values`, or in --quick mode every other one of them (the last kept,
    so that a quick sweep still reaches the same top recall)."""
    values = list(values)
    if not quick:
        return values
    thin = values[::2]
    return thin if thin[-1] == values[-1] else thin + [values[-1]]

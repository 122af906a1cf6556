# Copyright 2026 The shoal Authors.
"""DiskANN's in-memory index (pip: diskannpy; StaticMemoryIndex), Vamana
with shoal's graph parameters. The build writes the index to the work
directory and loads it back; both are timed.

diskannpy 0.7 pins numpy 1.25; with the numpy 2 the other peers need, its
single-query search() returned the nearest id k times, so one query is
searched as a batch of one on one thread (batch_search works)."""

import os

from peers.base import Peer, ladder

GRAPH_DEGREE = 64      # R, as shoal's max_degree
COMPLEXITY = 100       # build L, as shoal's build_list_size
ALPHA = 1.2
PREFIX = "ann"


class DiskannPeer(Peer):
    name = "diskann-mem"
    dist = "diskannpy"
    knob = "complexity"
    metrics = {"l2": "l2", "ip": "mips", "cosine": "cosine"}

    def load(self):
        import diskannpy
        self.lib = diskannpy

    def build(self, base):
        directory = os.path.join(self.workdir, "diskann")
        os.makedirs(directory, exist_ok=True)
        self.lib.build_memory_index(
            data=base, distance_metric=self.native_metric, index_directory=directory,
            complexity=COMPLEXITY, graph_degree=GRAPH_DEGREE, alpha=ALPHA,
            num_threads=self.threads, vector_dtype=base.dtype, index_prefix=PREFIX)
        self.index = self.lib.StaticMemoryIndex(
            index_directory=directory, num_threads=self.threads,
            initial_search_complexity=max(self.sweep()), index_prefix=PREFIX)

    def sweep(self):
        return ladder([10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400], self.quick)

    def set_knob(self, value):
        self.complexity = value

    def search(self, q, k):
        return self.index.batch_search(q[None, :], k_neighbors=k, complexity=self.complexity,
                                       num_threads=1).identifiers[0]

    def search_batch(self, queries, k):
        return self.index.batch_search(queries, k_neighbors=k, complexity=self.complexity,
                                       num_threads=self.threads).identifiers

    def params(self):
        return {"R": GRAPH_DEGREE, "L": COMPLEXITY, "alpha": ALPHA}

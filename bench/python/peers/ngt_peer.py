# Copyright 2026 The shoal Authors.
"""NGT (pip: ngt, module ngtpy): its ANNG graph. The knob is epsilon, the
search range's expansion ((1 + epsilon) times the current k-th distance).
batch_search spreads the queries over OpenMP threads (OMP_NUM_THREADS, set
by the harness to --threads); it takes epsilon from Index.set()."""

import os

from peers.base import Peer, ladder

EDGE_SIZE_FOR_CREATION = 20
EDGE_SIZE_FOR_SEARCH = 40


class NgtPeer(Peer):
    name = "ngt-ANNG"
    dist = "ngt"
    knob = "epsilon"
    metrics = {"l2": "L2", "ip": "Inner Product", "cosine": "Cosine"}

    def load(self):
        import ngtpy
        self.lib = ngtpy

    def build(self, base):
        path = os.path.join(self.workdir, "ngt-index").encode()
        self.lib.create(path, base.shape[1], edge_size_for_creation=EDGE_SIZE_FOR_CREATION,
                        edge_size_for_search=EDGE_SIZE_FOR_SEARCH,
                        distance_type=self.native_metric, object_type="Float")
        self.index = self.lib.Index(path)
        self.index.batch_insert(base, num_threads=self.threads)

    def sweep(self):
        return ladder([0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4],
                      self.quick)

    def set_knob(self, value):
        self.epsilon = value
        self.index.set(epsilon=value)

    def search(self, q, k):
        return self.index.search(q, size=k, epsilon=self.epsilon, with_distance=False)

    def search_batch(self, queries, k):
        results = self.lib.BatchResults()
        self.index.batch_search(queries, results, size=k, with_distance=False)
        return results.get_ids()

    def params(self):
        return {"graph": "ANNG", "edge_size_for_creation": EDGE_SIZE_FOR_CREATION,
                "edge_size_for_search": EDGE_SIZE_FOR_SEARCH}

# Copyright 2026 The shoal Authors.
"""hnswlib (Debian's python3-hnswlib: PyPI has no wheel of it)."""

import numpy as np

from peers.base import Peer, ladder

M = 32                 # base-layer degree 2M = 64, as shoal's max_degree
EF_CONSTRUCTION = 200


class HnswlibPeer(Peer):
    name = "hnswlib"
    dist = "hnswlib"      # Debian's python3-hnswlib (its metadata says 0.6.1)
    knob = "ef"
    metrics = {"l2": "l2", "ip": "ip", "cosine": "cosine"}

    def load(self):
        import hnswlib
        self.lib = hnswlib

    def build(self, base):
        self.index = self.lib.Index(space=self.native_metric, dim=base.shape[1])
        self.index.init_index(max_elements=base.shape[0], ef_construction=EF_CONSTRUCTION, M=M)
        self.index.add_items(base, np.arange(base.shape[0]), num_threads=self.threads)

    def sweep(self):
        return ladder([10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 600], self.quick)

    def set_knob(self, value):
        self.index.set_ef(value)

    def search(self, q, k):
        return self.index.knn_query(q, k=k, num_threads=1)[0][0]

    def search_batch(self, queries, k):
        return self.index.knn_query(queries, k=k, num_threads=self.threads)[0]

    def params(self):
        return {"M": M, "ef_construction": EF_CONSTRUCTION}

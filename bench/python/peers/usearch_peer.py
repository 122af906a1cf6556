# Copyright 2026 The shoal Authors.
"""usearch (pip: usearch), its HNSW over float32 vectors."""

import numpy as np

from peers.base import Peer, ladder

CONNECTIVITY = 32      # usearch keeps 2x this on the base layer: 64, as shoal
EXPANSION_ADD = 200


class UsearchPeer(Peer):
    name = "usearch"
    dist = "usearch"
    knob = "expansion_search"
    metrics = {"l2": "l2sq", "ip": "ip", "cosine": "cos"}

    def load(self):
        import usearch
        import usearch.index
        self.lib = usearch
        self.Index = usearch.index.Index


    def build(self, base):
        self.index = self.Index(ndim=base.shape[1], metric=self.native_metric, dtype="f32",
                                connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD)
        self.index.add(np.arange(base.shape[0]), base, threads=self.threads)

    def sweep(self):
        return ladder([10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 600], self.quick)

    def set_knob(self, value):
        self.index.expansion_search = value

    def search(self, q, k):
        return self.index.search(q, k, threads=1).keys

    def search_batch(self, queries, k):
        return self.index.search(queries, k, threads=self.threads).keys

    def params(self):
        return {"connectivity": CONNECTIVITY, "expansion_add": EXPANSION_ADD, "dtype": "f32"}

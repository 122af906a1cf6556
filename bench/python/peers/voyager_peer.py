# Copyright 2026 The shoal Authors.
"""Voyager (pip: voyager, Spotify's hnswlib-based index), float32 storage."""

import numpy as np

from peers.base import Peer, ladder

M = 32
EF_CONSTRUCTION = 200


class VoyagerPeer(Peer):
    name = "voyager"
    dist = "voyager"
    knob = "query_ef"
    metrics = {"l2": "Euclidean", "ip": "InnerProduct", "cosine": "Cosine"}

    def load(self):
        import voyager
        self.lib = voyager

    def build(self, base):
        space = getattr(self.lib.Space, self.native_metric)
        self.index = self.lib.Index(space, num_dimensions=base.shape[1], M=M,
                                    ef_construction=EF_CONSTRUCTION,
                                    max_elements=base.shape[0])
        self.index.add_items(base, ids=np.arange(base.shape[0]), num_threads=self.threads)

    def sweep(self):
        return ladder([10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 600], self.quick)

    def set_knob(self, value):
        self.ef = value

    def search(self, q, k):
        return self.index.query(q, k=k, num_threads=1, query_ef=self.ef)[0]

    def search_batch(self, queries, k):
        return self.index.query(queries, k=k, num_threads=self.threads, query_ef=self.ef)[0]

    def params(self):
        return {"M": M, "ef_construction": EF_CONSTRUCTION, "storage": "float32"}

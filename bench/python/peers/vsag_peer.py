# Copyright 2026 The shoal Authors.
"""VSAG (pip: pyvsag): its HGraph index with SQ8 codes to walk the graph and
the float32 vectors to rerank (as shoal's default code). pyvsag searches one
query a call, so its batch is a pool of --threads Python threads, parallel
only as far as the binding releases the GIL (the table says "py-threads")."""

import json

import numpy as np

from peers.base import Peer, ladder

MAX_DEGREE = 64
EF_CONSTRUCTION = 200
BASE_CODE = "sq8"
RERANK_CODE = "fp32"


class VsagPeer(Peer):
    name = "vsag-HGraph"
    dist = "pyvsag"
    knob = "ef_search"
    metrics = {"l2": "l2", "ip": "ip", "cosine": "cosine"}
    batch_api = "python-threads"

    def load(self):
        import pyvsag
        self.lib = pyvsag

    def _config(self, dim):
        return {"dtype": "float32", "metric_type": self.native_metric, "dim": dim,
                "index_param": {"base_quantization_type": BASE_CODE, "max_degree": MAX_DEGREE,
                                "ef_construction": EF_CONSTRUCTION, "use_reorder": True,
                                "precise_quantization_type": RERANK_CODE,
                                "build_thread_count": self.threads}}

    def build(self, base):
        n, dim = base.shape
        self.index = self.lib.Index("hgraph", json.dumps(self._config(dim)))
        self.index.build(vectors=base.reshape(-1), ids=np.arange(n, dtype=np.int64),
                         num_elements=n, dim=dim)

    def sweep(self):
        return ladder([10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 600], self.quick)

    def set_knob(self, value):
        self.search_params = json.dumps({"hgraph": {"ef_search": value}})

    def search(self, q, k):
        return self.index.knn_search(vector=q, k=k, parameters=self.search_params)[0]

    def params(self):
        return self._config("dim")["index_param"]

# Copyright 2026 The shoal Authors.
"""faiss-cpu: HNSW32 (IndexHNSWFlat) and IVF (IndexIVFFlat), two peers.

faiss has no cosine metric: cosine runs as inner product over unit vectors.
Its threads are OpenMP's: omp_set_num_threads(1) around single queries (an
IVF search of one query would otherwise spread its lists over threads).
"""

import math

from peers.base import Peer, ladder

HNSW_M = 32
HNSW_EF_CONSTRUCTION = 200


class _FaissPeer(Peer):
    dist = "faiss-cpu"
    metrics = {"l2": "l2", "ip": "ip"}

    def load(self):
        import faiss
        self.lib = faiss

    def _metric(self):
        return self.lib.METRIC_L2 if self.native_metric == "l2" else \
            self.lib.METRIC_INNER_PRODUCT

    def search(self, q, k):
        return self.index.search(q[None, :], k)[1][0]

    def search_batch(self, queries, k):
        self.lib.omp_set_num_threads(self.threads)
        try:
            return self.index.search(queries, k)[1]
        finally:
            self.lib.omp_set_num_threads(1)


class FaissHnswPeer(_FaissPeer):
    name = "faiss-HNSW32"
    knob = "efSearch"

    def build(self, base):
        self.lib.omp_set_num_threads(self.threads)
        self.index = self.lib.IndexHNSWFlat(base.shape[1], HNSW_M, self._metric())
        self.index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        self.index.add(base)
        self.lib.omp_set_num_threads(1)

    def sweep(self):
        return ladder([10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 600], self.quick)

    def set_knob(self, value):
        self.index.hnsw.efSearch = value

    def params(self):
        return {"M": HNSW_M, "efConstruction": HNSW_EF_CONSTRUCTION}


class FaissIvfPeer(_FaissPeer):
    name = "faiss-IVF"
    knob = "nprobe"

    def build(self, base):
        # faiss's guideline: 4 sqrt(n) to 16 sqrt(n) lists; the lower end,
        # trained on all rows (at most 256 per list, faiss's own sample cap).
        self.nlist = max(1, min(base.shape[0] // 39, int(4 * math.sqrt(base.shape[0]))))
        self.lib.omp_set_num_threads(self.threads)
        quantizer = (self.lib.IndexFlatL2 if self.native_metric == "l2" else
                     self.lib.IndexFlatIP)(base.shape[1])
        self.index = self.lib.IndexIVFFlat(quantizer, base.shape[1], self.nlist, self._metric())
        self.index.train(base)
        self.index.add(base)
        self.lib.omp_set_num_threads(1)

    def sweep(self):
        probes = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
        return ladder([p for p in probes if p <= self.nlist], self.quick)

    def set_knob(self, value):
        self.index.nprobe = value

    def params(self):
        return {"index": f"IVF{self.nlist},Flat", "nlist": self.nlist}

# Copyright 2026 The shoal Authors.
"""ScaNN (pip: scann): a partition tree, anisotropic 4-bit codes (AH, two
dimensions a block), and a rerank of the best candidates on the full vectors.

ScaNN has no cosine: cosine runs as dot product over unit vectors. The knob
is a pair (leaves_to_search, pre_reorder_num_neighbors)."""

import math

from peers.base import Peer, ladder

DIMS_PER_BLOCK = 2
AH_THRESHOLD = 0.2     # anisotropic weight (dot product only; ScaNN's recommended 0.2)
REORDER = (100, 250)   # candidates reranked: the first for small sweeps, the second past 10%


class ScannPeer(Peer):
    name = "scann"
    dist = "scann"
    knob = "leaves,reorder"
    metrics = {"l2": "squared_l2", "ip": "dot_product"}

    def load(self):
        import scann
        self.lib = scann

    def build(self, base):
        n = base.shape[0]
        self.num_leaves = max(1, min(n // 100, int(round(math.sqrt(n)))))
        builder = self.lib.scann_ops_pybind.builder(base, 10, self.native_metric)
        builder = builder.tree(num_leaves=self.num_leaves,
                               num_leaves_to_search=max(1, self.num_leaves // 10),
                               training_sample_size=n)
        if self.native_metric == "dot_product":
            builder = builder.score_ah(DIMS_PER_BLOCK, anisotropic_quantization_threshold=AH_THRESHOLD)
        else:
            builder = builder.score_ah(DIMS_PER_BLOCK)
        builder = builder.reorder(max(REORDER)).set_n_training_threads(self.threads)
        self.searcher = builder.build()
        self.searcher.set_num_threads(self.threads)

    def sweep(self):
        fractions = [0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5]
        out = []
        for f in fractions:
            leaves = max(1, int(round(f * self.num_leaves)))
            pair = (leaves, REORDER[0] if f < 0.1 else REORDER[1])
            if pair not in out:
                out.append(pair)
        return ladder(out, self.quick)

    def set_knob(self, value):
        self.leaves, self.reorder = value

    def search(self, q, k):
        return self.searcher.search(q, final_num_neighbors=k, leaves_to_search=self.leaves,
                                    pre_reorder_num_neighbors=self.reorder)[0]

    def search_batch(self, queries, k):
        return self.searcher.search_batched_parallel(
            queries, final_num_neighbors=k, leaves_to_search=self.leaves,
            pre_reorder_num_neighbors=self.reorder)[0]

    def params(self):
        return {"num_leaves": self.num_leaves, "score_ah_dims_per_block": DIMS_PER_BLOCK,
                "anisotropic_quantization_threshold":
                    AH_THRESHOLD if self.native_metric == "dot_product" else None,
                "reorder": list(REORDER), "training_sample_size": "all rows"}

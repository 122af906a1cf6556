# Copyright 2026 The shoal Authors.
"""Intel SVS (pip: scalable-vs): Vamana over LVQ codes (default LVQ4x8: a
4-bit primary code to walk the graph, an 8-bit residual to rerank).

SVS compresses while it loads a file, so prepare() first writes the base as
.fvecs to the work directory (not timed: a format conversion, not a build).
"""

import os

from peers.base import Peer, ladder

MAX_DEGREE = 64        # as shoal's max_degree
WINDOW_SIZE = 100      # build L, as shoal's build_list_size
ALPHA = {"L2": 1.2, "MIP": 0.95, "Cosine": 0.95}   # SVS's own defaults per metric
LVQ = (4, 8)           # (primary, residual) bits
PADDING = 32


class SvsPeer(Peer):
    name = "svs-LVQ4x8"
    dist = "scalable-vs"
    knob = "search_window_size"
    metrics = {"l2": "L2", "ip": "MIP", "cosine": "Cosine"}

    def load(self):
        import svs
        self.lib = svs

    def prepare(self, base):
        self.path = os.path.join(self.workdir, "svs-base.fvecs")
        self.lib.write_vecs(base, self.path)

    def build(self, base):
        svs = self.lib
        loader = svs.VectorDataLoader(self.path, svs.DataType.float32, dims=base.shape[1])
        data = svs.LVQLoader(loader, primary=LVQ[0], residual=LVQ[1], padding=PADDING)
        params = svs.VamanaBuildParameters(alpha=ALPHA[self.native_metric],
                                           graph_max_degree=MAX_DEGREE, window_size=WINDOW_SIZE)
        self.index = svs.Vamana.build(params, data, getattr(svs.DistanceType, self.native_metric),
                                      num_threads=self.threads)
        os.remove(self.path)

    def sweep(self):
        return ladder([10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400], self.quick)

    def set_knob(self, value):
        self.index.search_window_size = value

    def search(self, q, k):
        if self.index.num_threads != 1:
            self.index.num_threads = 1
        return self.index.search(q[None, :], k)[0][0]

    def search_batch(self, queries, k):
        self.index.num_threads = self.threads
        try:
            return self.index.search(queries, k)[0]
        finally:
            self.index.num_threads = 1

    def params(self):
        return {"graph_max_degree": MAX_DEGREE, "window_size": WINDOW_SIZE,
                "alpha": ALPHA[self.native_metric], "lvq": f"LVQ{LVQ[0]}x{LVQ[1]}",
                "padding": PADDING, "backend": self.index.experimental_backend_string}

# Copyright 2026 The shoal Authors.
"""shoal itself, through its Python package (python/, `import shoal`).

Built the fast way: bulk_load of all rows (ids 0..n-1) then
wait_for_compact(), into a database on the work directory (/dev/shm by
default: tmpfs, so its files are memory too; footprint_bytes() reports them).
Defaults as the C++ comprehensive_bench: shards = cores, worker_threads =
--threads, R 64, L 100, alpha 1.2, SQ8 codes with a float32 rerank. A single
search fans out over the shards on the worker threads, as in C++."""

import os

import numpy as np

from peers.base import Peer, ladder


def _allocated_bytes(path):
    """Bytes the files under `path` occupy (st_blocks: shoal preallocates its
    logs sparsely, so their length overstates what tmpfs holds)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


class ShoalPeer(Peer):
    name = "shoal"
    dist = "shoal"
    knob = "list_size"
    metrics = {"l2": "l2", "ip": "ip", "cosine": "cosine"}

    def load(self):
        import shoal
        self.lib = shoal

    def build(self, base):
        self.path = os.path.join(self.workdir, "shoal-db")
        self.db = self.lib.open(self.path, dim=base.shape[1], metric=self.native_metric,
                                error_if_exists=True, worker_threads=self.threads)
        self.db.bulk_load(np.arange(base.shape[0], dtype=np.uint64), base)
        self.db.wait_for_compact()

    def sweep(self):
        # comprehensive_bench's sweep: a list below k still answers k, sooner
        return ladder([2, 3, 5, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400], self.quick)

    def set_knob(self, value):
        self.list_size = value

    def search(self, q, k):
        return self.db.search(q, k, list_size=self.list_size)[0]

    def search_batch(self, queries, k):
        ids, _ = self.db.search_batch(queries, k, list_size=self.list_size)
        return ids

    def params(self):
        return {"max_degree": 64, "build_list_size": 100, "alpha": 1.2, "code": "sq8",
                "shard_count": "auto (cores)", "worker_threads": self.threads,
                "build": "bulk_load + wait_for_compact"}

    def footprint_bytes(self):
        return _allocated_bytes(self.path)

    def close(self):
        super().close()
        if getattr(self, "db", None) is not None:
            self.db.close()

"""Fixtures: a fresh database directory per test (tmpfs when there is one)."""

import os
import shutil
import tempfile

import numpy as np
import pytest


@pytest.fixture
def db_path():
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    path = tempfile.mkdtemp(prefix="shoal-pytest-", dir=base)
    yield os.path.join(path, "db")
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of 2 CPUs for a module's tests (shoal.ray)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 << 20,
             log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def exact_knn(base, ids, queries, k, metric="l2"):
    """The exact k nearest ids of each query (ties by id), for checking results."""
    if metric == "cosine":
        base = base / np.linalg.norm(base, axis=1, keepdims=True)
        queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        d = 1.0 - queries @ base.T
    elif metric == "ip":
        d = -(queries @ base.T)
    else:
        d = ((queries[:, None, :] - base[None, :, :]) ** 2).sum(-1)
    order = np.lexsort((np.broadcast_to(ids, d.shape), d), axis=1)[:, :k]
    return ids[order]

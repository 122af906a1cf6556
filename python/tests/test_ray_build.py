"""shoal.ray.build: segments built in Ray tasks, then ingested."""

import glob
import os
import shutil
import tempfile

import numpy as np
import pytest

import shoal

ray = pytest.importorskip("ray")
import shoal.ray as sray  # noqa: E402

from conftest import exact_knn  # noqa: E402

DIM = 16
K = 10


@pytest.fixture
def work_dir():
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    path = tempfile.mkdtemp(prefix="shoal-raybuild-pytest-", dir=base)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def data(n, dim=DIM, seed=5):
    rng = np.random.default_rng(seed)
    return rng.random((n, dim), dtype=np.float32), rng.random((50, dim), dtype=np.float32)


def write_fbin(path, x):
    with open(path, "wb") as f:
        np.array(x.shape, dtype=np.uint32).tofile(f)
        x.astype(np.float32).tofile(f)


def recall(found, truth):
    return np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth)])


def all_ids(collection):
    with collection.export() as batches:
        return np.concatenate([ids for ids, _ in batches])


def test_shard_of_routes_as_the_segment_writer_does(work_dir):
    ids = np.random.default_rng(1).choice(10**15, size=2000, replace=False).astype(np.uint64)
    x = np.zeros((len(ids), 4), np.float32)
    shards = sray.shard_of(ids, 4)
    for s in range(4):
        with shoal.SegmentWriter(work_dir, dim=4, shard_count=4, prefix=f"s{s}") as w:
            w.add(ids[shards == s], x[shards == s])
        assert [os.path.basename(f) for f in w.files] == [f"s{s}-shard-{s}.vamana"]


@pytest.mark.parametrize("split", ["shards", "rows"])
def test_build_reaches_the_recall_of_one_process_bulk_load(cluster, work_dir, split):
    x, q = data(4000)
    np.save(os.path.join(work_dir, "x.npy"), x)
    ids = np.arange(len(x), dtype=np.uint64)
    truth = exact_knn(x, ids, q, K)
    with shoal.open(os.path.join(work_dir, "one"), dim=DIM, shard_count=2) as one, \
            shoal.open(os.path.join(work_dir, "built"), dim=DIM, shard_count=2) as built:
        one.bulk_load(ids, x)
        out = sray.build(os.path.join(work_dir, "x.npy"), built, workers=2, split=split,
                         num_cpus=0.5, staging_dir=work_dir)
        assert out["rows"] == len(x) and out["tasks"] == 2
        assert out["files"] == (2 if split == "shards" else 4)
        assert len(out["task_cpu_seconds"]) == 2
        got = all_ids(built.collection("default"))
        assert len(got) == len(x) and set(got.tolist()) == set(ids.tolist())
        r_one = recall(one.search_batch(q, K).ids, truth)
        r_built = recall(built.search_batch(q, K).ids, truth)
        assert r_built >= r_one - 0.01, (r_built, r_one)
    assert glob.glob(os.path.join(work_dir, ".shoal-build-*")) == []


def test_build_into_a_served_collection_is_searchable_through_it(cluster, work_dir):
    x, q = data(3000, seed=6)
    ids = np.random.default_rng(2).choice(10**12, size=len(x), replace=False).astype(np.uint64)
    write_fbin(os.path.join(work_dir, "x.fbin"), x)
    np.save(os.path.join(work_dir, "ids.npy"), ids)
    coll = sray.serve(os.path.join(work_dir, "coll"), 2, dim=DIM, num_cpus=0.5)
    try:
        sray.build(os.path.join(work_dir, "x.fbin"), coll, ids=os.path.join(work_dir, "ids.npy"),
                   workers=2, num_cpus=0.5)
        assert coll.stats()["live_vectors"] == len(x)
        assert recall(coll.search_batch(q, K).ids, exact_knn(x, ids, q, K)) >= 0.95
        np.testing.assert_array_equal(coll.get(int(ids[7])), x[7])
    finally:
        coll.close()


def test_a_mismatched_dim_fails_clearly_with_nothing_ingested(cluster, work_dir):
    x, _ = data(500, dim=DIM + 1)
    np.save(os.path.join(work_dir, "x.npy"), x)
    with shoal.open(os.path.join(work_dir, "db"), dim=DIM, shard_count=2) as db:
        with pytest.raises(shoal.InvalidArgumentError, match="dim 17.*dim is 16"):
            sray.build(os.path.join(work_dir, "x.npy"), db, staging_dir=work_dir)
        assert db.stats()["default"]["live_vectors"] == 0
    assert glob.glob(os.path.join(work_dir, ".shoal-build-*")) == []


def test_a_task_that_fails_ingests_nothing_and_leaves_no_files(cluster, work_dir):
    x, _ = data(3000)
    x[1500, 3] = np.nan  # refused by the SegmentWriter of that row's shard only
    np.save(os.path.join(work_dir, "x.npy"), x)
    with shoal.open(os.path.join(work_dir, "db"), dim=DIM, shard_count=2) as db:
        with pytest.raises(shoal.InvalidArgumentError, match="is nan"):
            sray.build(os.path.join(work_dir, "x.npy"), db, workers=2, num_cpus=0.5,
                       staging_dir=work_dir)
        assert db.stats()["default"]["live_vectors"] == 0
    assert glob.glob(os.path.join(work_dir, ".shoal-build-*")) == []

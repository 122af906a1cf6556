"""shoal.ray.build from a Ray Dataset: records' parts (labels, attributes,
payloads) reach the built segments; bad input is refused before any task."""

import glob
import os
import shutil
import tempfile

import numpy as np
import pytest

import shoal

ray = pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
import shoal.ray as sray  # noqa: E402

from conftest import exact_knn  # noqa: E402

DIM = 16
N = 2000
K = 10


@pytest.fixture(scope="module")
def work_dir():
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    path = tempfile.mkdtemp(prefix="shoal-raydataset-pytest-", dir=base)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def records(n=N, seed=3):
    """ids, vectors, labels (None for some rows), colors (None for some),
    payloads (None for some): what the Parquet files and put_batch get."""
    rng = np.random.default_rng(seed)
    ids = rng.choice(10**12, size=n, replace=False).astype(np.uint64)
    x = rng.random((n, DIM), dtype=np.float32)
    labels = [None if i % 7 == 0 else [i % 3, 10 + i % 4] for i in range(n)]
    colors = [None if i % 5 == 0 else i % 4 for i in range(n)]
    payloads = [None if i % 11 == 0 else f"doc {i}".encode() for i in range(n)]
    return ids, x, labels, colors, payloads


def table(ids, x, labels, colors, payloads):
    return pa.table({
        "key": pa.array(ids, pa.uint64()),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel(), pa.float32()), x.shape[1]),
        "tags": pa.array(labels, pa.list_(pa.int32())),
        "color": pa.array(colors, pa.int64()),
        "text": pa.array(payloads, pa.binary()),
    })


def write_parquet(path, t, files=4):
    """`t` written as `files` Parquet files, in order."""
    os.makedirs(path, exist_ok=True)
    step = -(-t.num_rows // files)
    for f in range(files):
        pq.write_table(t.slice(f * step, step), os.path.join(path, f"part-{f}.parquet"))
    return path


COLUMNS = dict(vector_column="emb", id_column="key", label_column="tags",
               attribute_columns={"color": "color"}, payload_column="text")


@pytest.fixture(scope="module")
def parquet(work_dir):
    return write_parquet(os.path.join(work_dir, "base"), table(*records()))


@pytest.fixture(scope="module")
def built(cluster, work_dir, parquet):
    """A collection built from the Parquet Dataset (split="shards"), and
    one that bulk_loaded the same records in one process."""
    ids, x, labels, colors, payloads = records()
    with shoal.open(os.path.join(work_dir, "one"), dim=DIM, shard_count=2,
                    attributes=["color"]) as one, \
            shoal.open(os.path.join(work_dir, "built"), dim=DIM, shard_count=2,
                       attributes=["color"]) as db:
        one.bulk_load(ids, x, labels=labels, attributes={"color": colors}, payloads=payloads)
        out = sray.build(ray.data.read_parquet(parquet), db, **COLUMNS, workers=2,
                         num_cpus=0.5, staging_dir=work_dir)
        yield out, one.collection("default"), db.collection("default")


def as_tuple(r):
    return (r.id, r.vector.tolist(), r.labels, r.attributes, r.payload)


def test_a_dataset_build_holds_the_records_a_bulk_load_of_them_holds(built):
    out, one, coll = built
    ids = records()[0]
    assert out["rows"] == N and out["tasks"] == 2 and out["files"] == 2
    assert [as_tuple(r) for r in coll.get_records(ids)] == \
        [as_tuple(r) for r in one.get_records(ids)]
    rec = coll.get_record(int(ids[1]))
    assert (rec.labels, rec.attributes, rec.payload) == ([1, 11], {"color": 1}, b"doc 1")
    bare = coll.get_record(int(ids[0]))  # null labels, color and payload
    assert (bare.labels, bare.attributes, bare.payload) == ([], {}, b"")


def test_filtered_search_finds_exactly_the_records_whose_parts_match(built):
    _, one, coll = built
    ids, x, labels, colors, _ = records()
    flt = shoal.any_label([2]) & shoal.range("color", 1, 3)
    match = np.array([lab is not None and 2 in lab and c is not None and 1 <= c < 3
                      for lab, c in zip(labels, colors)])
    got, _ = coll.search(x[0], k=N, filter=flt)
    assert set(got.tolist()) == set(ids[match].tolist())
    q = np.random.default_rng(9).random((30, DIM), dtype=np.float32)
    truth = exact_knn(x[match], ids[match], q, K)

    def recall(c):
        found = c.search_batch(q, K, filter=flt).ids
        return np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth)])

    assert recall(coll) >= recall(one) - 0.02 and recall(coll) >= 0.9


@pytest.mark.parametrize("split", ["shards", "rows"])
def test_a_later_row_of_a_repeated_id_wins(cluster, work_dir, split):
    ids, x, labels, colors, payloads = records(400, seed=4)
    ids[300] = ids[20]  # a later block repeats an id of the first block
    t = table(ids, x, labels, colors, payloads)
    ds = ray.data.from_arrow([t.slice(0, 100), t.slice(100, 100), t.slice(200, 100),
                              t.slice(300, 100)])
    with shoal.open(os.path.join(work_dir, f"repeat-{split}"), dim=DIM, shard_count=2,
                    attributes=["color"]) as db:
        out = sray.build(ds, db, **COLUMNS, split=split, num_cpus=0.5, staging_dir=work_dir)
        assert out["files"] == (2 if split == "shards" else 4)
        c = db.collection("default")
        assert c.get_record(int(ids[20])).payload == payloads[300]
        np.testing.assert_array_equal(c.get(int(ids[20])), x[300])
        assert db.stats()["default"]["live_vectors"] == 399


def test_a_tensor_column_of_doubles_and_int_ids_are_taken(cluster, work_dir):
    pd = pytest.importorskip("pandas")
    x = np.random.default_rng(6).random((300, DIM))  # float64
    ds = ray.data.from_pandas(pd.DataFrame({"id": np.arange(300), "vector": list(x)}))
    with shoal.open(os.path.join(work_dir, "tensor"), dim=DIM, shard_count=2) as db:
        sray.build(ds, db, workers=1, num_cpus=0.5, staging_dir=work_dir)
        np.testing.assert_array_equal(db.get(299), x[299].astype(np.float32))
        assert db.stats()["default"]["live_vectors"] == 300


def test_a_dataset_build_into_a_served_collection_keeps_the_records_parts(
        cluster, work_dir, parquet):
    ids, x, labels, colors, payloads = records()
    coll = sray.serve(os.path.join(work_dir, "served"), 2, dim=DIM, attributes=["color"],
                      num_cpus=0.5)
    try:
        sray.build(ray.data.read_parquet(parquet), coll, **COLUMNS, workers=2, num_cpus=0.5)
        assert coll.stats()["live_vectors"] == N
        rec = coll.get_record(int(ids[1]))
        assert (rec.labels, rec.attributes, rec.payload) == ([1, 11], {"color": 1}, b"doc 1")
        match = np.array([lab is not None and 0 in lab for lab in labels])
        got, _ = coll.search(x[0], k=N, filter=shoal.any_label([0]))
        assert set(got.tolist()) == set(ids[match].tolist())
    finally:
        coll.close()


def refused(work_dir, ds, match, **columns):
    """Builds `ds` into a fresh collection: the error matches and nothing
    was ingested or left in the staging directory."""
    path = tempfile.mkdtemp(prefix="refused-", dir=work_dir)
    with shoal.open(os.path.join(path, "db"), dim=DIM, shard_count=2,
                    attributes=["color"]) as db:
        with pytest.raises(shoal.InvalidArgumentError, match=match):
            sray.build(ds, db, **dict(COLUMNS, **columns), num_cpus=0.5, staging_dir=path)
        assert db.stats()["default"]["live_vectors"] == 0
    assert glob.glob(os.path.join(path, ".shoal-build-*")) == []


def test_a_missing_column_is_refused_before_any_task(cluster, work_dir, parquet):
    refused(work_dir, ray.data.read_parquet(parquet), "no column 'nope'", payload_column="nope")


def test_a_vector_column_of_another_dim_is_refused_before_any_task(cluster, work_dir):
    ids, _, labels, colors, payloads = records(50)
    x = np.zeros((50, DIM + 1), np.float32)
    ds = ray.data.from_arrow(table(ids, x, labels, colors, payloads))
    refused(work_dir, ds, "dim 17, the collection's dim is 16")


def test_ids_that_are_not_integers_are_refused_before_any_task(cluster, work_dir):
    ids, x, labels, colors, payloads = records(50)
    t = table(ids, x, labels, colors, payloads)
    t = t.set_column(0, "key", pa.array(ids.astype(np.float64)))
    refused(work_dir, ray.data.from_arrow(t), "'key' .id.: type double, integers expected")


def test_an_attribute_the_collection_does_not_declare_is_refused(cluster, work_dir, parquet):
    refused(work_dir, ray.data.read_parquet(parquet), r"\['size'\] are not declared",
            attribute_columns={"size": "color"})


def test_a_list_vector_of_another_length_fails_its_task_with_nothing_ingested(
        cluster, work_dir):
    rows = [[0.5] * DIM for _ in range(100)]
    rows[42] = [0.5] * (DIM - 1)
    ds = ray.data.from_arrow(pa.table({"id": np.arange(100), "vector": rows}))
    refused(work_dir, ds, "row 42 of a block has a vector of dim 15", id_column="id",
            vector_column="vector", label_column=None, attribute_columns=None,
            payload_column=None)


def test_column_keywords_are_refused_with_a_file_input(cluster, work_dir):
    with shoal.open(os.path.join(work_dir, "file"), dim=DIM, shard_count=2) as db:
        with pytest.raises(ValueError, match="label_column: for a ray.data.Dataset"):
            sray.build(os.path.join(work_dir, "x.npy"), db, label_column="tags")

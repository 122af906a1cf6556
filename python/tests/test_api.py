"""The Python API over a real database: round trips, searches, collections."""

import numpy as np
import pytest

import shoal
from conftest import exact_knn


def test_put_then_search_finds_the_vector_at_distance_zero(db_path, rng):
    with shoal.open(db_path, dim=16) as db:
        x = rng.random((500, 16), dtype=np.float32)
        db.put_batch(np.arange(500, dtype=np.uint64), x)
        ids, distances = db.search(x[42], k=5)
        assert ids.dtype == np.uint64 and distances.dtype == np.float32
        assert ids.shape == (5,) and ids[0] == 42 and distances[0] == 0.0
        assert np.all(np.diff(distances) >= 0)


@pytest.mark.parametrize("metric", ["l2", "ip", "cosine"])
def test_search_batch_has_high_recall_and_sorted_rows(db_path, rng, metric):
    with shoal.open(db_path, dim=24, metric=metric) as db:
        base = rng.standard_normal((3000, 24)).astype(np.float32)
        ids = np.arange(3000, dtype=np.uint64) * 3 + 1  # ids that are not row numbers
        db.put_batch(ids, base)
        queries = rng.standard_normal((50, 24)).astype(np.float32)
        found, distances = db.search_batch(queries, k=10, list_size=200)
        truth = exact_knn(base, ids, queries, 10, metric)
        recall = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth)])
        assert recall >= 0.95
        assert found.shape == (50, 10) and distances.shape == (50, 10)
        assert np.all(np.diff(distances, axis=1) >= 0)
        # One query at a time gives the same answers as the batch.
        single, _ = db.search(queries[3], k=10, list_size=200)
        assert list(single) == list(found[3])


def test_rows_with_fewer_than_k_results_are_padded_and_counted(db_path, rng):
    with shoal.open(db_path, dim=8) as db:
        db.put_batch([5, 6, 7], rng.random((3, 8), dtype=np.float32))
        result = db.search_batch(rng.random((2, 8), dtype=np.float32), k=5)
        ids, distances = result
        assert list(result.counts) == [3, 3]
        assert np.all(ids[:, 3:] == shoal.NO_ID) and np.all(np.isinf(distances[:, 3:]))
        assert sorted(ids[0, :3]) == [5, 6, 7]
        single_ids, single_distances = db.search(rng.random(8, dtype=np.float32), k=5)
        assert len(single_ids) == 3 and len(single_distances) == 3


def test_a_huge_k_answers_what_exists(db_path, rng):
    with shoal.open(db_path, dim=4) as db:
        db.put_batch(np.arange(20), rng.random((20, 4), dtype=np.float32))
        ids, _ = db.search(rng.random(4, dtype=np.float32), k=2**32 - 1)
        assert sorted(ids) == list(range(20))


def test_a_batch_with_a_huge_k_is_as_wide_as_its_longest_row(db_path, rng):
    with shoal.open(db_path, dim=4) as db:
        db.put_batch(np.arange(20), rng.random((20, 4), dtype=np.float32))
        result = db.search_batch(rng.random((3, 4), dtype=np.float32), k=2**32 - 1)
        assert result.ids.shape == (3, 20) and list(result.counts) == [20, 20, 20]
        ids, _ = db.search_batch(rng.random((3, 4), dtype=np.float32), k=65536)
        assert ids.shape == (3, 65536) and np.all(ids[:, 20:] == shoal.NO_ID)


def test_the_dbs_own_calls_after_default_is_dropped_raise_not_found(db_path):
    with shoal.open(db_path, dim=4) as db:
        db.put(1, np.ones(4))
        db.drop_collection("default")
        with pytest.raises(shoal.NotFoundError):
            db.put(2, np.ones(4))
        with pytest.raises(shoal.NotFoundError):
            db.search(np.ones(4))


def test_delete_and_overwrite_are_seen_by_get_and_search(db_path, rng):
    with shoal.open(db_path, dim=8) as db:
        x = rng.random((100, 8), dtype=np.float32)
        db.put_batch(np.arange(100), x)
        db.delete(10)
        with pytest.raises(KeyError):
            db.get(10)
        assert 10 not in db.search(x[10], k=5)[0]
        db.put(11, x[50])
        assert np.array_equal(db.get(11), x[50])
        db.delete(123456)  # absent: not an error


def test_records_round_trip_with_labels_attributes_and_payload(db_path, rng):
    with shoal.open(db_path) as db:
        docs = db.create_collection("docs", 8, "cosine", attributes=["ts", "price"])
        v = rng.random(8, dtype=np.float32)
        docs.put(1, v, labels=[9, 3, 3], attributes={"price": -5, "ts": 2**40},
                 payload="héllo")
        r = docs.get_record(1)
        assert r.id == 1 and r.labels == [3, 9]
        assert r.attributes == {"ts": 2**40, "price": -5}
        assert r.payload == "héllo".encode() and r.text == "héllo"
        assert np.allclose(r.vector, v / np.linalg.norm(v), atol=1e-6)
        # A later put replaces the whole record.
        docs.put(1, v)
        assert docs.get_record(1).payload == b"" and docs.get_record(1).labels == []
        assert docs.get_records([1, 2]) == [docs.get_record(1), None]
        docs.put(3, v, labels=[1], payload=b"p")
        light = docs.get_records([3], vector=False)[0]
        assert light.vector is None and light.payload == b"p" and light.labels == [1]
        with pytest.raises(shoal.NotFoundError):
            docs.get_record(2)


def test_put_batch_takes_every_part_in_both_forms(db_path, rng):
    with shoal.open(db_path) as db:
        c = db.create_collection("c", 4, attributes=["a", "b"])
        x = rng.random((3, 4), dtype=np.float32)
        c.put_batch([0, 1, 2], x, labels=[[1], None, np.array([2, 3])],
                    attributes={"a": [10, None, 30], "b": np.array([1, 2, 3])},
                    payloads=[b"x", None, bytearray(b"z")])
        got = c.get_records([0, 1, 2])
        assert [g.labels for g in got] == [[1], [], [2, 3]]
        assert [g.attributes for g in got] == [{"a": 10, "b": 1}, {"b": 2}, {"a": 30, "b": 3}]
        assert [g.payload for g in got] == [b"x", b"", b"z"]
        c.put_batch([3], x[:1], attributes=[{"a": 7}])
        assert c.get_record(3).attributes == {"a": 7}


def test_filters_are_honoured_exactly(db_path, rng):
    with shoal.open(db_path) as db:
        c = db.create_collection("c", 16, attributes=["ts"])
        n = 4000
        x = rng.random((n, 16), dtype=np.float32)
        labels = [[i % 10] for i in range(n)]
        c.put_batch(np.arange(n), x, labels=labels, attributes={"ts": np.arange(n)})
        db.flush()
        q = rng.random((20, 16), dtype=np.float32)
        flt = shoal.any_label([3]) & shoal.range("ts", 1000, 3000)
        match = np.array([i % 10 == 3 and 1000 <= i < 3000 for i in range(n)])
        ids, _ = c.search_batch(q, k=10, filter=flt)
        assert all(match[i] for row in ids for i in row)
        truth = exact_knn(x[match], np.flatnonzero(match).astype(np.uint64), q, 10)
        recall = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(ids, truth)])
        assert recall >= 0.95
        # A filter matching 4 records answers those 4, not k.
        few, _ = c.search(q[0], k=10, filter=shoal.ids([1, 2, 3, 4]))
        assert sorted(few) == [1, 2, 3, 4]
        none, _ = c.search(q[0], k=10, filter=shoal.no_label(range(10)))
        assert len(none) == 0
        either = shoal.any_label([1]) | shoal.below("ts", 5)
        got, _ = c.search(q[0], k=2000, filter=either)
        assert set(got) == {i for i in range(n) if i % 10 == 1 or i < 5}
        assert "any_label" in repr(either)


def test_collections_are_created_listed_found_and_dropped(db_path):
    with shoal.open(db_path, dim=4) as db:
        a = db.create_collection("a", 3, "ip", shard_count=3)
        assert (a.name, a.dim, a.metric, a.shard_count) == ("a", 3, "ip", 3)
        assert db.list_collections() == ["a", "default"]
        assert db.collection("a").dim == 3
        with pytest.raises(shoal.AlreadyExistsError):
            db.create_collection("a", 3)
        db.drop_collection("a")
        with pytest.raises(KeyError):
            db.collection("a")
        with pytest.raises(shoal.NotFoundError):
            a.put(1, [1, 2, 3])


def test_data_survives_close_and_reopen(db_path, rng):
    x = rng.random((300, 8), dtype=np.float32)
    with shoal.open(db_path, dim=8, fsync="always") as db:
        db.put_batch(np.arange(300), x)
        db.flush()
        db.put(1000, x[0])
    with shoal.open(db_path) as db:
        assert np.array_equal(db.get(299), x[299]) and np.array_equal(db.get(1000), x[0])
        assert db.stats()["default"]["live_vectors"] == 301


def test_bulk_load_reports_progress_and_loads_everything(db_path, rng):
    calls = []
    with shoal.open(db_path, dim=8) as db:
        db.bulk_load(np.arange(30000), rng.random((30000, 8), dtype=np.float32),
                     progress=lambda done, total: calls.append((done, total)))
        assert calls[-1] == (30000, 30000)
        assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))
        assert db.stats()["default"]["live_vectors"] == 30000
        db.put_batch(np.arange(100), rng.random((100, 8), dtype=np.float32))
        db.create_collection("other", 4, shard_count=3)
        shards = []
        db.compact(progress=lambda done, total: shards.append((done, total)))
        db.wait_for_compact()
        total = db.collection("default").shard_count + 3
        assert shards[-1] == (total, total) and len(shards) >= 2


def test_an_exception_in_progress_is_raised_after_the_load(db_path, rng):
    def fail(done, total):
        raise RuntimeError("stop")
    with shoal.open(db_path, dim=4) as db:
        with pytest.raises(RuntimeError, match="stop"):
            db.bulk_load(np.arange(100), rng.random((100, 4), dtype=np.float32), progress=fail)
        assert db.stats()["default"]["live_vectors"] == 100


def test_the_package_ships_typed_stubs_and_docstrings():
    import importlib.resources
    files = importlib.resources.files("shoal")
    assert (files / "py.typed").is_file()
    stubs = (files / "_shoal.pyi").read_text()
    assert "def search_batch(" in stubs and "def open(" in stubs
    for call in (shoal.open, shoal.DB.search, shoal.Collection.put_batch, shoal.DB.compact,
                 shoal.any_label, shoal.Collection.get_records):
        assert call.__doc__ and len(call.__doc__) > 40

"""shoal.SegmentWriter and ingest_segments: files built outside a database,
taken in all or nothing; a damaged or mismatched file is refused with
nothing changed."""

import os

import numpy as np
import pytest

import shoal


@pytest.fixture
def out_dir(db_path):
    return os.path.join(os.path.dirname(db_path), "segments")


def rows(rng, n, dim=16):
    return rng.standard_normal((n, dim)).astype(np.float32)


def test_written_segments_ingest_and_answer(db_path, out_dir, rng):
    with shoal.open(db_path, dim=16, shard_count=2) as db:
        vectors = rows(rng, 2000)
        ids = np.arange(2000, dtype=np.uint64)
        with shoal.SegmentWriter.for_collection(out_dir, db.collection("default")) as w:
            w.add(ids[:1000], vectors[:1000])
            w.add(ids[1000:], vectors[1000:])
        assert w.rows == 2000
        assert len(w.files) == 2
        db.ingest_segments(w.files)
        np.testing.assert_array_equal(db.get(1234), vectors[1234])
        found, _ = db.search(vectors[77], k=1)
        assert found[0] == 77
        assert db.stats()["default"]["live_vectors"] == 2000


def test_ingested_records_are_newer_than_earlier_writes(db_path, out_dir, rng):
    with shoal.open(db_path, dim=16, shard_count=2) as db:
        old = rows(rng, 10)
        db.put_batch(np.arange(10), old)
        db.delete(3)
        new = rows(rng, 10)
        w = shoal.SegmentWriter(out_dir, dim=16, shard_count=2)
        w.add(np.arange(10), new)
        db.ingest_segments(w.finish())
        np.testing.assert_array_equal(db.get(3), new[3])
        np.testing.assert_array_equal(db.get(5), new[5])
        db.put(5, old[5])
        np.testing.assert_array_equal(db.get(5), old[5])


def test_records_parts_and_a_named_collection(db_path, out_dir, rng):
    with shoal.open(db_path) as db:
        c = db.create_collection("docs", 8, "cosine", shard_count=3, attributes=["ts"])
        vectors = rows(rng, 50, 8)
        with shoal.SegmentWriter(out_dir, dim=8, metric="cosine", shard_count=3,
                                 attributes=["ts"], one_graph=True, prefix="p") as w:
            w.add(np.arange(50), vectors, labels=[[i % 2] for i in range(50)],
                  attributes={"ts": list(range(50))},
                  payloads=[f"doc {i}" for i in range(50)])
        assert [os.path.basename(f) for f in w.files] == ["p-all.vamana"]
        c.ingest_segments([os.path.abspath(f) for f in w.files], method="copy")
        r = c.get_record(7)
        assert r.labels == [1] and r.attributes == {"ts": 7} and r.payload == b"doc 7"
        ids, _ = c.search(vectors[4], k=5, filter=shoal.any_label([0]))
        assert all(i % 2 == 0 for i in ids)


def test_every_rows_parts_come_through_the_first_of_each_shard_too(db_path, out_dir, rng):
    # Each shard's first row has parts: the writer once dropped them (it
    # took "no row has parts yet" for "this shard keeps no parts").
    with shoal.open(db_path, dim=16, shard_count=2, attributes=["n"]) as db:
        n = 40
        w = shoal.SegmentWriter.for_collection(out_dir, db.collection("default"))
        w.add(np.arange(n), rows(rng, n), labels=[[i] for i in range(n)],
              attributes={"n": list(range(n))}, payloads=[b"p%d" % i for i in range(n)])
        db.ingest_segments(w.finish())
        got = [(r.labels, r.attributes, r.payload) for r in db.get_records(np.arange(n))]
        assert got == [([i], {"n": i}, b"p%d" % i) for i in range(n)]


def test_mismatched_or_damaged_files_are_refused_with_nothing_changed(db_path, out_dir, rng):
    with shoal.open(db_path, dim=16, shard_count=2) as db:
        db.put(1, rows(rng, 1)[0])
        w = shoal.SegmentWriter(out_dir, dim=16, shard_count=3, prefix="three")
        w.add(np.arange(100, 200), rows(rng, 100))
        with pytest.raises(shoal.InvalidArgumentError, match="shard count 3"):
            db.ingest_segments(w.finish())
        w = shoal.SegmentWriter(out_dir, dim=16, shard_count=2, prefix="bad")
        w.add(np.arange(100, 200), rows(rng, 100))
        files = w.finish()
        with open(files[0], "r+b") as f:
            f.seek(4096 + 10)
            b = f.read(1)
            f.seek(4096 + 10)
            f.write(bytes([b[0] ^ 0x40]))
        with pytest.raises(shoal.DataLossError, match="bad-shard-"):
            db.ingest_segments(files)
        with pytest.raises(ValueError):
            db.ingest_segments(files[0])  # one path, not a list
        assert db.stats()["default"]["live_vectors"] == 1
        with pytest.raises(shoal.NotFoundError):
            db.get(150)


def test_writer_refuses_bad_input_and_reuse(out_dir, rng):
    with pytest.raises(shoal.InvalidArgumentError):
        shoal.SegmentWriter(out_dir, dim=16, shard_count=0)
    w = shoal.SegmentWriter(out_dir, dim=16, shard_count=2)
    with pytest.raises(shoal.InvalidArgumentError):
        w.add(np.arange(3), rows(rng, 2))
    with pytest.raises(shoal.InvalidArgumentError):
        w.add(np.arange(2), rows(rng, 2, 8))
    assert w.rows == 0
    assert w.finish() == []
    with pytest.raises(shoal.FailedPreconditionError):
        w.add(np.arange(2), rows(rng, 2))


def test_writer_options_make_a_writer_in_another_process_whose_files_ingest(db_path, out_dir,
                                                                          rng):
    with shoal.open(db_path) as db:
        c = db.create_collection("docs", 16, "cosine", shard_count=3, attributes=["year"],
                                 max_degree=24, build_list_size=48, alpha=1.1, code="none")
        options = c.writer_options
        assert options == {"dim": 16, "metric": "cosine", "shard_count": 3,
                           "attributes": ["year"], "max_degree": 24, "build_list_size": 48,
                           "alpha": pytest.approx(1.1), "code": "none"}
        with shoal.SegmentWriter(out_dir, **options) as w:  # a plain dict: it pickles
            w.add(np.arange(300), rows(rng, 300), attributes={"year": np.full(300, 2024)})
        c.ingest_segments(w.files)
        assert db.stats()["docs"]["live_vectors"] == 300

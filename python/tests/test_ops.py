"""Operations from Python: checkpoints (DB.checkpoint) and exports (Collection.export)."""

import threading
import time

import numpy as np
import pytest

import shoal


def _fill(db, rng, n=2000, dim=16):
    """n records over two flushes and the memtable, some overwritten or deleted."""
    x = rng.random((n, dim), dtype=np.float32)
    db.put_batch(np.arange(n // 2, dtype=np.uint64), x[: n // 2])
    db.flush()
    db.put_batch(np.arange(n // 2, n, dtype=np.uint64), x[n // 2 :])
    x[:100] = rng.random((100, dim), dtype=np.float32)  # overwrites in the memtable
    db.put_batch(np.arange(100, dtype=np.uint64), x[:100])
    for i in range(100, 150):
        db.delete(i)
    return {i: x[i] for i in range(n) if not 100 <= i < 150}


def test_export_yields_every_live_record_once_in_batches(db_path, rng):
    with shoal.open(db_path, dim=16) as db:
        want = _fill(db, rng)
        sizes = []
        got = {}
        for ids, vectors in db.export(batch_size=300):
            sizes.append(len(ids))
            for i, v in zip(ids.tolist(), vectors):
                assert i not in got
                got[i] = v
        assert max(sizes) == 300 and sum(sizes) == len(want)
        assert got.keys() == want.keys()
        assert all(np.array_equal(got[i], want[i]) for i in want)


def test_export_is_a_point_in_time(db_path, rng):
    with shoal.open(db_path, dim=8) as db:
        db.put_batch(np.arange(1000, dtype=np.uint64), rng.random((1000, 8), dtype=np.float32))
        it = db.export(batch_size=100)
        first_ids, _ = next(it)
        db.put_batch(np.arange(1000, 1500, dtype=np.uint64), rng.random((500, 8), dtype=np.float32))
        db.delete(int(first_ids[0]) if int(first_ids[0]) != 999 else 998)
        db.flush()
        db.compact()
        seen = set(first_ids.tolist())
        for ids, _ in it:
            seen.update(ids.tolist())
        assert seen == set(range(1000))


def test_export_of_records_gives_their_parts(db_path, rng):
    with shoal.open(db_path) as db:
        docs = db.create_collection("docs", dim=4, attributes=["ts"])
        docs.put_batch([1, 2, 3], rng.random((3, 4), dtype=np.float32),
                       labels=[[7], [], [7, 9]], attributes=[{"ts": 5}, None, {"ts": -2}],
                       payloads=[b"one", None, "three"])
        records = [r for batch in docs.export(records=True) for r in batch]
        by_id = {r.id: r for r in records}
        assert sorted(by_id) == [1, 2, 3]
        assert by_id[3].labels == [7, 9] and by_id[3].attributes == {"ts": -2}
        assert by_id[3].payload == b"three" and by_id[2].payload == b""
        assert by_id[1].vector.shape == (4,)


def test_export_reports_progress_and_refuses_a_zero_batch(db_path, rng):
    with shoal.open(db_path, dim=4) as db:
        db.put_batch(np.arange(50, dtype=np.uint64), rng.random((50, 4), dtype=np.float32))
        calls = []
        assert sum(len(ids) for ids, _ in db.export(progress=lambda d, t: calls.append((d, t)))) == 50
        assert calls and calls[-1][0] == calls[-1][1] > 0
        with pytest.raises(shoal.InvalidArgumentError):
            db.export(batch_size=0)
        # A batch larger than the collection is one batch, not a huge allocation.
        assert [len(ids) for ids, _ in db.export(batch_size=2**62)] == [50]
        with pytest.raises(shoal.NotFoundError):
            db.collection("absent")


def test_closing_the_database_ends_an_open_export(db_path, rng):
    db = shoal.open(db_path, dim=4)
    db.put_batch(np.arange(500, dtype=np.uint64), rng.random((500, 4), dtype=np.float32))
    it = db.export(batch_size=10)
    next(it)
    db.close()
    with pytest.raises(shoal.FailedPreconditionError):
        next(it)
    it.close()  # harmless afterwards


def test_a_closed_export_stops_and_frees_its_files(db_path, rng):
    with shoal.open(db_path, dim=4) as db:
        db.put_batch(np.arange(100, dtype=np.uint64), rng.random((100, 4), dtype=np.float32))
        with db.export(batch_size=10) as it:
            next(it)
        with pytest.raises(StopIteration):
            next(it)


def test_checkpoint_opens_with_the_same_records(db_path, tmp_path, rng):
    with shoal.open(db_path, dim=16) as db:
        want = _fill(db, rng)
        progress = []
        copy = tmp_path / "copy"
        db.checkpoint(copy, progress=lambda d, t: progress.append((d, t)))
        db.put(5000, rng.random(16, dtype=np.float32))  # after: not in the copy
        assert progress and progress[-1][0] == progress[-1][1]
        with pytest.raises(shoal.AlreadyExistsError):
            db.checkpoint(copy)
    with shoal.open(copy) as copied:
        got = {}
        for ids, vectors in copied.export():
            got.update(zip(ids.tolist(), vectors))
        assert got.keys() == want.keys()
        assert all(np.array_equal(got[i], want[i]) for i in want)


def test_checkpoint_while_another_thread_writes(db_path, tmp_path, rng):
    with shoal.open(db_path, dim=8, memtable_bytes=1 << 16) as db:
        stop = threading.Event()
        written = []

        def writer():
            r = np.random.default_rng(1)
            n = 0
            while not stop.is_set():
                db.put_batch(np.arange(n, n + 64, dtype=np.uint64), r.random((64, 8), dtype=np.float32))
                n += 64
                written.append(n)

        t = threading.Thread(target=writer)
        t.start()
        while not written or written[-1] < 640:
            time.sleep(0.001)
        before = written[-1]
        db.checkpoint(tmp_path / "copy")
        stop.set()
        t.join()
    with shoal.open(tmp_path / "copy") as copied:
        ids = np.concatenate([ids for ids, _ in copied.export()])
        n = len(ids)
        assert n >= before and n % 64 == 0
        assert set(ids.tolist()) == set(range(n))  # a whole prefix of the batches

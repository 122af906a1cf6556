"""Readers: shoal.open(path, read_only=True) in other processes while one writes."""

import multiprocessing as mp
import time

import numpy as np
import pytest

import shoal

DIM = 8
BATCH = 100


def vectors_of(ids, version):
    """The rows written for `ids` by batch `version` (exact in float32)."""
    ids = np.asarray(ids, dtype=np.uint64)
    cols = np.arange(DIM, dtype=np.uint64)
    return (((ids[:, None] * 31 + version * 17 + cols * 7) % 1000) / 8.0).astype(np.float32)


def reader_process(path, acked, stop, results):
    """Catches up in a loop; every id of every batch acknowledged before the
    catch-up must be there with its exact vector, and nothing else."""
    try:
        db = shoal.open(path, read_only=True)
        rounds = 0
        while not stop.is_set():
            before = acked.value
            db.catch_up()
            if before == 0:
                continue
            last = before - 1
            for batch in (0, last // 2, last):
                ids = np.arange(batch * BATCH, (batch + 1) * BATCH, dtype=np.uint64)
                for i in ids[::17]:
                    got = db.get(int(i))
                    assert np.array_equal(got, vectors_of([i], batch)[0]), (int(i), batch)
            # The vector is there (rows may repeat across ids: distance 0 is enough).
            found, distances = db.search(vectors_of([last * BATCH], last)[0], k=5)
            assert distances[0] == 0.0 and found[0] < acked.value * BATCH, (found, distances)
            rounds += 1
        db.close()
        results.put(("ok", rounds))
    except Exception as e:  # reported to the test, which fails on it
        results.put(("error", repr(e)))


def test_reader_processes_follow_a_writer_that_flushes(db_path):
    with shoal.open(db_path, dim=DIM, shard_count=2, memtable_bytes=64 << 10) as db:
        pass
    ctx = mp.get_context("spawn")
    acked = ctx.Value("q", 0)
    stop = ctx.Event()
    results = ctx.Queue()
    readers = [ctx.Process(target=reader_process, args=(db_path, acked, stop, results))
               for _ in range(2)]
    for p in readers:
        p.start()
    with shoal.open(db_path) as db:
        end = time.monotonic() + 3.0
        batch = 0
        while time.monotonic() < end:
            ids = np.arange(batch * BATCH, (batch + 1) * BATCH, dtype=np.uint64)
            db.put_batch(ids, vectors_of(ids, batch))
            if batch % 10 == 9:
                db.flush()
            if batch % 30 == 29:
                db.compact()
            batch += 1
            acked.value = batch
    stop.set()
    outcomes = [results.get(timeout=60) for _ in readers]
    for p in readers:
        p.join(timeout=60)
    assert all(kind == "ok" for kind, _ in outcomes), outcomes
    assert all(rounds > 0 for _, rounds in outcomes), outcomes


def test_a_reader_refuses_writes_and_sees_new_ones_after_catch_up(db_path):
    with shoal.open(db_path, dim=DIM, shard_count=2) as writer:
        writer.put_batch(np.arange(10, dtype=np.uint64), vectors_of(range(10), 0))
        reader = shoal.open(db_path, read_only=True)
        with pytest.raises(shoal.FailedPreconditionError, match="read-only"):
            reader.put(99, vectors_of([99], 0)[0])
        with pytest.raises(shoal.FailedPreconditionError):
            reader.flush()
        writer.put(10, vectors_of([10], 0)[0])
        with pytest.raises(shoal.NotFoundError):
            reader.get(10)
        reader.catch_up()
        assert np.array_equal(reader.get(10), vectors_of([10], 0)[0])
        reader.close()


def test_read_only_open_of_a_missing_database_is_not_found(db_path):
    with pytest.raises(shoal.NotFoundError):
        shoal.open(db_path, read_only=True)

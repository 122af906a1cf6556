"""Several threads on one database; the GIL released while the engine works."""

import threading

import numpy as np

import shoal


def test_threads_writing_and_searching_at_once_see_every_write(db_path):
    with shoal.open(db_path, dim=16, memtable_bytes=1 << 18) as db:
        errors = []
        per_writer = 2000

        def writer(w):
            try:
                rng = np.random.default_rng(w)
                for start in range(0, per_writer, 100):
                    ids = np.arange(start, start + 100, dtype=np.uint64) + w * per_writer
                    db.put_batch(ids, rng.random((100, 16), dtype=np.float32))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        def searcher(s):
            try:
                rng = np.random.default_rng(100 + s)
                for _ in range(200):
                    ids, distances = db.search(rng.random(16, dtype=np.float32), k=10)
                    assert len(ids) == len(set(ids.tolist()))
                    db.search_batch(rng.random((8, 16), dtype=np.float32), k=5)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
        threads += [threading.Thread(target=searcher, args=(s,)) for s in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        db.wait_for_compact()
        assert db.stats()["default"]["live_vectors"] == 3 * per_writer
        for w in range(3):
            got = db.get_records(np.arange(w * per_writer, (w + 1) * per_writer))
            assert all(r is not None for r in got)


def test_a_long_call_lets_other_python_threads_run(db_path, rng):
    # bulk_load of 60K vectors takes a while; with the GIL held the loop
    # below could not run at all until it returned.
    x = rng.random((60000, 32), dtype=np.float32)
    with shoal.open(db_path, dim=32) as db:
        done = threading.Event()
        t = threading.Thread(target=lambda: (db.bulk_load(np.arange(60000), x), done.set()))
        t.start()
        ticks = 0
        while not done.is_set():
            ticks += 1
        t.join()
        assert ticks > 1000


def test_close_while_other_threads_search_never_crashes(db_path, rng):
    db = shoal.open(db_path, dim=8)
    db.put_batch(np.arange(2000), rng.random((2000, 8), dtype=np.float32))
    outcomes = []

    def searcher():
        q = np.ones(8, dtype=np.float32)
        try:
            while True:
                db.search_batch(np.tile(q, (64, 1)), k=10)
        except shoal.FailedPreconditionError:
            outcomes.append("closed")

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    db.close()
    for t in threads:
        t.join()
    assert outcomes == ["closed"] * 3

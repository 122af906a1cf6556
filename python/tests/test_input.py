"""Bad input raises the matching exception, changes nothing, and never crashes."""

import tracemalloc

import numpy as np
import pytest

import shoal


@pytest.fixture
def db(db_path):
    with shoal.open(db_path, dim=8, attributes=["ts"]) as db:
        yield db


def test_float32_c_contiguous_rows_are_read_without_a_copy(db, rng):
    x = rng.random((200_000, 8), dtype=np.float32)  # 6.4 MB
    ids = np.arange(200_000, dtype=np.uint64)
    tracemalloc.start()
    db.put_batch(ids, x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1 << 20  # numpy reports its buffers to tracemalloc: none was made
    # Read-only arrays (Ray's object store, Arrow) are taken as they are.
    x.flags.writeable = False
    db.put_batch(ids[:10], x[:10])
    db.search(x[0])


def test_other_dtypes_and_layouts_are_converted(db, rng):
    x64 = rng.random((10, 8))  # float64
    db.put_batch(list(range(10)), x64)
    assert np.allclose(db.get(3), x64[3].astype(np.float32))
    fortran = np.asfortranarray(rng.random((10, 8), dtype=np.float32))
    db.put_batch(np.arange(10, 20, dtype=np.int32), fortran)
    assert np.array_equal(db.get(12), fortran[2])
    db.put(30, [1, 2, 3, 4, 5, 6, 7, 8])
    strided = rng.random((10, 16), dtype=np.float32)[:, ::2]
    db.search_batch(strided, k=3)


@pytest.mark.parametrize("call, error", [
    (lambda db: db.put(-1, np.ones(8)), ValueError),
    (lambda db: db.put(2**64, np.ones(8)), ValueError),
    (lambda db: db.put(1.5, np.ones(8)), TypeError),
    (lambda db: db.put(1, np.ones(7)), ValueError),
    (lambda db: db.put(1, np.ones((1, 8))), ValueError),
    (lambda db: db.put(1, [np.nan] * 8), ValueError),
    (lambda db: db.put(1, [np.inf] * 8), ValueError),
    (lambda db: db.put(1, "abcdefgh"), TypeError),
    (lambda db: db.put(1, np.ones(8), labels=[-1]), ValueError),
    (lambda db: db.put(1, np.ones(8), labels="ab"), TypeError),
    (lambda db: db.put(1, np.ones(8), attributes={"nope": 1}), ValueError),
    (lambda db: db.put(1, np.ones(8), attributes={"ts": 2**63}), ValueError),
    (lambda db: db.put(1, np.ones(8), payload=3), TypeError),
    (lambda db: db.put(1, np.ones(8), payload=b"x" * (1 << 20 + 1)), ValueError),
    (lambda db: db.put_batch([1, -2], np.ones((2, 8))), ValueError),
    (lambda db: db.put_batch([1, 2], np.ones((3, 8))), ValueError),
    (lambda db: db.put_batch([1.0, 2.0], np.ones((2, 8))), TypeError),
    (lambda db: db.put_batch([[1, 2]], np.ones((2, 8))), ValueError),
    (lambda db: db.put_batch([1, 2], np.ones((2, 8)), payloads=[b"x"]), ValueError),
    (lambda db: db.put_batch([1, 2], np.ones((2, 8)), labels=5), TypeError),
    (lambda db: db.search(np.ones(8), k=0), ValueError),
    (lambda db: db.search(np.ones(8), k=-1), ValueError),
    (lambda db: db.search(np.ones(8), k=2**40), ValueError),
    (lambda db: db.search(np.ones(8), list_size=0), ValueError),
    (lambda db: db.search(np.ones(9)), ValueError),
    (lambda db: db.search(np.ones(8), filter="ts > 3"), TypeError),
    (lambda db: db.search(np.ones(8), filter=shoal.at_least("nope", 1)), ValueError),
    (lambda db: db.search(np.ones(8), filter=shoal.range("ts", 5, 1)), ValueError),
    (lambda db: db.search_batch(np.ones(8)), ValueError),
    (lambda db: db.get(7), KeyError),
    (lambda db: db.collection("absent"), KeyError),
    (lambda db: db.create_collection("bad name!", 4), ValueError),
    (lambda db: db.create_collection("c", 0), ValueError),
    (lambda db: db.create_collection("c", 4, "hamming"), ValueError),
    (lambda db: db.bulk_load([1], np.ones((1, 8)), progress=5), TypeError),
])
def test_bad_input_raises_and_changes_nothing(db, call, error):
    db.put(100, np.ones(8))
    before = db.stats()
    with pytest.raises(error):
        call(db)
    assert db.stats()["default"]["live_vectors"] == before["default"]["live_vectors"]
    assert db.list_collections() == ["default"]
    assert np.array_equal(db.get(100), np.ones(8, dtype=np.float32))


def test_errors_are_shoal_errors_with_the_engines_message(db):
    with pytest.raises(shoal.InvalidArgumentError, match="finite") as info:
        db.put(1, [np.nan] * 8)
    assert isinstance(info.value, shoal.Error) and isinstance(info.value, ValueError)
    with pytest.raises(shoal.NotFoundError) as info:
        db.get(5)
    assert isinstance(info.value, KeyError)


def test_a_closed_database_refuses_every_call(db_path):
    db = shoal.open(db_path, dim=4)
    c = db.create_collection("c", 4)
    db.close()
    db.close()  # again: nothing
    assert db.closed
    for call in (lambda: db.put(1, np.ones(4)), lambda: c.search(np.ones(4)),
                 lambda: db.list_collections(), lambda: db.flush(), lambda: db.stats(),
                 lambda: c.get_record(1)):
        with pytest.raises(shoal.FailedPreconditionError, match="closed"):
            call()


def test_a_database_open_elsewhere_is_refused(db_path):
    with shoal.open(db_path, dim=4):
        with pytest.raises(shoal.FailedPreconditionError):
            shoal.open(db_path)


def test_a_database_without_a_default_collection_says_so(db_path):
    with shoal.open(db_path) as db:
        with pytest.raises(shoal.FailedPreconditionError, match="default collection"):
            db.put(1, np.ones(4))


def test_a_damaged_log_is_a_data_loss_error_naming_the_file(db_path, rng):
    import glob
    import os
    with shoal.open(db_path, dim=8, shard_count=1) as db:
        db.put_batch(np.arange(1000), rng.random((1000, 8), dtype=np.float32))
    logs = sorted(glob.glob(os.path.join(db_path, "**", "*.log"), recursive=True))
    log = max(logs, key=os.path.getsize)
    with open(log, "r+b") as f:
        f.seek(4096)
        f.write(b"\xff" * 64)
    with pytest.raises(shoal.DataLossError, match=os.path.basename(log)):
        shoal.open(db_path)

"""shoal.Filter pickles: it crosses to other processes (Ray actors)."""

import pickle

import numpy as np
import pytest

import shoal


def test_every_kind_of_filter_survives_a_pickle_round_trip(db_path):
    with shoal.open(db_path, dim=4, attributes=["n"]) as db:
        ids = np.arange(100, dtype=np.uint64)
        x = np.random.default_rng(1).random((100, 4), dtype=np.float32)
        db.put_batch(ids, x, labels=[[i % 3, 7] for i in range(100)],
                     attributes={"n": ids.astype(np.int64)})
        filters = [
            shoal.any_label([1, 2]), shoal.all_labels([0, 7]), shoal.no_label([2]),
            shoal.range("n", 10, 50), shoal.at_least("n", 90), shoal.below("n", 5),
            shoal.ids(np.array([3, 4, 5, 2**64 - 2], dtype=np.uint64)),
            (shoal.any_label([1]) & shoal.range("n", 0, 60)) | shoal.ids(np.arange(90, 95)),
        ]
        for f in filters:
            g = pickle.loads(pickle.dumps(f))
            assert repr(g) == repr(f)
            a = db.search_batch(x[:10], k=20, filter=f)
            b = db.search_batch(x[:10], k=20, filter=g)
            np.testing.assert_array_equal(a.ids, b.ids)


def test_a_damaged_filter_state_is_refused():
    state = shoal.any_label([1]).__getstate__()
    for bad in [(99, state[1]),  # another version
                (1, (42, (), "", 0, 0, False, None, ())),  # no such kind
                (1, (4, (), "", 0, 0, False, b"123", ()))]:  # ids not whole uint64s
        with pytest.raises(ValueError):
            shoal.Filter.__new__(shoal.Filter).__setstate__(bad)

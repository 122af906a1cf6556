"""shoal.ray: a collection served by Ray actors, on a local cluster."""

import os
import shutil
import signal
import tempfile
import threading
import time

import numpy as np
import pytest

import shoal

ray = pytest.importorskip("ray")
import shoal.ray as sray  # noqa: E402

from conftest import exact_knn  # noqa: E402

DIM = 16


@pytest.fixture
def coll_path():
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    path = tempfile.mkdtemp(prefix="shoal-ray-pytest-", dir=base)
    yield os.path.join(path, "coll")
    shutil.rmtree(path, ignore_errors=True)


def serve(path, n_parts=2, **kw):
    # Half a CPU a part: two collections fit on the 2-CPU test cluster.
    kw.setdefault("num_cpus", 0.5)
    kw.setdefault("dim", DIM)
    return sray.serve(path, n_parts, **kw)


def data(n, seed=3):
    rng = np.random.default_rng(seed)
    return (rng.random((n, DIM), dtype=np.float32),
            rng.choice(10**12, size=n, replace=False).astype(np.uint64))


def test_merge_orders_ties_by_id_and_pads_as_one_database_pads():
    from shoal.ray._merge import merge_batch, merge_one
    inf, no = np.inf, shoal.NO_ID
    a = (np.array([[5, 9, no]], np.uint64), np.array([[0.5, 1.0, inf]], np.float32),
         np.array([2]))
    b = (np.array([[2, 7, no]], np.uint64), np.array([[1.0, 1.0, inf]], np.float32),
         np.array([2]))
    r = merge_batch([a, b], 1, 3)
    assert r.ids.tolist() == [[5, 2, 7]] and r.counts.tolist() == [3]
    r = merge_batch([(x[0][:, :1], x[1][:, :1], np.array([1])) for x in (a, b)], 1, 1)
    assert r.ids.tolist() == [[5]]
    short = merge_batch([(a[0], a[1], np.array([2])), (np.full((1, 3), no, np.uint64),
                         np.full((1, 3), inf, np.float32), np.array([0]))], 1, 3)
    assert short.ids.tolist() == [[5, 9, no]] and short.counts.tolist() == [2]
    # k above 65536: rows as wide as the longest merged row, not k.
    wide = merge_batch([(a[0][:, :2], a[1][:, :2], np.array([2])),
                        (b[0][:, :2], b[1][:, :2], np.array([2]))], 1, 100000)
    assert wide.ids.shape == (1, 4) and wide.counts.tolist() == [4]
    ids, d = merge_one([(np.array([9, 4], np.uint64), np.array([1.0, 2.0], np.float32)),
                        (np.array([3], np.uint64), np.array([1.0], np.float32))], 2)
    assert ids.tolist() == [3, 9] and d.tolist() == [1.0, 1.0]


def test_search_batch_over_two_parts_is_the_exact_top_k(cluster, coll_path, db_path):
    x, ids = data(3000)
    q = np.random.default_rng(4).random((50, DIM), dtype=np.float32)
    with serve(coll_path) as coll, shoal.open(db_path, dim=DIM) as db:
        coll.put_batch(ids, x)
        db.put_batch(ids, x)
        served = coll.search_batch(q, k=10, list_size=400)
        one = db.search_batch(q, k=10, list_size=400)
        want = exact_knn(x, ids, q, 10)
        assert served.ids.dtype == np.uint64 and served.distances.dtype == np.float32
        np.testing.assert_array_equal(served.ids, want)
        np.testing.assert_array_equal(served.ids, one.ids)
        np.testing.assert_allclose(served.distances, one.distances, rtol=1e-6)
        np.testing.assert_array_equal(served.counts, np.full(50, 10))
        # Both parts hold records: the split is by id hash, near half each.
        live = [p["live_vectors"] for p in coll.stats()["parts"]]
        assert sum(live) == 3000 and min(live) > 1300


def test_search_answers_as_a_row_of_search_batch(cluster, coll_path):
    x, ids = data(500)
    with serve(coll_path) as coll:
        coll.put_batch(ids, x)
        q = x[7] + 0.01
        got_ids, got_d = coll.search(q, k=5, list_size=200)
        row = coll.search_batch(q[None, :], k=5, list_size=200)
        np.testing.assert_array_equal(got_ids, row.ids[0])
        np.testing.assert_array_equal(got_d, row.distances[0])
        assert got_ids[0] == ids[7]


def test_short_rows_are_padded_as_one_database_pads_them(cluster, coll_path):
    x, ids = data(6)
    with serve(coll_path) as coll:
        coll.put_batch(ids, x)
        r = coll.search_batch(x[:2], k=10)
        assert r.ids.shape == (2, 10)
        np.testing.assert_array_equal(r.counts, [6, 6])
        assert (r.ids[:, 6:] == shoal.NO_ID).all() and np.isinf(r.distances[:, 6:]).all()
        assert sorted(r.ids[0, :6].tolist()) == sorted(ids.tolist())
        got, _ = coll.search(x[0], k=10)
        assert len(got) == 6
        empty = coll.search_batch(np.empty((0, DIM), np.float32), k=3)
        assert empty.ids.shape == (0, 3)


def test_filters_cross_to_the_parts(cluster, coll_path):
    x, ids = data(2000)
    labels = [[int(i) % 5] for i in ids]
    year = (ids % 100).astype(np.int64)
    allowed = ids[::3]
    q = np.random.default_rng(5).random((20, DIM), dtype=np.float32)
    with serve(coll_path, attributes=["year"]) as coll:
        coll.put_batch(ids, x, labels=labels, attributes={"year": year})
        f = shoal.any_label([2]) & shoal.range("year", 10, 60) | shoal.ids(allowed)
        r = coll.search_batch(q, k=10, list_size=400, filter=f)
        match = ((ids % 5 == 2) & (year >= 10) & (year < 60)) | np.isin(ids, allowed)
        np.testing.assert_array_equal(r.ids, exact_knn(x[match], ids[match], q, 10))
        one_ids, _ = coll.search(q[0], k=10, list_size=400, filter=shoal.no_label([0, 1, 2, 3]))
        assert all(int(i) % 5 == 4 for i in one_ids) and len(one_ids) == 10


def test_writes_and_reads_go_to_the_owning_part(cluster, coll_path):
    x, ids = data(200)
    with serve(coll_path, attributes=["n"]) as coll:
        coll.put_batch(ids[:100], x[:100])
        for i in range(100, 200):
            coll.put(int(ids[i]), x[i], labels=[1], attributes={"n": i}, payload=b"doc %d" % i)
        np.testing.assert_array_equal(coll.get(int(ids[5])), x[5])
        rec = coll.get_record(int(ids[150]))
        assert (rec.id, rec.labels, rec.attributes, rec.payload) == (
            int(ids[150]), [1], {"n": 150}, b"doc 150")
        absent = 10**13
        records = coll.get_records(np.array([ids[150], absent, ids[3]], dtype=np.uint64))
        assert records[0].payload == b"doc 150" and records[1] is None
        assert records[2].id == int(ids[3])
        coll.delete(int(ids[5]))
        coll.delete(absent)
        with pytest.raises(shoal.NotFoundError):
            coll.get(int(ids[5]))
        with pytest.raises(KeyError):
            coll.get_record(int(ids[5]))
        found, _ = coll.search(x[5], k=3, list_size=200)
        assert int(ids[5]) not in found.tolist()
        # Each part holds exactly the ids that hash to it.
        owner = sray.part_of(ids, 2)
        live = [p["live_vectors"] for p in coll.stats()["parts"]]
        assert live == [int((owner == p).sum()) - int(owner[5] == p) for p in (0, 1)]
        assert coll.part_of(int(ids[7])) == owner[7]


def test_bad_input_is_refused_before_any_part_writes(cluster, coll_path):
    x, ids = data(100)
    with serve(coll_path, attributes=["n"]) as coll:
        with pytest.raises(shoal.InvalidArgumentError):
            coll.put_batch(ids, x[:99])
        with pytest.raises(shoal.InvalidArgumentError):
            coll.put_batch(ids, x, payloads=[b"x"] * 99)
        with pytest.raises(shoal.InvalidArgumentError):
            coll.put_batch(ids, x, attributes={"m": np.zeros(100, np.int64)})
        with pytest.raises(shoal.InvalidArgumentError):
            coll.put_batch(np.array([-1]), x[:1])
        with pytest.raises(TypeError):
            coll.put_batch(np.array([1.5]), x[:1])
        with pytest.raises(shoal.InvalidArgumentError):
            coll.search_batch(x[:, :8])
        assert coll.stats()["live_vectors"] == 0


def test_read_only_arrays_from_the_object_store_are_taken(cluster, coll_path):
    x, ids = data(1000)
    x_ro, ids_ro = ray.get(ray.put(x)), ray.get(ray.put(ids))
    assert not x_ro.flags.writeable
    with serve(coll_path) as coll:
        coll.put_batch(ids_ro, x_ro)
        q_ref = ray.put(x[:20])
        by_ref = coll.search_batch(q_ref, k=1, list_size=200)
        np.testing.assert_array_equal(by_ref.ids[:, 0], ids[:20])
        by_array = coll.search_batch(ray.get(q_ref), k=1, list_size=200)
        np.testing.assert_array_equal(by_array.ids, by_ref.ids)


def test_reopened_collection_keeps_its_records_and_its_part_count(cluster, coll_path):
    x, ids = data(300)
    with serve(coll_path, fsync="always") as coll:
        coll.put_batch(ids, x)
    with pytest.raises(ValueError, match="2 parts"):
        serve(coll_path, 3)
    with sray.serve(coll_path, num_cpus=0.5) as coll:  # parts and dim as stored
        assert (coll.n_parts, coll.dim) == (2, DIM)
        assert coll.stats()["live_vectors"] == 300
        np.testing.assert_array_equal(coll.get(int(ids[9])), x[9])
        coll.close()
        with pytest.raises(shoal.FailedPreconditionError):
            coll.get(int(ids[9]))


def test_a_part_that_cannot_open_fails_serve_and_frees_its_cpus(cluster, coll_path):
    sray._layout.write_parts(coll_path, 2)
    with open(sray._layout.part_dir(coll_path, 1), "w") as f:
        f.write("a file where part 1's directory belongs")
    with pytest.raises(ray.exceptions.RayActorError, match="Not a directory"):
        serve(coll_path, num_cpus=1)
    os.remove(sray._layout.part_dir(coll_path, 1))
    with serve(coll_path, num_cpus=1) as coll:  # both CPUs of the cluster again
        assert coll.stats()["live_vectors"] == 0


class Writer(threading.Thread):
    """put_batch()es 50 records at a time until stopped; `acked` counts the
    batches whose call returned."""

    def __init__(self, coll):
        super().__init__(daemon=True)
        self.coll, self.acked, self.errors = coll, 0, []
        self.stop = threading.Event()

    @staticmethod
    def batch(b):
        ids = np.arange(b * 50, b * 50 + 50, dtype=np.uint64)
        return ids, (ids[:, None] * np.ones((1, DIM))).astype(np.float32)

    def run(self):
        while not self.stop.is_set():
            try:
                self.coll.put_batch(*self.batch(self.acked))
                self.acked += 1
            except ray.exceptions.RayActorError as e:  # max_task_retries=0: not acknowledged
                self.errors.append(e)
            except Exception as e:  # noqa: BLE001 - reported by the test
                self.errors.append(e)
                return

    def wait_for(self, batches, timeout=60):
        deadline = time.monotonic() + timeout
        target = self.acked + batches
        while self.acked < target:
            assert time.monotonic() < deadline, f"the writer is stuck: {self.errors}"
            assert self.is_alive(), f"the writer stopped: {self.errors}"
            time.sleep(0.01)


def check_every_acknowledged_write(coll, batches):
    ids = np.arange(batches * 50, dtype=np.uint64)
    records = coll.get_records(ids)
    missing = [int(i) for i, r in zip(ids, records) if r is None]
    assert not missing, f"{len(missing)} acknowledged ids lost, e.g. {missing[:5]}"
    for i, r in zip(ids.tolist(), records):
        assert np.array_equal(r.vector, np.full(DIM, i, np.float32))


def kill_part(coll, p, how):
    """Kills part p's process; returns its pid."""
    pid = ray.get(coll.actors[p].info.remote())["pid"]
    if how == "sigkill":
        os.kill(pid, signal.SIGKILL)
    else:
        ray.kill(coll.actors[p], no_restart=False)
    return pid


def test_part_killed_mid_write_restarts_with_every_acknowledged_write(cluster, coll_path):
    with serve(coll_path, memtable_bytes=1 << 16) as coll:
        writer = Writer(coll)
        writer.start()
        try:
            writer.wait_for(20)
            old_pid = kill_part(coll, 0, "sigkill")
            writer.wait_for(20)  # the call caught by the kill was retried on the new part
        finally:
            writer.stop.set()
            writer.join()
        assert not writer.errors
        info = ray.get(coll.actors[0].info.remote())
        assert info["restarted"] and info["pid"] != old_pid
        check_every_acknowledged_write(coll, writer.acked)
        assert coll.stats()["live_vectors"] == writer.acked * 50


@pytest.mark.slow
@pytest.mark.parametrize("retries", [-1, 0])
def test_parts_killed_over_and_over_lose_no_acknowledged_write(cluster, coll_path, retries):
    with serve(coll_path, memtable_bytes=1 << 16, max_task_retries=retries) as coll:
        writer = Writer(coll)
        writer.start()
        try:
            for cycle in range(6):
                writer.wait_for(10)
                kill_part(coll, cycle % 2, "sigkill" if cycle % 3 else "ray.kill")
            writer.wait_for(10)
        finally:
            writer.stop.set()
            writer.join()
        if retries == -1:
            assert not writer.errors
        else:
            assert all(isinstance(e, ray.exceptions.RayActorError) for e in writer.errors)
        check_every_acknowledged_write(coll, writer.acked)

"""A writer process killed with SIGKILL loses no acknowledged write."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

import shoal

WRITER = textwrap.dedent("""
    import sys, numpy as np, shoal
    path, fsync = sys.argv[1], sys.argv[2]
    db = shoal.open(path, dim=8, fsync=fsync, memtable_bytes=1 << 16)
    docs = db.collection("docs") if "docs" in db.list_collections() else \\
        db.create_collection("docs", 8, attributes=["n"])
    rng = np.random.default_rng(1)
    batch = 0
    while True:
        ids = np.arange(batch * 50, batch * 50 + 50, dtype=np.uint64)
        x = (ids[:, None] * np.ones((1, 8))).astype(np.float32)
        db.put_batch(ids, x)
        docs.put_batch(ids, x, labels=[[int(i) % 7] for i in ids],
                       attributes={"n": ids.astype(np.int64)},
                       payloads=[b"doc %d" % i for i in ids])
        print(batch, flush=True)  # acknowledged: both calls returned
        batch += 1
""")


def run_and_kill(path, fsync, seconds):
    child = subprocess.Popen([sys.executable, "-c", WRITER, path, fsync],
                             stdout=subprocess.PIPE, text=True)
    time.sleep(seconds)
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate()
    acked = [int(line) for line in out.split()]
    return acked[-1] if acked else -1


def test_sigkill_loses_no_acknowledged_write(db_path):
    for cycle, fsync in enumerate(["never", "always", "interval", "never"]):
        last = run_and_kill(db_path, fsync, 0.6 + 0.2 * cycle)
        assert last >= 0, "the writer acknowledged nothing"
        with shoal.open(db_path) as db:
            docs = db.collection("docs")
            ids = np.arange((last + 1) * 50, dtype=np.uint64)
            vectors = db.get_records(ids)
            records = docs.get_records(ids)
            for i, v, r in zip(ids.tolist(), vectors, records):
                assert v is not None and np.array_equal(v.vector, np.full(8, i, np.float32))
                assert r is not None and (r.labels, r.attributes, r.payload) == (
                    [i % 7], {"n": i}, b"doc %d" % i)

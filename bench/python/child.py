#!/usr/bin/env python3
# Copyright 2026 The shoal Authors.
"""Runs one peer of the head-to-head in a process of its own: imports the
library, builds over the base vectors, sweeps its search knob, and writes
what it measured as JSON. head_to_head.py starts one of these per peer, so
that no two libraries share a heap and each peak memory is its own.

    child.py SPEC.json RESULT.json

Memory, from /proc/self/status: `before_build` is the RSS once the data is
loaded (interpreter, library, base and queries); `build_peak` is the peak
RSS during the build above that (VmHWM, reset through /proc/self/clear_refs
just before it); `index` is the RSS after the build above before_build
(what the index keeps; a library that copies the base counts the copy);
`after_sweep` the same after every search (a mapped index has then paged
in what the searches touched). Files on tmpfs are memory that RSS sees only
where they are mapped and touched: `files` gives their size (shoal's
database on /dev/shm), `mapped_shmem` the part of them in RSS (RssShmem).

A sweep ends early once both recalls reach `stop_recall`, or once the
recall has not risen for PLATEAU_POINTS points.

Timing: build is the wall time of Peer.build() (after the untimed
Peer.prepare()). Single: the first `single_queries` queries one per call on
this thread, timed as one loop. Batch: all queries in one call on
`threads` threads, repeated until `min_seconds` passed; QPS of the mean.
"""

import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import datasets  # noqa: E402
import peers  # noqa: E402

MIB = 1 << 20
PLATEAU_POINTS = 3   # a sweep ends after this many points without a gain in recall


def proc_status(field):
    """A VmRSS/VmHWM-style field of /proc/self/status, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak():
    """Sets VmHWM back to the current RSS (Linux 4.0+); False when refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def recall_at_k(ids, truth, k):
    """Mean fraction of each row's k true neighbours among its first k ids."""
    ids = np.asarray(ids)[:, :k].astype(np.int64)   # padding (-1, 2^64-1) never matches
    hits = (ids[:, :, None] == truth[:, None, :k]).any(axis=2).sum()
    return float(hits) / (truth.shape[0] * k)


def run_single(peer, queries, k):
    out = np.full((queries.shape[0], k), -1, dtype=np.int64)
    start = time.perf_counter()
    for i in range(queries.shape[0]):
        ids = peer.search(queries[i], k)
        out[i, :len(ids)] = np.asarray(ids)[:k].astype(np.int64)
    return out, queries.shape[0] / (time.perf_counter() - start)


def run_batch(peer, queries, k, min_seconds):
    runs, start = 0, time.perf_counter()
    first = None
    while True:
        ids = peer.search_batch(queries, k)
        runs += 1
        first = ids if first is None else first
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            break
    return np.asarray(first), runs * queries.shape[0] / elapsed


def sweep(peer, spec, queries, truth, log):
    k = spec["k"]
    single_q = queries[:spec["single_queries"]]
    points = []
    values = peer.sweep()
    for value in values:
        peer.set_knob(value)
        if not points:
            peer.search_batch(queries[:min(100, len(queries))], k)   # warm-up, untimed
        point = {"knob": value if not isinstance(value, tuple) else list(value)}
        if not spec["batch_only"]:
            ids, qps = run_single(peer, single_q, k)
            point["single"] = {"recall": recall_at_k(ids, truth[:len(single_q)], k), "qps": qps}
        ids, qps = run_batch(peer, queries, k, spec["min_seconds"])
        point["batch"] = {"recall": recall_at_k(ids, truth, k), "qps": qps}
        points.append(point)
        log(f"{peer.knob}={value}: " + ", ".join(
            f"{mode} recall {point[mode]['recall']:.4f} {point[mode]['qps']:.0f} QPS"
            for mode in ("single", "batch") if mode in point))
        if all(point[m]["recall"] >= spec["stop_recall"] for m in ("single", "batch")
               if m in point) or _plateau(points):
            break
    return points


def _plateau(points, span=PLATEAU_POINTS):
    """True when the batch recall has not risen over the last `span` points:
    the knob has stopped buying recall (a quantized index's ceiling)."""
    if len(points) <= span:
        return False
    recent = [p["batch"]["recall"] for p in points[-span - 1:]]
    return max(recent[1:]) <= recent[0]


def run(spec, result, log):
    result["stage"] = "import"
    cls = peers.peer_class(spec["peer"])
    peer = cls(spec["metric"], spec["threads"], spec["workdir"], spec["quick"],
               cosine_as_l2=spec["cosine"] == "unit")
    result.update(name=peer.name, dist=peer.dist, knob=peer.knob, batch_api=peer.batch_api,
                  native_metric=peer.native_metric, normalized=peer.normalize)
    peer.load()
    result["version"] = peer.version()

    result["stage"] = "data"
    base, _ = datasets.read_vectors(spec["base"], spec["base_rows"])
    queries = np.load(spec["queries"])
    truth = np.load(spec["truth"])
    if peer.normalize:
        base, queries = datasets.normalized(base), datasets.normalized(queries)

    result["stage"] = "build"
    peer.prepare(base)
    before = proc_status("VmRSS")
    shmem_before = proc_status("RssShmem")
    peak_ok = reset_peak()
    start = time.perf_counter()
    peer.build(base)
    result["build_seconds"] = time.perf_counter() - start
    memory = {"before_build_mib": before / MIB,
              "build_peak_mib": (proc_status("VmHWM") - before) / MIB if peak_ok else None,
              "index_mib": (proc_status("VmRSS") - before) / MIB}
    result["params"] = peer.params()
    result["memory"] = memory
    log(f"built in {result['build_seconds']:.1f} s, +{memory['index_mib']:.0f} MiB")

    result["stage"] = "search"
    result["points"] = sweep(peer, spec, queries, truth, log)
    memory["after_sweep_mib"] = (proc_status("VmRSS") - before) / MIB
    memory["files_mib"] = peer.footprint_bytes() / MIB
    memory["mapped_shmem_mib"] = (proc_status("RssShmem") - shmem_before) / MIB
    memory["peak_total_mib"] = proc_status("VmHWM") / MIB
    result["stage"] = "close"
    peer.close()
    del result["stage"]


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: child.py SPEC.json RESULT.json")
    with open(argv[1]) as f:
        spec = json.load(f)
    result = {"peer": spec["peer"]}

    def log(msg):
        print(f"[{spec['peer']}] {msg}", file=sys.stderr, flush=True)

    try:
        run(spec, result, log)
    except BaseException as e:  # noqa: B036 - every failure is a result to report
        tb = traceback.extract_tb(e.__traceback__)
        stage = result.pop("stage", "import")
        result["error"] = f"{type(e).__name__}: {e}".strip()
        result["error_stage"] = stage
        result["traceback"] = traceback.format_list(tb[-4:])
        log(f"failed ({stage}): {result['error']}")
    with open(argv[2], "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)

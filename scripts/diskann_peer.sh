#!/usr/bin/env bash
# DiskANN's own disk index as a peer of shoal's disk mode (issue 20), in one
# command: builds comprehensive_bench (Release), exports the data set and its
# exact top-10 with it, installs diskannpy and numpy from PyPI into a venv,
# then builds DiskANN's disk index and searches it (bench/peers/diskann_disk_peer.py).
# Not part of the tests or CI.
#
# Usage: scripts/diskann_peer.sh [DATASET [diskann_disk_peer.py flags...]]
#   DATASET: small, medium (default), large or embed (comprehensive_bench's).
#   SHOAL_DISKANN_WORK: where the venv, data, index and results go; must be
#     on a real disk, not tmpfs (default /var/tmp/shoal-diskann).
#   BENCH_FLAGS: extra comprehensive_bench flags for the export, e.g.
#     "--base b.fbin --query q.fbin" (then DATASET only names the output).
# The export and the index are kept and reused; delete them, or pass
# --rebuild for the index, to start again.
set -euo pipefail
cd "$(dirname "$0")/.."
dataset=${1:-medium}
shift || true
work=${SHOAL_DISKANN_WORK:-/var/tmp/shoal-diskann}
mkdir -p "$work"

scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=OFF
cmake --build build --target comprehensive_bench

if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv" || {
    apt-get install -y --no-install-recommends python3-venv && python3 -m venv "$work/venv"; }
fi
"$work/venv/bin/pip" install --quiet diskannpy==0.7.0 numpy

data="$work/$dataset-data"
if [ ! -f "$data/dataset.json" ]; then
  # shellcheck disable=SC2086  # BENCH_FLAGS is a list of flags
  ./build/bench/comprehensive_bench --dataset "$dataset" ${BENCH_FLAGS:-} --export_dir "$data"
fi
exec "$work/venv/bin/python" bench/peers/diskann_disk_peer.py --data "$data" \
  --index_dir "$work/$dataset-index" --output "$work/$dataset-diskann.json" "$@"

#!/usr/bin/env bash
# Installs everything shoal needs to build, test and benchmark, from Debian's
# packages. Idempotent. Runs apt-get as root (directly, or through sudo).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
PACKAGES=(
  cmake ninja-build g++ pkg-config
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libxxhash-dev libfmt-dev
  # comprehensive_bench --compare (peers; CMake skips a missing one) and
  # tools/plot_bench.py. libfaiss-dev pulls in the reference BLAS/LAPACK.
  libhnswlib-dev libfaiss-dev python3-matplotlib
  # scripts/test.sh: the libFuzzer targets (tests/fuzz/) are built with clang.
  clang libclang-rt-14-dev
  # io_uring reads for disk-resident segments (optional: CMake falls back to
  # pread without it).
  liburing-dev
  # tests/disk_full_test.cc: a small ext4 on a loop device (mkfs.ext4, mount).
  e2fsprogs mount
  # The Python package (pip install .): headers to build the extension
  # against, venv and pip to install it and its tests' packages (nanobind,
  # scikit-build-core, numpy, pytest come from the package index).
  python3-dev python3-venv python3-pip
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

#!/usr/bin/env bash
# Sets up, builds (Release) and runs comprehensive_bench.
# Usage: scripts/bench.sh [comprehensive_bench flags...]   (default: --dataset small)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=OFF
cmake --build build --target comprehensive_bench
if [ "$#" -eq 0 ]; then set -- --dataset small; fi
exec ./build/bench/comprehensive_bench "$@"

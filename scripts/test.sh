#!/usr/bin/env bash
# Sets up, builds with AddressSanitizer + UndefinedBehaviorSanitizer, and runs
# the default test suite (ctest); runs the concurrency tests under
# ThreadSanitizer. Also checks that an installed shoal can be
# used by another CMake project.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
jobs=$(nproc)

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSHOAL_SANITIZE=address,undefined -DSHOAL_BUILD_BENCH=OFF
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

# ThreadSanitizer on the tests that run threads against each other.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSHOAL_SANITIZE=thread -DSHOAL_BUILD_BENCH=OFF -DSHOAL_BUILD_TOOLS=OFF
cmake --build build-tsan -j "$jobs" --target concurrency_test wal_test
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R '^(ConcurrencyTest|EveryFsyncPolicy/ConcurrencyTest|WalTest)'

# The installed package works for a consumer: find_package(shoal) + shoal::shoal.
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake -S . -B build-install -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSHOAL_BUILD_TESTS=OFF -DSHOAL_BUILD_BENCH=OFF -DSHOAL_BUILD_TOOLS=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix/usr"
cmake --build build-install -j "$jobs"
cmake --install build-install
cmake -S tests/consumer -B "$prefix/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix/usr"
cmake --build "$prefix/consumer"
"$prefix/consumer/consumer" "$prefix/db"
echo "consumer: 1 passed, 0 failed"

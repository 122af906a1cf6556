// Copyright 2026 The shoal Authors.
//
// Small helpers shared by benchmarks: fail-fast status checks, a stopwatch,
// scratch directories and the raw-write baseline.

#ifndef SHOAL_BENCH_COMMON_BENCH_UTIL_H_
#define SHOAL_BENCH_COMMON_BENCH_UTIL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shoal_bench {

// Prints "error: <what>: <status>" on stderr and exits with status 1.
[[noreturn]] void Die(std::string_view what, const absl::Status& status);

inline void CheckOk(const absl::Status& status, std::string_view what) {
  if (!status.ok()) Die(what, status);
}

template <typename T>
T ValueOrDie(absl::StatusOr<T> result, std::string_view what) {
  if (!result.ok()) Die(what, result.status());
  return *std::move(result);
}

// Writes `text` to path.tmp and renames it over `path` (a reader sees the
// old file or the whole new one); dies on an error.
void WriteFileAtomically(const std::string& path, const std::string& text);

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// CPU time (user + system) of every thread of this process so far: with the
// wall clock it tells the work a run did from the waits and the preemptions
// of a busy machine.
double ProcessCpuSeconds();

// Removes `path` and everything under it; OK when it does not exist.
absl::Status RemoveTree(const std::string& path);
// Creates `path` and its missing parents; OK when it exists.
absl::Status MakeDirs(const std::string& path);

// How far apart repeated measurements lie: (largest - smallest) / median,
// 0 when the median is 0.
inline double Spread(double smallest, double largest, double median) {
  return median > 0 ? (largest - smallest) / median : 0;
}

struct RawWriteResult {
  size_t bytes = 0;
  double write_seconds = 0;      // the write() calls only
  double fdatasync_seconds = 0;  // the fdatasync after them, timed apart
};

// The baseline for ingestion bandwidth: creates `path` (truncating), writes
// `total_bytes` (0: data.size()) with sequential write() calls of at most
// `chunk_bytes`, `data` over and over, then fdatasyncs, closes and removes
// the file.
absl::StatusOr<RawWriteResult> RawSequentialWrite(const std::string& path,
                                                  std::span<const std::byte> data,
                                                  size_t chunk_bytes, size_t total_bytes = 0);

// Calls fn(begin, end) over [0, n) in chunks of `chunk` indices, handed out
// to `threads` threads (0 = all cores); returns when all are done.
void ParallelChunks(size_t n, uint32_t threads, size_t chunk,
                    const std::function<void(size_t begin, size_t end)>& fn);

// `threads`, or the number of hardware threads when it is 0.
uint32_t ResolveThreads(uint32_t threads);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_BENCH_UTIL_H_

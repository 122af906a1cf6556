// Copyright 2026 The shoal Authors.
//
// SHOAL_DEBUG_TIMING=1 in the environment makes the write path, flushes and
// searches print where their time went: one CSV line per operation on
// stderr, each kind of operation preceded once by its header line. Unset,
// each instrumented place costs one branch on a constant read at start-up.

#ifndef SHOAL_SRC_UTIL_DEBUG_TIMING_H_
#define SHOAL_SRC_UTIL_DEBUG_TIMING_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace shoal::timing {

// Read once, when the library is loaded.
extern const bool kEnabled;

inline int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Prints "shoal_timing,<kind>,<fields>" to stderr, after
// "shoal_timing,<kind>,<header>" the first time `kind` is printed.
// Thread-safe; lines are never interleaved.
void Emit(std::string_view kind, std::string_view header, const std::string& fields);

}  // namespace shoal::timing

#endif  // SHOAL_SRC_UTIL_DEBUG_TIMING_H_

// Copyright 2026 The shoal Authors.
//
// SHOAL_DEBUG_TIMING=1 in the environment makes the write path, flushes and
// searches print where their time went: one CSV line per operation on
// stderr, each kind of operation preceded once by its header line. Unset,
// each instrumented place costs one branch on a constant read at start-up
// (timing::Scope).

#ifndef SHOAL_SRC_UTIL_DEBUG_TIMING_H_
#define SHOAL_SRC_UTIL_DEBUG_TIMING_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

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

// Times one operation, as a scope: Lap() returns the microseconds since the
// previous lap (or the start), Line() sets the fields of the line that the
// destructor emits. Off (kEnabled false), every call is one branch and
// Lap() returns 0, so callers may add laps up unconditionally.
class Scope {
 public:
  // `kind` and `header` as Emit's; both must outlive the scope.
  Scope(std::string_view kind, std::string_view header) : kind_(kind), header_(header) {
    if (kEnabled) start_ = last_ = NowMicros();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  ~Scope() {
    if (kEnabled && !fields_.empty()) Emit(kind_, header_, fields_);
  }

  int64_t Lap() {
    if (!kEnabled) return 0;
    const int64_t now = NowMicros();
    const int64_t lap = now - last_;
    last_ = now;
    return lap;
  }
  // Microseconds since the start; 0 when off.
  int64_t Total() const { return kEnabled ? NowMicros() - start_ : 0; }
  // The line's fields, comma-separated: anything absl::StrCat takes.
  template <typename... Fields>
  void Line(const Fields&... fields) {
    if (!kEnabled) return;
    fields_.clear();
    bool first = true;
    ((absl::StrAppend(&fields_, first ? "" : ",", fields), first = false), ...);
  }

 private:
  std::string_view kind_, header_;
  int64_t start_ = 0, last_ = 0;
  std::string fields_;
};

}  // namespace shoal::timing

#endif  // SHOAL_SRC_UTIL_DEBUG_TIMING_H_

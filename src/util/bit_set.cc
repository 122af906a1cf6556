// Copyright 2026 The shoal Authors.

#include "util/bit_set.h"

namespace shoal {

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("popcnt"))) size_t CountWithPopcnt(const uint64_t* words, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) c += static_cast<size_t>(__builtin_popcountll(words[i]));
  return c;
}
bool HasPopcnt() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt") != 0;
  }();
  return has;
}
#endif

size_t CountPortable(const uint64_t* words, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) c += static_cast<size_t>(std::popcount(words[i]));
  return c;
}

}  // namespace

size_t BitSet::Count() const {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (HasPopcnt()) return CountWithPopcnt(words_.data(), words_.size());
#endif
  return CountPortable(words_.data(), words_.size());
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// Software prefetch of a vector about to be compared. Graph searches jump to
// unrelated nodes at every step, which no hardware prefetcher predicts: asking
// for the next few vectors while computing the current distance overlaps
// their memory latency with useful work.

#ifndef SHOAL_SRC_GRAPH_PREFETCH_H_
#define SHOAL_SRC_GRAPH_PREFETCH_H_

#include <cstddef>

namespace shoal::graph {

inline constexpr size_t kCacheLine = 64;

// Requests the first min(bytes, max_bytes) bytes at p into the caches. The
// hardware streamer picks up the rest of a long vector once it has seen the
// first lines, so large vectors need only a prefix. Never faults.
inline void PrefetchBytes(const void* p, size_t bytes, size_t max_bytes = 1024) {
  const char* c = static_cast<const char*>(p);
  const size_t n = bytes < max_bytes ? bytes : max_bytes;
  for (size_t off = 0; off < n; off += kCacheLine) __builtin_prefetch(c + off, 0, 3);
}

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_PREFETCH_H_

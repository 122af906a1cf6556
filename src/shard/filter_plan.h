// Copyright 2026 The shoal Authors.
//
// The filtered-search planner's threshold (shard_read.cc,
// SearchSegmentFiltered): a segment is walked only when more of its nodes
// match than ScanPerListEntry(dim) times the walk's list (max(L, k)), and
// scanned otherwise. A scan's cost grows with the matches' code bytes (dim,
// plus what each node costs besides), a walk's with its list: on embed
// (384-d, 50K-node segments) a scan of a match cost about 48 ns and a walk
// about 8 us per list entry at 10% selectivity, so they cross near 160
// matches per list entry there; fewer dimensions make a scan cheaper.
// FilterScanCost() is a process-wide setting so that probes can force either
// path (0: always walk; a huge value: always scan) and measure where they
// cross; applications never set it.

#ifndef SHOAL_SRC_SHARD_FILTER_PLAN_H_
#define SHOAL_SRC_SHARD_FILTER_PLAN_H_

#include <atomic>
#include <cstdint>

namespace shoal {

// Measured: docs/performance.md, "Filtered search" (bench/probes/filter_probe).
inline constexpr uint64_t kDefaultFilterScanCost = 160 * (384 + 128);

inline std::atomic<uint64_t>& FilterScanCost() {
  static std::atomic<uint64_t> value{kDefaultFilterScanCost};
  return value;
}

// A walk that follows a label graph (SegmentReader::LabelGraph) costs about
// this many times less per list entry than one that gathers its matches
// step by step: measured 5.5x on medium and 3.4x on embed at 10%
// (docs/performance.md, "Filtered search"), so scans give way to it sooner.
inline constexpr uint64_t kLabelGraphWalkSpeedup = 4;

// Matches per list entry below which a segment of dim-dimensional vectors is
// scanned; `label_graph`: when its walk would follow a label graph.
inline uint64_t ScanPerListEntry(uint32_t dim, bool label_graph = false) {
  const uint64_t per_entry =
      FilterScanCost().load(std::memory_order_relaxed) / (uint64_t{dim} + 128);
  return label_graph ? per_entry / kLabelGraphWalkSpeedup : per_entry;
}

}  // namespace shoal

#endif  // SHOAL_SRC_SHARD_FILTER_PLAN_H_

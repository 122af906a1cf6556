// Copyright 2026 The shoal Authors.

#include "segment/segment_scan.h"

#include "distance/distance.h"
#include "util/bit_set.h"

namespace shoal::segment {

absl::Status ScanSegment(const Segment& segment, Metric metric, uint32_t dim,
                         const float* query,
                         const AnswerFilter& admit,
                         TopK* top, SegmentSearchStats* stats) {
  uint64_t computed = 0;
  uint32_t node = 0;  // ForEachVector goes in node order, every node once
  absl::Status status =
      segment.ForEachVector([&](uint64_t id, uint64_t sequence, const float* vector) {
        if (!admit.Admits(id, sequence, node++)) return;
        ++computed;
        top->Push(id, Distance(metric, query, vector, dim));
      });
  if (stats != nullptr) stats->distance_computations += computed;
  return status;
}

}  // namespace shoal::segment

namespace shoal {

absl::Status Segment::ScanNodeList(const float* query, const SearchOptions& options,
                                   std::span<const uint32_t> nodes,
                                   const segment::AnswerFilter& admit, TopK* top,
                                   SegmentSearchStats* stats) const {
  BitSet set;
  set.Reset(vector_count());
  for (const uint32_t node : nodes) set.Set(node);
  return ScanNodes(query, options, set, admit, top, stats);
}

}  // namespace shoal

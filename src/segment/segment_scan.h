// Copyright 2026 The shoal Authors.
//
// What a segment's walk falls back to when it is asked to search the whole
// segment: a list (SearchOptions::list_size) or k at least as long as the
// segment holds (DB::Search's contract: "a list as long as a segment
// searches all of it"; a k that large asks for every vector). The list is
// the segment's share of the caller's (shard_read.cc: in proportion to its
// size against the shard's largest), so a list_size at least the largest
// segment's size scans every segment. A walk that long would expand every
// node it can reach, reading each node's list besides its vector, and could still miss a node no edge
// leads to (a graph written before every build connected its nodes, issue
// 41); a scan reads each vector once, in file order, and misses nothing.

#ifndef SHOAL_SRC_SEGMENT_SEGMENT_SCAN_H_
#define SHOAL_SRC_SEGMENT_SEGMENT_SCAN_H_

#include <algorithm>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "segment/answer_filter.h"
#include "segment/segment.h"
#include "shoal/options.h"
#include "util/top_k.h"

namespace shoal::segment {

// Whether Search with `options` scans a segment of `vector_count` vectors.
inline bool SearchScans(const SearchOptions& options, uint64_t vector_count) {
  return std::max(options.list_size, options.k) >= vector_count;
}

// Offers every live entry of `segment` that `admit` admits to `top`, at its exact distance under
// `metric` from `query` (dim floats); adds the distances it computed to
// *stats (may be null). DataLossError as Segment::ForEachVector.
[[nodiscard]] absl::Status ScanSegment(
    const Segment& segment, Metric metric, uint32_t dim, const float* query,
    const AnswerFilter& admit, TopK* top,
    SegmentSearchStats* stats);

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_SEGMENT_SCAN_H_

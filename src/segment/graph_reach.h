// Copyright 2026 The shoal Authors.
//
// Which nodes of a segment's graph a walk can reach. Every walk starts at
// the medoid (some also at entry points spread over the node order), so a
// node no path from the medoid leads to is found only by a walk that starts
// near it, or by a scan (segment_scan.h). Builds since issue 41 connect
// every node (graph/vamana_builder.h); `shoal verify` reports older graphs that do not.

#ifndef SHOAL_SRC_SEGMENT_GRAPH_REACH_H_
#define SHOAL_SRC_SEGMENT_GRAPH_REACH_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "segment/segment.h"

namespace shoal::segment {

// How many of `segment`'s nodes no path from its medoid reaches (0 for a
// segment without vectors). Reads every node's list once (ForEachNode);
// holds about 4 (R + 2) bytes a node while it runs. DataLossError as
// ForEachNode.
[[nodiscard]] absl::StatusOr<uint64_t> CountUnreachableNodes(const Segment& segment);

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_GRAPH_REACH_H_

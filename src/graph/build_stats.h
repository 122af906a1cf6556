// Copyright 2026 The shoal Authors.
//
// Where the time of a graph build went (VamanaBuilder fills it; a segment
// build adds its own part, segment/segment.h's SegmentBuildStats).

#ifndef SHOAL_SRC_GRAPH_BUILD_STATS_H_
#define SHOAL_SRC_GRAPH_BUILD_STATS_H_

#include <atomic>
#include <cstdint>

namespace shoal::graph {

struct GraphBuildStats {
  double medoid_seconds = 0;
  double insert_seconds = 0;  // the insertion pass, the final prune, connect_seconds
  double connect_seconds = 0;  // of which: making every node findable (step 4 of
                               // graph/vamana_builder.h)
  uint64_t connected_nodes = 0;  // nodes Connect linked (unreached after the back links)
  double seed_seconds = 0;    // reading and repairing a seed's lists
  uint64_t seeded_nodes = 0;  // nodes whose lists came from a seed
  uint64_t distance_computations = 0;
  // Input, not a figure: when set, the build adds the nodes it has inserted
  // as it goes (each chunk once done), for a progress report.
  std::atomic<uint64_t>* placed = nullptr;
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_BUILD_STATS_H_

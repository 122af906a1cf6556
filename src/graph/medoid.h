// Copyright 2026 The shoal Authors.
//
// The entry point of a Vamana graph: the point closest to the centroid.

#ifndef SHOAL_SRC_GRAPH_MEDOID_H_
#define SHOAL_SRC_GRAPH_MEDOID_H_

#include <cstddef>
#include <cstdint>

#include "graph/build_distance.h"
#include "util/thread_pool.h"

namespace shoal::graph {

// The index of the point nearest (in `distance`'s space, lift included) to
// the centroid of all points; ties go to the smaller index. Exact: one pass
// for the centroid, one for the distances, on `pool`'s threads (may be null).
// The result does not depend on the number of threads.
// With `candidates`, the nearest among points [0, candidates) only (an
// extended graph's entry must be a node that already has edges).
// REQUIRES: distance.size() >= 1, candidates >= 1.
uint32_t FindMedoid(const BuildDistance& distance, ThreadPool* pool,
                    size_t candidates = SIZE_MAX);

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_MEDOID_H_

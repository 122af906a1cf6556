// Copyright 2026 The shoal Authors.
//
// An order of the points in which near points sit near each other: the
// leaves of a random-projection tree (split at the median of the projection
// on the line through two random points of the set, recursively, down to
// leaves of kLeafSize). Nodes are stored in this order, so the neighbours of
// a node mostly live in the same few pages: graph searches, at build and at
// query time, take far fewer cache and TLB misses than with the arrival
// order, in which every hop lands on an unrelated page.

#ifndef SHOAL_SRC_GRAPH_LOCALITY_ORDER_H_
#define SHOAL_SRC_GRAPH_LOCALITY_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/thread_pool.h"

namespace shoal::graph {

// A permutation of 0..n-1 (position -> point). A pure function of the
// arguments other than `pool` (may be null), whatever its thread count.
std::vector<uint32_t> LocalityOrder(const float* vectors, size_t n, uint32_t dim,
                                    uint64_t seed, ThreadPool* pool);

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_LOCALITY_ORDER_H_

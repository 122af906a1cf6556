// Copyright 2026 The shoal Authors.
//
// The entry point of a Vamana graph: the point closest to the centroid.

#ifndef SHOAL_SRC_SEGMENT_MEDOID_H_
#define SHOAL_SRC_SEGMENT_MEDOID_H_

#include <cstdint>

#include "segment/build_distance.h"
#include "util/thread_pool.h"

namespace shoal::segment {

// The index of the point nearest (in `distance`'s space, lift included) to
// the centroid of all points; ties go to the smaller index. Exact: one pass
// for the centroid, one for the distances, on `pool`'s threads (may be null).
// The result does not depend on the number of threads.
// REQUIRES: distance.size() >= 1.
uint32_t FindMedoid(const BuildDistance& distance, ThreadPool* pool);

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_MEDOID_H_

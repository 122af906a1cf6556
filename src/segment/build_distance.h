// Copyright 2026 The shoal Authors.
//
// The distance a Vamana graph is built with, for every metric:
//
//   kL2            squared L2.
//   kCosine        squared L2 of the (unit) vectors: 2 - 2cos, so it ranks
//                  exactly like 1 - cos, but is never negative and is exactly
//                  0 for identical vectors, which RobustPrune relies on.
//   kInnerProduct  squared L2 after the MIPS-to-L2 lift: every x becomes
//                  (x, h_x) with h_x = sqrt(M^2 - |x|^2), M the largest norm.
//                  A query q searched as (q, 0) then ranks points by
//                  |q|^2 + M^2 - 2 q.x, i.e. exactly by -dot, so a query-time
//                  beam search with -dot walks this graph exactly as an L2
//                  search of the lifted points would. RobustPrune's alpha
//                  rule needs a true (non-negative) metric; -dot is not one.
//
// Distances are symmetric bit for bit (d(a, b) == d(b, a)): the kernels
// compute (a - b)^2 lane by lane and sum in a fixed order.
//
// Thread-safe after construction (immutable).

#ifndef SHOAL_SRC_SEGMENT_BUILD_DISTANCE_H_
#define SHOAL_SRC_SEGMENT_BUILD_DISTANCE_H_

#include <cstddef>
#include <cstdint>
#include <vector>
#include <cstdlib>

#include "distance/distance.h"
#include "segment/node_store.h"
#include "segment/prefetch.h"
#include "shoal/options.h"

namespace shoal::segment {

class BuildDistance {
 public:
  // Over the vectors of `store`, which must outlive this object.
  BuildDistance(const NodeStore& store, Metric metric);

  size_t size() const { return n_; }
  uint32_t dim() const { return dim_; }
  const float* row(uint32_t i) const { return vectors_ + size_t{i} * stride_; }
  // The lifted coordinate h_i (0 unless kInnerProduct).
  float lift(uint32_t i) const { return lift_.empty() ? 0.0f : lift_[i]; }
  bool lifted() const { return !lift_.empty(); }

  float operator()(uint32_t a, uint32_t b) const {
    float d = l2_(row(a), row(b), dim_);
    if (!lift_.empty()) {
      const float t = lift_[a] - lift_[b];
      d += t * t;
    }
    return d;
  }

  void Prefetch(uint32_t i) const { PrefetchBytes(row(i), size_t{dim_} * sizeof(float), 1024); }

 private:
  const float* vectors_;
  size_t stride_;  // floats from one row to the next
  size_t n_;
  uint32_t dim_;
  DistanceFn l2_;
  std::vector<float> lift_;  // empty unless kInnerProduct
};

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_BUILD_DISTANCE_H_

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

#ifndef SHOAL_SRC_GRAPH_BUILD_DISTANCE_H_
#define SHOAL_SRC_GRAPH_BUILD_DISTANCE_H_

#include <cstddef>
#include <cstdint>
#include <vector>
#include <cstdlib>

#include "distance/distance.h"
#include "graph/node_store.h"
#include "graph/prefetch.h"
#include "codes/sq8.h"
#include "shoal/options.h"

namespace shoal::graph {

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
    return AddLiftTerm(l2_(row(a), row(b), dim_), a, b);
  }

  // out[k] = (*this)(a, b[k]) bit for bit (and so (*this)(b[k], a)), four
  // at a time: RobustPrune's occlusion checks (distance.h's
  // l2_squared_four).
  void DistancesToFour(uint32_t a, const uint32_t b[4], float out[4]) const {
    const float* rows[4] = {row(b[0]), row(b[1]), row(b[2]), row(b[3])};
    l2_four_(row(a), rows, dim_, out);
    for (size_t k = 0; k < 4; ++k) out[k] = AddLiftTerm(out[k], a, b[k]);
  }

  void Prefetch(uint32_t i) const { PrefetchBytes(row(i), size_t{dim_} * sizeof(float), 1024); }

  // SQ8 codes of every point (point i's at codes + i * Sq8::CodeBytes(dim)),
  // for the build's searches to navigate on: a 384-d distance then reads
  // 400 bytes instead of 1,536, and the build is bound by those reads
  // (docs/performance-history.md, issue 18). Both must outlive this object.
  void AttachCodes(const codes::Sq8* sq8, const uint8_t* codes) {
    sq8_ = sq8;
    codes_ = codes;
    code_bytes_ = codes::Sq8::CodeBytes(dim_);
  }
  bool has_codes() const { return codes_ != nullptr; }
  const codes::Sq8& sq8() const { return *sq8_; }
  const uint8_t* code(uint32_t i) const { return codes_ + size_t{i} * code_bytes_; }
  void PrefetchCode(uint32_t i) const { PrefetchBytes(code(i), code_bytes_, 1024); }

 private:
  // d plus the lift's term (h_a - h_b)^2 (nothing unless kInnerProduct):
  // the same bits whichever of a and b comes first.
  float AddLiftTerm(float d, uint32_t a, uint32_t b) const {
    if (!lift_.empty()) {
      const float t = lift_[a] - lift_[b];
      d += t * t;
    }
    return d;
  }

  const float* vectors_;
  size_t stride_;  // floats from one row to the next
  size_t n_;
  uint32_t dim_;
  DistanceFn l2_;
  FourDistancesFn l2_four_;
  std::vector<float> lift_;  // empty unless kInnerProduct
  const codes::Sq8* sq8_ = nullptr;
  const uint8_t* codes_ = nullptr;
  size_t code_bytes_ = 0;
};

// The build distance from one point to others, by their vectors: the
// Walk's distance when there are no codes.
class FloatBuildQuery {
 public:
  FloatBuildQuery(const BuildDistance& distance, uint32_t p) : distance_(distance), p_(p) {}
  float operator()(uint32_t v) const { return distance_(p_, v); }
  void Four(const uint32_t v[4], float out[4]) const { distance_.DistancesToFour(p_, v, out); }

 private:
  const BuildDistance& distance_;
  const uint32_t p_;
};

// The build distance from one point to others, through their SQ8 codes: the
// squared L2 from p's full vector to each one's decoded vector (plus the
// lift's term for kInnerProduct). Per thread; Reset for each point.
class CodedBuildQuery {
 public:
  // REQUIRES: distance.has_codes().
  void Reset(const BuildDistance& distance, uint32_t p) {
    distance_ = &distance;
    query_.Reset(distance.sq8(), Metric::kL2, distance.row(p));
    lift_ = distance.lift(p);
  }
  float operator()(uint32_t v) const { return AddLiftTerm(query_.Distance(distance_->code(v)), v); }
  // out[k] = (*this)(v[k]) bit for bit, four codes a call (Sq8Query's
  // DistanceFour).
  void Four(const uint32_t v[4], float out[4]) const {
    const uint8_t* codes[4] = {distance_->code(v[0]), distance_->code(v[1]),
                               distance_->code(v[2]), distance_->code(v[3])};
    query_.DistanceFour(codes, out);
    for (size_t k = 0; k < 4; ++k) out[k] = AddLiftTerm(out[k], v[k]);
  }

 private:
  float AddLiftTerm(float d, uint32_t v) const {
    if (distance_->lifted()) {
      const float t = lift_ - distance_->lift(v);
      d += t * t;
    }
    return d;
  }

  const BuildDistance* distance_ = nullptr;
  codes::Sq8Query query_;
  float lift_ = 0;
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_BUILD_DISTANCE_H_

// Copyright 2026 The shoal Authors.
//
// SQ8: scalar quantization to one byte per dimension, the compact code a
// segment's graph search navigates on (full-precision vectors then rerank
// its candidates; segment_search.cc). Each dimension j has its own range,
// the segment's minimum lo_j and maximum over its vectors, cut into 255
// steps of scale_j = (max_j - lo_j) / 255: x_j is stored as
// c_j = round((x_j - lo_j) / scale_j) and read back as lo_j + scale_j c_j.
//
// A code is CodeBytes(dim) bytes: c[0, dim), zeros, and in its last 4 bytes
// the squared norm of the vector read back (f32), which an L2 distance needs.
//
// Against a query q (f32), with w_j = q_j scale_j and b = sum q_j lo_j:
//   dot(q, x^) = b + sum w_j c_j
//   kL2: |q|^2 + |x^|^2 - 2 dot;  kInnerProduct: -dot;  kCosine: 1 - dot
// so a distance reads dim bytes instead of 4 dim. The weights are kept as
// 16-bit integers k_j = round(w_j / s), s = max |w_j| / K with K as large as
// 255 * K * dim < 2^31 allows (32767 up to 257 dimensions, 21,931 at 384,
// 2,055 at 4,096), so sum k_j c_j is exact in 32 bits and one instruction
// multiplies and adds 16 or 32 bytes (WeightedBytesFn in distance.h); each
// weight is off by at most s / 2 (a 2^-15 to 2^-12 share of the largest).
//
// Thread-safe: immutable after construction; Sq8Query is per search.

#ifndef SHOAL_SRC_CODES_SQ8_H_
#define SHOAL_SRC_CODES_SQ8_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "distance/distance.h"
#include "shoal/options.h"

namespace shoal::codes {

class Sq8 {
 public:
  // Bytes of one code: dim + 4 rounded up to 16.
  static size_t CodeBytes(uint32_t dim) { return (size_t{dim} + 4 + 15) / 16 * 16; }

  // The ranges of n row-major vectors (n >= 0; none: every range is 0).
  static Sq8 Train(const float* vectors, size_t n, uint32_t dim);
  // Given ranges (lo and scale, dim floats each; finite, scale >= 0).
  Sq8(std::vector<float> lo, std::vector<float> scale);

  uint32_t dim() const { return static_cast<uint32_t>(lo_.size()); }
  const std::vector<float>& lo() const { return lo_; }
  const std::vector<float>& scale() const { return scale_; }

  // Writes v's code (CodeBytes(dim) bytes) at out.
  void Encode(const float* v, uint8_t* out) const;
  // The vector a code reads back as (dim floats at out).
  void Decode(const uint8_t* code, float* out) const;

 private:
  std::vector<float> lo_;
  std::vector<float> scale_;
  std::vector<float> inverse_;  // 1 / scale_j, 0 where scale_j is 0
};

// One query against SQ8 codes under a metric (conventions of distance.h).
class Sq8Query {
 public:
  // REQUIRES: q has quantizer.dim() floats, normalized for kCosine.
  void Reset(const Sq8& quantizer, Metric metric, const float* q);

  float Distance(const uint8_t* code) const {
    return Finish(dot_bytes_(weights_.data(), code, dim_), code);
  }
  // out[k] = Distance(codes[k]), the same bits; faster than four calls
  // (WeightedBytesFourFn in distance.h).
  void DistanceFour(const uint8_t* const codes[4], float out[4]) const {
    int32_t sums[4];
    dot_bytes_four_(weights_.data(), codes, dim_, sums);
    for (int k = 0; k < 4; ++k) out[k] = Finish(sums[k], codes[k]);
  }

 private:
  // The distance to `code` given sum k_j c_j. Distance and DistanceFour
  // give the same bits because both inline this one function in the same
  // file; keep it out of the ISA files (-mfma could fuse its multiply-add
  // there and not here).
  float Finish(int32_t sum, const uint8_t* code) const {
    const float dot = bias_ + step_ * static_cast<float>(sum);
    switch (metric_) {
      case Metric::kL2: {
        float norm;
        std::memcpy(&norm, code + code_bytes_ - 4, 4);
        return query_norm_ + norm - 2.0f * dot;
      }
      case Metric::kInnerProduct:
        return -dot;
      case Metric::kCosine:
        return 1.0f - dot;
    }
    return 0;
  }

  std::vector<int16_t> weights_;  // k_j
  float step_ = 0;                 // s
  float bias_ = 0;
  float query_norm_ = 0;
  size_t dim_ = 0;
  size_t code_bytes_ = 0;
  Metric metric_ = Metric::kL2;
  WeightedBytesFn dot_bytes_ = nullptr;
  WeightedBytesFourFn dot_bytes_four_ = nullptr;
};

}  // namespace shoal::codes

#endif  // SHOAL_SRC_CODES_SQ8_H_

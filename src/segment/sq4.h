// Copyright 2026 The shoal Authors.
//
// SQ4: the 4-bit code a disk-resident segment navigates on when its SQ8
// codes (dim + 4 bytes, rounded up to 16) do not fit its memory budget.
// Derived at Open from the SQ8 codes the file already holds, so a segment
// switches between the two without being rewritten: ceil(dim / 2) bytes,
// 64 at 128-d against SQ8's 144.
//
// Each dimension gets 16 levels, fitted to how its SQ8 codes are spread
// (Lloyd-Max: one-dimensional k-means over the 256-bin histogram of its
// code bytes, seeded at the quantiles), not 16 even steps of its range: the
// range runs from the smallest to the largest value, and most values sit
// far inside it. An SQ8 code byte maps to its nearest level, so SQ4 only
// ever merges SQ8's bins.
//
// Dimensions are paired into PQ chunks (dimension 2s and 2s + 1, the last
// alone when dim is odd): chunk s's byte is level(2s) | level(2s + 1) << 4,
// and its 256 "centroids" are the 16 x 16 grid of the pair's levels. So a
// code is a PQ code (pq.h) and PqQuery's lookup tables compute distances to
// it, exactly to the vector it decodes to.
//
// Thread-safe: immutable after Fit.

#ifndef SHOAL_SRC_SEGMENT_SQ4_H_
#define SHOAL_SRC_SEGMENT_SQ4_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "segment/pq.h"
#include "segment/sq8.h"

namespace shoal::segment {

class Sq4 {
 public:
  static constexpr uint32_t kLevels = 16;
  static constexpr int kIterations = 16;  // Lloyd iterations

  // Counts of each SQ8 code byte, per dimension.
  class Histogram {
   public:
    explicit Histogram(uint32_t dim) : counts_(dim) {}
    // Counts one SQ8 code (its first dim bytes).
    void Add(const uint8_t* sq8_code) {
      for (size_t j = 0; j < counts_.size(); ++j) ++counts_[j][sq8_code[j]];
    }
    const std::array<uint64_t, 256>& counts(uint32_t j) const { return counts_[j]; }
    uint32_t dim() const { return static_cast<uint32_t>(counts_.size()); }

   private:
    std::vector<std::array<uint64_t, 256>> counts_;
  };

  // REQUIRES: histogram.dim() == sq8.dim() >= 1.
  static Sq4 Fit(const Sq8& sq8, const Histogram& histogram);

  static size_t CodeBytes(uint32_t dim) { return (size_t{dim} + 1) / 2; }
  size_t code_bytes() const { return CodeBytes(dim_); }
  // The codebook, as PQ chunks of two dimensions.
  const Pq& pq() const { return pq_; }

  // Writes the SQ4 code (code_bytes()) of an SQ8 code at out.
  void Encode(const uint8_t* sq8_code, uint8_t* out) const {
    size_t j = 0;
    for (; j + 1 < dim_; j += 2) {
      out[j / 2] = static_cast<uint8_t>(level_[j * 256 + sq8_code[j]] |
                                        level_[(j + 1) * 256 + sq8_code[j + 1]] << 4);
    }
    if (j < dim_) out[j / 2] = level_[j * 256 + sq8_code[j]];
  }

 private:
  Sq4(uint32_t dim, std::vector<uint8_t> level, Pq pq)
      : dim_(dim), level_(std::move(level)), pq_(std::move(pq)) {}

  uint32_t dim_;
  std::vector<uint8_t> level_;  // [j * 256 + sq8 byte] -> level of dimension j
  Pq pq_;
};

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_SQ4_H_

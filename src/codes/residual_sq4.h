// Copyright 2026 The shoal Authors.
//
// Residual SQ4: the 4-bit code a disk-resident segment navigates on when its
// SQ8 codes (dim + 4 bytes, rounded up to 16) do not fit its memory budget.
// Fitted at Open to the vectors the SQ8 codes decode to, so a segment
// switches between the two without being rewritten.
//
// A vector x is coded relative to the nearest of G group centres c_g
// (k-means of a sample, two levels: sqrt(G) coarse groups, each split into
// fine ones by its share of the sample; G about 2 sqrt(n), at most
// kMaxGroups): its residual r = x - c_g is divided by its own scale
// s = rms(r), and each coordinate of r / s is replaced by the nearest of 16
// levels of its dimension (Lloyd-Max: one-dimensional k-means over the
// sample's scaled residuals).
// So x reads back as c_g + s w, w_j the chosen level of dimension j.
//
// Why not plain SQ4 (16 levels of each dimension's whole range): where the
// data has groups, neighbours differ only in what is left after their
// group's centre, a small part of the range; 16 steps of the whole range
// cannot tell them apart. Measured (1M x 128, 1,000 Gaussian clusters; how
// many of the true 10 nearest are among the 20 / 40 nearest by code
// distance): plain SQ4 0.707 / 0.839 (100 queries, a throwaway program);
// with bench/probes/code_rank_bench (200 queries, codes made as a disk segment
// makes them), residual (1,979 groups, 8K sample vectors) 0.963 / 0.996,
// SQ8 0.999 / 1.000; on the embedding-like set (100K x 384) residual 0.994
// / 1.000. docs/performance-history.md, "Residual 4-bit codes" and "What bounds the
// disk reads".
//
// A code is CodeBytes(dim) bytes: the levels, two dimensions a byte
// (dimension 2i in the low nibble of byte i, 2i + 1 in the high one), then
// the group (u16), the scale s (f32) and k (f32), little-endian. The
// distance to a query q is exactly the distance to the vector the code
// decodes to:
//   kL2:           |q - c_g|^2 + k - 2 s <q, w>,  k = 2 s <c_g, w> + s^2 |w|^2
//   kInnerProduct: -<q, c_g> - s <q, w>           (k not used)
//   kCosine:       1 - <q, c_g> - s <q, w>        (k not used; not renormalized)
// where <q, w> comes from a PQ lookup table (pq.h) whose chunks are the
// dimension pairs and whose 256 "centroids" are the grid of their levels,
// and the group terms are computed once per query (G x dim).
//
// Thread-safe: immutable after Fit; a ResidualSq4Query is per search.

#ifndef SHOAL_SRC_CODES_RESIDUAL_SQ4_H_
#define SHOAL_SRC_CODES_RESIDUAL_SQ4_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "codes/pq.h"
#include "shoal/options.h"

namespace shoal {
class ThreadPool;
}

namespace shoal::codes {

class ResidualSq4 {
 public:
  static constexpr uint32_t kLevels = 16;
  static constexpr uint32_t kMaxGroups = 4096;  // the group is a u16
  // Sample vectors per group a fit wants, within kMaxSampleBytes of floats
  // (transient at open, so kept well below the codes it fits).
  static constexpr size_t kSamplePerGroup = 32;
  static constexpr size_t kMaxSampleBytes = size_t{4} << 20;
  static constexpr int kIterations = 8;  // k-means and Lloyd iterations

  // Groups for a segment of n vectors: about 2 sqrt(n), 1 to kMaxGroups.
  static uint32_t ChooseGroups(uint64_t n);
  // Sample vectors to fit a segment of n vectors with: kSamplePerGroup a
  // group, at most n and kMaxSampleBytes, at least one a group.
  static uint64_t SampleCount(uint64_t n, uint32_t dim, uint32_t groups);
  static size_t CodeBytes(uint32_t dim) { return (size_t{dim} + 1) / 2 + 10; }

  // Fits about `groups` centres and the levels to `count` row-major sample
  // vectors of dim floats (finite), on pool (may be null). A pure function
  // of its arguments other than pool. With no sample every centre and level
  // is 0. REQUIRES: dim >= 1, 1 <= groups <= kMaxGroups.
  static ResidualSq4 Fit(const float* sample, size_t count, uint32_t dim, uint32_t groups,
                         ThreadPool* pool = nullptr);

  uint32_t dim() const { return dim_; }
  size_t code_bytes() const { return CodeBytes(dim_); }
  uint32_t groups() const { return static_cast<uint32_t>(centres_.size() / dim_); }
  const float* centre(uint32_t g) const { return &centres_[size_t{g} * dim_]; }
  // The levels as PQ chunks of two dimensions, with a zero mean: under
  // kInnerProduct its query table gives -<q, w>.
  const Pq& levels() const { return levels_; }

  // Writes x's code (code_bytes()) at out. x: dim finite floats.
  void Encode(const float* x, uint8_t* out) const;
  // The vector a code reads back as (dim floats at out).
  void Decode(const uint8_t* code, float* out) const;

  // The fields after a code's levels.
  static uint16_t Group(const uint8_t* code, uint32_t dim) {
    uint16_t g;
    std::memcpy(&g, code + (size_t{dim} + 1) / 2, sizeof(g));
    return g;
  }
  static float Scale(const uint8_t* code, uint32_t dim) {
    float s;
    std::memcpy(&s, code + (size_t{dim} + 1) / 2 + 2, sizeof(s));
    return s;
  }
  static float K(const uint8_t* code, uint32_t dim) {
    float k;
    std::memcpy(&k, code + (size_t{dim} + 1) / 2 + 6, sizeof(k));
    return k;
  }

 private:
  ResidualSq4(uint32_t dim, std::vector<uint32_t> first, std::vector<float> coarse,
              std::vector<float> centres, std::vector<float> level, std::vector<float> midpoint,
              Pq levels)
      : dim_(dim),
        first_(std::move(first)),
        coarse_(std::move(coarse)),
        centres_(std::move(centres)),
        level_(std::move(level)),
        midpoint_(std::move(midpoint)),
        levels_(std::move(levels)) {}

  // The group of x: the nearest fine centre within the two nearest coarse
  // groups.
  uint32_t NearestGroup(const float* x) const;

  uint32_t dim_;
  std::vector<uint32_t> first_;  // coarse group c owns groups [first_[c], first_[c + 1])
  std::vector<float> coarse_;    // coarse centres, row-major
  std::vector<float> centres_;   // groups x dim
  std::vector<float> level_;     // dim x kLevels, ascending per dimension
  std::vector<float> midpoint_;  // (kLevels - 1) x dim: between levels i and i + 1
  Pq levels_;
};

// One query against residual SQ4 codes under a metric (conventions of
// distance.h).
class ResidualSq4Query {
 public:
  // REQUIRES: q has code.dim() floats, normalized for kCosine. code need
  // not outlive this object.
  void Reset(const ResidualSq4& code, Metric metric, const float* q);
  // Per group: |q - c_g|^2 under kL2, -<q, c_g> (+1 for kCosine) else.
  const std::vector<float>& group_terms() const { return group_term_; }
  // The distance between the query and the vector `code` decodes to.
  float Distance(const uint8_t* code) const {
    return group_term_[ResidualSq4::Group(code, dim_)] + k_weight_ * ResidualSq4::K(code, dim_) +
           factor_ * ResidualSq4::Scale(code, dim_) * levels_.Distance(code);
  }

 private:
  PqQuery levels_;                 // -<q, w>
  std::vector<float> group_term_;  // per group: |q - c_g|^2, or -<q, c_g> (+1)
  float factor_ = 1;               // 2 under kL2
  float k_weight_ = 0;             // 1 under kL2
  uint32_t dim_ = 0;
};

}  // namespace shoal::codes

#endif  // SHOAL_SRC_CODES_RESIDUAL_SQ4_H_

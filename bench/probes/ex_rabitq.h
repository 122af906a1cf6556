// Copyright 2026 The shoal Authors.
//
// Extended RaBitQ (Gao, Long et al., SIGMOD'24 and '25), written for
// measurement only (code_rank_bench): how well B bits a dimension rank a
// query's nearest neighbours, against the codes shoal keeps (SQ8, 4-bit
// residual). Not used by the database; plain float loops, no SIMD.
//
// A vector o with centre c: r = o - c, its norm |r|, and its direction
// u = P r / |r| after a random rotation P (an orthogonal matrix, the same
// for every vector). The code is the point x of the grid
// {k - (2^B - 1) / 2 : k = 0 .. 2^B - 1}^D whose direction is closest to
// u (the best of many scales t, each coordinate of t u rounded to the
// grid). Stored per vector: the D codes of B bits, |r| and 1 / <x, u>:
// 2 floats besides the code.
//
// For a query q with the same centre, q' = P (q - c) / |q - c|, and
// <u, q'> is estimated by <x, q'> / <x, u> (unbiased in the paper's
// analysis); then |o - q|^2 = |r|^2 + |q - c|^2 - 2 |r| |q - c|
// <u, q'>.
//
// Figures: docs/performance-history.md, "Extended RaBitQ against SQ8 and the 4-bit
// residual codes"; the decision not to build it: docs/architecture.md, the row
// "SQ8 codes navigate, full vectors rerank".

#ifndef SHOAL_BENCH_PROBES_EX_RABITQ_H_
#define SHOAL_BENCH_PROBES_EX_RABITQ_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shoal_bench {

class ExRabitq {
 public:
  // The rotation is drawn from `seed`. REQUIRES: 1 <= bits <= 8.
  ExRabitq(uint32_t dim, uint32_t bits, uint64_t seed);

  uint32_t dim() const { return dim_; }
  uint32_t bits() const { return bits_; }
  // Bytes a stored vector takes: the packed code and the two floats.
  size_t CodeBytes() const { return (size_t{dim_} * bits_ + 7) / 8 + 8; }

  // A vector's code (unpacked: one level a coordinate, for the bench's
  // loops), relative to `centre`.
  struct Code {
    std::vector<uint8_t> levels;  // dim values in 0 .. 2^bits - 1
    float norm = 0;               // |o - c|
    float factor = 0;             // 1 / <x, u>; 0 when o == c
  };
  Code Encode(const float* o, const float* centre) const;

  // A query against one centre.
  struct Query {
    std::vector<float> rotated;  // q' = P (q - c) / |q - c|
    float norm = 0;              // |q - c|
    float sum = 0;               // sum of q'
  };
  Query Prepare(const float* q, const float* centre) const;
  // The estimated squared L2 distance of the code's vector to the query.
  float Distance(const Query& q, const Code& code) const;

 private:
  void Rotate(const float* in, float* out) const;

  uint32_t dim_;
  uint32_t bits_;
  std::vector<float> rotation_;  // dim x dim, orthonormal rows
};

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_PROBES_EX_RABITQ_H_

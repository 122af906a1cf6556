// Copyright 2026 The shoal Authors.
//
// PQ: product quantization, the code a disk-resident segment keeps in RAM
// (its graph search navigates on code distances and reranks with full
// vectors read from disk). DiskANN-style: the dimensions are cut into M
// contiguous chunks ("subspaces", sizes as even as possible), and each chunk
// of x - mean (mean: the training vectors' mean) is replaced by the index of
// the nearest of 256 centroids of that chunk. A code is M bytes; x reads back
// as mean + (centroid c_s of chunk s, for every s).
//
// Centroids are stored transposed, one row of 256 floats per dimension:
// entry (j, c) is coordinate j of centroid c of the chunk that holds j. Every
// per-centroid loop (nearest centroid, lookup tables) then runs over 256
// contiguous floats. docs/architecture.md ("Product quantization") has the
// rules and measurements; Serialize() documents the byte layout.
//
// Against a query q, PqQuery builds an M x 256 table T (below) once, and the
// distance to a code is bias + sum_s T[s][code_s]: M loads and adds.
//   kL2:           T[s][c] = |(q - mean)_s - c|^2, bias 0
//   kInnerProduct: T[s][c] = -dot(q_s, c),      bias -dot(q, mean)
//   kCosine:       T[s][c] = -dot(q_s, c),      bias 1 - dot(q, mean)
// which is exactly the distance between q and the decoded vector (cosine:
// 1 - dot against it, not renormalized, as Sq8Query).
//
// Thread-safe: Pq is immutable after construction; a PqQuery is per search.

#ifndef SHOAL_SRC_CODES_PQ_H_
#define SHOAL_SRC_CODES_PQ_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "shoal/options.h"

namespace shoal {
class ThreadPool;
}

namespace shoal::codes {

class Pq {
 public:
  static constexpr uint32_t kCentroids = 256;  // one byte per chunk
  // Training uses at most this many vectors (a seeded sample): 256 per
  // centroid, enough for stable k-means at a bounded cost.
  static constexpr size_t kMaxTrainingVectors = 65536;
  static constexpr int kIterations = 12;  // Lloyd iterations after k-means++

  // The default number of chunks (= code bytes) for a dimension:
  // ceil(dim / 4), i.e. 2 bits a dimension, a code of 1/16 of the f32 vector
  // (32 bytes at 128-d, 96 at 384-d, 192 at 768-d). Issue 20's budget is 10%
  // of the raw vectors in RAM all told; the code is 6.25% of a vector and
  // leaves 3.75% (19 bytes at 128-d) for the per-node bookkeeping.
  // REQUIRES: dim >= 1.
  static uint32_t ChooseSubspaces(uint32_t dim);

  // Trains a codebook of m chunks on n row-major vectors of dim floats
  // (finite; normalized by the caller for kCosine): the mean, then k-means++
  // and kIterations Lloyd iterations per chunk on a sample of at most
  // kMaxTrainingVectors vectors drawn from seed. The chunks are trained in
  // parallel on pool (null: on the calling thread); the result depends only
  // on the inputs and seed, not on the pool. With fewer than 256 distinct
  // chunks, the extra centroids repeat existing ones; with n == 0 every
  // centroid and the mean are zero.
  // InvalidArgumentError when dim == 0, m == 0 or m > dim.
  [[nodiscard]] static absl::StatusOr<Pq> Train(const float* vectors, size_t n,
                                                uint32_t dim, uint32_t m,
                                                ThreadPool* pool, uint64_t seed);

  // A codebook given whole: chunk s holds dimensions [offsets[s],
  // offsets[s + 1]), centroid (j, c) is centroids[j * 256 + c] (transposed,
  // as centroid()). REQUIRES: offsets strictly increasing from 0 to dim,
  // mean.size() == dim, centroids.size() == dim * 256, all finite.
  static Pq FromCodebook(uint32_t dim, std::vector<uint32_t> offsets, std::vector<float> mean,
                         std::vector<float> centroids) {
    return Pq(dim, std::move(offsets), std::move(mean), std::move(centroids));
  }

  // The codebook Serialize() wrote, for vectors of dim floats.
  // DataLossError when `in` is not exactly that (wrong size, magic, version,
  // dim, chunk offsets, a non-finite value, or a checksum mismatch).
  [[nodiscard]] static absl::StatusOr<Pq> Deserialize(std::string_view in, uint32_t dim);

  uint32_t dim() const { return dim_; }
  // Chunks, and bytes of one code.
  uint32_t subspaces() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  size_t code_bytes() const { return subspaces(); }
  // Chunk s holds dimensions [offset(s), offset(s + 1)); offset(subspaces())
  // is dim. REQUIRES: s <= subspaces().
  uint32_t offset(uint32_t s) const { return offsets_[s]; }
  const std::vector<float>& mean() const { return mean_; }
  // Coordinate j of centroid c of the chunk that holds j.
  float centroid(uint32_t j, uint32_t c) const { return centroids_[size_t{j} * kCentroids + c]; }
  // Coordinate j of the 256 centroids of its chunk (256 floats).
  const float* centroid_row(uint32_t j) const { return &centroids_[size_t{j} * kCentroids]; }

  // Writes v's code (code_bytes() bytes) at out: per chunk, the nearest
  // centroid to v - mean (squared L2; the lowest index on a tie).
  void Encode(const float* v, uint8_t* out) const;
  // Encode for n contiguous vectors into n contiguous codes, on pool (may be
  // null). The same bytes as n calls of Encode.
  void EncodeBatch(const float* vectors, size_t n, uint8_t* out, ThreadPool* pool) const;
  // The vector a code reads back as (dim floats at out).
  void Decode(const uint8_t* code, float* out) const;

  // The codebook as bytes, all integers and floats little-endian:
  //   magic "SHOALPQ\0" (8), version u32 (1), dim u32, m u32, centroids u32
  //   (256), offsets u32[m + 1], mean f32[dim], centroids f32[dim * 256]
  //   (transposed, above), xxh3-64 of everything before it (8).
  // Its size is 32 + 4 (m + 1) + 1028 dim bytes (~129 KiB at 128-d).
  std::string Serialize() const;

 private:
  Pq(uint32_t dim, std::vector<uint32_t> offsets, std::vector<float> mean,
     std::vector<float> centroids);

  // Index of the centroid of chunk s nearest to r (the chunk's coordinates of
  // a vector minus the mean, offset(s + 1) - offset(s) floats).
  uint8_t Nearest(uint32_t s, const float* r) const;

  uint32_t dim_ = 0;
  std::vector<uint32_t> offsets_;  // m + 1, strictly increasing, 0 .. dim
  std::vector<float> mean_;        // dim
  std::vector<float> centroids_;   // dim * 256, transposed
};

// One query against PQ codes under a metric (conventions of distance.h).
class PqQuery {
 public:
  // Builds the lookup table for q. REQUIRES: q has pq.dim() floats,
  // normalized for kCosine. pq need not outlive this object.
  void Reset(const Pq& pq, Metric metric, const float* q);

  // The distance between the query and the vector `code` decodes to
  // (code: code_bytes() bytes).
  float Distance(const uint8_t* code) const {
    // Four independent sums: the adds do not wait on each other.
    const float* t = table_.data();
    const size_t m = m_;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t s = 0;
    for (; s + 4 <= m; s += 4, t += 4 * Pq::kCentroids) {
      s0 += t[code[s]];
      s1 += t[Pq::kCentroids + code[s + 1]];
      s2 += t[2 * Pq::kCentroids + code[s + 2]];
      s3 += t[3 * Pq::kCentroids + code[s + 3]];
    }
    for (; s < m; ++s, t += Pq::kCentroids) s0 += t[code[s]];
    return bias_ + ((s0 + s1) + (s2 + s3));
  }

  // out[i] = Distance(codes + i * code_bytes()) for i < count.
  void Distances(const uint8_t* codes, size_t count, float* out) const;

  size_t code_bytes() const { return m_; }
  // The table, [s][c] at s * 256 + c (for tests and other kernels).
  const std::vector<float>& table() const { return table_; }
  float bias() const { return bias_; }

 private:
  std::vector<float> table_;  // m_ * 256
  float bias_ = 0;
  size_t m_ = 0;
};

}  // namespace shoal::codes

#endif  // SHOAL_SRC_CODES_PQ_H_

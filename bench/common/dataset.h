// Copyright 2026 The shoal Authors.
//
// Seeded synthetic vectors with clustered structure, for benchmarks.
//
// Uniform noise is a poor stand-in for embeddings: every point is about as far
// from every other, so nearest-neighbour search has nothing to find. Here a
// dataset is a mixture of gaussian clusters: a few hundred centres drawn from
// N(0, 1) per component, clusters of unequal size (log-normal weights), and
// each cluster with its own spread (log-uniform in [kMinSpread, kMaxSpread]).
// A point is its centre plus N(0, spread^2) noise per component. Queries come
// from the same mixture but from a separate random stream, so they are never
// copies of base vectors.
//
// "embed" stands in for text embeddings instead, which are anisotropic
// with no clean clusters: a shared mean direction, a few hundred soft topics,
// and a power-law spectrum (the variance of principal direction j falls as
// (1 + j)^-1.2), turned by random rotations of blocks of 32 dimensions (after
// a random permutation) so that no coordinate axis is a principal one, and
// normalized to unit length; its metric is cosine.
//
// The generator uses its own RNG (xoshiro256** + Box-Muller), not <random>'s
// distributions, so a seed names the same data on every platform.

#ifndef SHOAL_BENCH_COMMON_DATASET_H_
#define SHOAL_BENCH_COMMON_DATASET_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace shoal_bench {

struct DatasetSpec {
  enum class Shape { kClusters, kEmbedding };
  std::string name;
  size_t num_vectors = 0;
  uint32_t dim = 0;
  size_t num_queries = 0;
  uint32_t num_clusters = 0;     // kEmbedding: topics
  Shape shape = Shape::kClusters;
  std::string metric = "l2";     // what the data is meant to be searched with
};

// "small": 10K x 128, 1000 queries. "medium": 100K x 256, 500 queries.
// "large": 1M x 128, 1000 queries. "embed": 100K x 384, 1000 queries, cosine.
// InvalidArgument for any other name.
absl::StatusOr<DatasetSpec> DatasetSpecByName(std::string_view name);

struct Dataset {
  DatasetSpec spec;
  std::vector<uint64_t> ids;   // ids[i] names base row i; 0..num_vectors-1
  std::vector<float> base;     // num_vectors * dim, row-major
  std::vector<float> queries;  // num_queries * dim, row-major
  // Exact neighbour ids of each query when the data came with them (or they
  // were cached); empty otherwise. At least k per query when set.
  std::vector<std::vector<uint64_t>> truth;
  std::string source;          // "synthetic, seed 42" or the files read

  uint32_t dim() const { return spec.dim; }
  size_t size() const { return ids.size(); }
  size_t num_queries() const { return queries.size() / spec.dim; }
  std::span<const float> Row(size_t i) const {
    return {base.data() + i * spec.dim, spec.dim};
  }
  std::span<const float> Query(size_t i) const {
    return {queries.data() + i * spec.dim, spec.dim};
  }
  // Bytes of vector payload in the base set (what ingestion rates count).
  size_t BaseBytes() const { return base.size() * sizeof(float); }
};

// Deterministic in (spec, seed). REQUIRES: spec.dim > 0, spec.num_clusters > 0.
Dataset GenerateDataset(const DatasetSpec& spec, uint64_t seed);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_DATASET_H_

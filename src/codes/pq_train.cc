// Copyright 2026 The shoal Authors.
//
// Pq::Train: the mean of all vectors, a seeded sample, then k-means per chunk
// (codes/pq_kmeans.h), each chunk a task of its own with its own seed, so
// the codebook does not depend on how the chunks are spread over threads.

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codes/pq.h"
#include "codes/pq_kmeans.h"
#include "util/thread_pool.h"

namespace shoal::codes {
namespace {

// Chunk boundaries: dim split into m chunks whose sizes differ by at most
// one, the longer ones first.
std::vector<uint32_t> EvenOffsets(uint32_t dim, uint32_t m) {
  std::vector<uint32_t> offsets(m + 1, 0);
  const uint32_t base = dim / m, longer = dim % m;
  for (uint32_t s = 0; s < m; ++s) offsets[s + 1] = offsets[s] + base + (s < longer ? 1 : 0);
  return offsets;
}

std::vector<float> Mean(const float* vectors, size_t n, uint32_t dim) {
  std::vector<double> sum(dim, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < dim; ++j) sum[j] += vectors[i * dim + j];
  }
  std::vector<float> mean(dim, 0.0f);
  if (n == 0) return mean;
  for (uint32_t j = 0; j < dim; ++j) mean[j] = static_cast<float>(sum[j] / n);
  return mean;
}

// min(n, max) distinct row indices, increasing, each subset of that size
// equally likely (selection sampling, Knuth's Algorithm S).
std::vector<size_t> Sample(size_t n, size_t max, uint64_t seed) {
  std::vector<size_t> rows;
  const size_t want = std::min(n, max);
  rows.reserve(want);
  if (want == n) {
    for (size_t i = 0; i < n; ++i) rows.push_back(i);
    return rows;
  }
  PqRandom rng(seed);
  for (size_t i = 0; i < n && rows.size() < want; ++i) {
    if (static_cast<double>(n - i) * rng.Uniform() < static_cast<double>(want - rows.size())) {
      rows.push_back(i);
    }
  }
  return rows;
}

// The seed of chunk s: seed and s mixed through one SplitMix64 step each.
uint64_t ChunkSeed(uint64_t seed, uint32_t s) {
  PqRandom mix(seed ^ (0xD1B54A32D192ED03ull * (uint64_t{s} + 1)));
  return mix.Next();
}

}  // namespace

absl::StatusOr<Pq> Pq::Train(const float* vectors, size_t n, uint32_t dim, uint32_t m,
                             ThreadPool* pool, uint64_t seed) {
  if (dim == 0) return absl::InvalidArgumentError("PQ: dim must be at least 1");
  if (m == 0 || m > dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("PQ: subspaces must be in [1, dim = ", dim, "], got ", m));
  }
  std::vector<uint32_t> offsets = EvenOffsets(dim, m);
  std::vector<float> mean = Mean(vectors, n, dim);
  const std::vector<size_t> rows = Sample(n, kMaxTrainingVectors, seed);
  std::vector<float> centroids(size_t{dim} * kCentroids, 0.0f);
  auto train = [&](size_t s) {
    const uint32_t begin = offsets[s], len = offsets[s + 1] - begin;
    std::vector<float> points(rows.size() * len);
    for (size_t i = 0; i < rows.size(); ++i) {
      const float* v = vectors + rows[i] * dim + begin;
      for (uint32_t j = 0; j < len; ++j) points[i * len + j] = v[j] - mean[begin + j];
    }
    const std::vector<float> chunk =
        TrainChunk(points.data(), rows.size(), len, kIterations, ChunkSeed(seed, s));
    std::copy(chunk.begin(), chunk.end(), centroids.begin() + size_t{begin} * kCentroids);
  };
  if (pool == nullptr) {
    for (uint32_t s = 0; s < m; ++s) train(s);
  } else {
    pool->ParallelFor(m, train);
  }
  return Pq(dim, std::move(offsets), std::move(mean), std::move(centroids));
}

}  // namespace shoal::codes

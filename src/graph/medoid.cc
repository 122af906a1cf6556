// Copyright 2026 The shoal Authors.

#include "graph/medoid.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

namespace shoal::graph {
namespace {

// Work is split into at most kMaxChunks fixed ranges whatever the thread
// count, and partial results are combined in range order: the floating-point
// sums, and so the medoid, are the same for one thread or many.
constexpr size_t kMinChunkRows = 4096;
constexpr size_t kMaxChunks = 256;

void RunChunks(ThreadPool* pool, size_t chunks, const std::function<void(size_t)>& fn) {
  if (pool == nullptr) {
    for (size_t c = 0; c < chunks; ++c) fn(c);
  } else {
    pool->ParallelFor(chunks, fn);
  }
}

}  // namespace

uint32_t FindMedoid(const BuildDistance& d, ThreadPool* pool, size_t candidates) {
  const size_t n = d.size();
  const size_t dim = d.dim();
  const size_t rows = std::max(kMinChunkRows, (n + kMaxChunks - 1) / kMaxChunks);
  const size_t chunks = (n + rows - 1) / rows;

  // Centroid: per-chunk sums in double (column dim is the lift).
  std::vector<double> sums(chunks * (dim + 1), 0.0);
  RunChunks(pool, chunks, [&](size_t c) {
    double* s = &sums[c * (dim + 1)];
    for (size_t i = c * rows; i < std::min(n, (c + 1) * rows); ++i) {
      const float* v = d.row(static_cast<uint32_t>(i));
      for (size_t j = 0; j < dim; ++j) s[j] += v[j];
      s[dim] += d.lift(static_cast<uint32_t>(i));
    }
  });
  std::vector<float> centroid(dim);
  double lift_sum = 0;
  for (size_t j = 0; j <= dim; ++j) {
    double total = 0;
    for (size_t c = 0; c < chunks; ++c) total += sums[c * (dim + 1) + j];
    if (j < dim) {
      centroid[j] = static_cast<float>(total / n);
    } else {
      lift_sum = total;
    }
  }
  const float centroid_lift = static_cast<float>(lift_sum / n);

  // Nearest point: per-chunk best, then the best of those.
  const DistanceFn l2 = Kernels().l2_squared;
  std::vector<std::pair<float, uint32_t>> best(
      chunks, {std::numeric_limits<float>::infinity(), 0});
  RunChunks(pool, chunks, [&](size_t c) {
    std::pair<float, uint32_t> b = {std::numeric_limits<float>::infinity(),
                                    static_cast<uint32_t>(c * rows)};
    for (size_t i = c * rows; i < std::min({n, candidates, (c + 1) * rows}); ++i) {
      const uint32_t id = static_cast<uint32_t>(i);
      const float t = d.lift(id) - centroid_lift;
      const float dist = l2(d.row(id), centroid.data(), dim) + t * t;
      // `<` keeps the first (smallest) index among equals.
      if (dist < b.first) b = {dist, id};
    }
    best[c] = b;
  });
  std::pair<float, uint32_t> result = best[0];
  for (size_t c = 1; c < chunks; ++c) {
    if (best[c].first < result.first) result = best[c];
  }
  return result.second;
}

}  // namespace shoal::graph

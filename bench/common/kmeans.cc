// Copyright 2026 The shoal Authors.

#include "common/kmeans.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace shoal_bench {
namespace {

// The nearest centre of every row of `points`.
std::vector<uint32_t> Assign(MatrixView centres, MatrixView points, uint32_t threads) {
  const std::vector<std::vector<Candidate>> nearest =
      ExactKnnFloat(centres, points, shoal::Metric::kL2, 1, threads, nullptr);
  std::vector<uint32_t> out(points.rows);
  for (size_t i = 0; i < points.rows; ++i) out[i] = nearest[i].empty() ? 0 : nearest[i][0].row;
  return out;
}

}  // namespace

std::vector<float> NormalizedRows(MatrixView rows) {
  std::vector<float> out(rows.data, rows.data + rows.rows * rows.dim);
  for (size_t i = 0; i < rows.rows; ++i) {
    float* r = out.data() + i * rows.dim;
    double norm = 0;
    for (uint32_t d = 0; d < rows.dim; ++d) norm += double{r[d]} * r[d];
    const float inv = norm > 0 ? static_cast<float>(1 / std::sqrt(norm)) : 0.f;
    for (uint32_t d = 0; d < rows.dim; ++d) r[d] *= inv;
  }
  return out;
}

KMeansResult KMeans(MatrixView input, const KMeansSettings& s) {
  std::vector<float> normalized;
  MatrixView rows = input;
  if (s.normalize) {
    normalized = NormalizedRows(input);
    rows.data = normalized.data();
  }
  const uint32_t dim = rows.dim;
  std::mt19937_64 rng(s.seed);
  std::vector<size_t> order(rows.rows);
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(std::min(order.size(), std::max<size_t>(s.sample, s.clusters)));
  std::vector<float> sample(order.size() * dim);
  for (size_t i = 0; i < order.size(); ++i) {
    std::copy_n(rows.Row(order[i]), dim, sample.begin() + i * dim);
  }
  const MatrixView sample_view{sample.data(), order.size(), dim};
  const uint32_t k = static_cast<uint32_t>(std::min<size_t>(s.clusters, order.size()));
  KMeansResult r;
  r.centroids.assign(sample.begin(), sample.begin() + size_t{k} * dim);  // the first k, shuffled
  for (int it = 0; it < s.iterations; ++it) {
    const std::vector<uint32_t> a = Assign({r.centroids.data(), k, dim}, sample_view, s.threads);
    std::vector<double> sums(size_t{k} * dim, 0);
    std::vector<size_t> counts(k, 0);
    for (size_t i = 0; i < a.size(); ++i) {
      ++counts[a[i]];
      for (uint32_t d = 0; d < dim; ++d) sums[a[i] * dim + d] += sample_view.Row(i)[d];
    }
    for (uint32_t c = 0; c < k; ++c) {
      if (counts[c] == 0) continue;
      for (uint32_t d = 0; d < dim; ++d) {
        r.centroids[c * dim + d] = static_cast<float>(sums[c * dim + d] / counts[c]);
      }
    }
  }
  r.assignment = Assign({r.centroids.data(), k, dim}, rows, s.threads);
  return r;
}

}  // namespace shoal_bench

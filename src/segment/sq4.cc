// Copyright 2026 The shoal Authors.

#include "segment/sq4.h"

#include <cmath>

namespace shoal::segment {
namespace {

// Lloyd-Max over one dimension's histogram: the kLevels centres (in SQ8
// code units, ascending) and each byte's level.
void FitDimension(const std::array<uint64_t, 256>& counts, float* centre, uint8_t* level) {
  constexpr uint32_t k = Sq4::kLevels;
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  // Seeds: the bytes at the (l + 1/2) / k quantiles; even steps when empty.
  for (uint32_t l = 0; l < k; ++l) centre[l] = 16.0f * l + 7.5f;
  if (total > 0) {
    uint64_t seen = 0;
    uint32_t l = 0;
    for (uint32_t b = 0; b < 256 && l < k; ++b) {
      seen += counts[b];
      while (l < k && static_cast<double>(seen) >= (l + 0.5) * static_cast<double>(total) / k) {
        centre[l++] = static_cast<float>(b);
      }
    }
  }
  // The iterations visit only the bytes that occur (few in a small
  // segment), and stop once no centre moves.
  uint8_t used[256];
  uint32_t used_count = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    if (counts[b] != 0) used[used_count++] = static_cast<uint8_t>(b);
  }
  for (int it = 0; it < Sq4::kIterations; ++it) {
    // Assign each byte to its nearest centre (centres ascending: the nearest
    // moves up monotonically).
    double sum[k] = {}, weight[k] = {};
    uint32_t l = 0;
    for (uint32_t i = 0; i < used_count; ++i) {
      const float b = used[i];
      while (l + 1 < k && std::abs(centre[l + 1] - b) <= std::abs(centre[l] - b)) ++l;
      sum[l] += static_cast<double>(counts[used[i]]) * b;
      weight[l] += static_cast<double>(counts[used[i]]);
    }
    bool moved = false;
    for (uint32_t i = 0; i < k; ++i) {
      if (weight[i] == 0) continue;
      const auto c = static_cast<float>(sum[i] / weight[i]);
      moved |= c != centre[i];
      centre[i] = c;
    }
    // Keep them ascending (an emptied level keeps its old place, which
    // may now sit past a neighbour's).
    for (uint32_t i = 1; i < k; ++i) centre[i] = std::max(centre[i], centre[i - 1]);
    if (!moved) break;
  }
  uint32_t l = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    while (l + 1 < k && std::abs(centre[l + 1] - b) <= std::abs(centre[l] - b)) ++l;
    level[b] = static_cast<uint8_t>(l);
  }
}

}  // namespace

Sq4 Sq4::Fit(const Sq8& sq8, const Histogram& histogram) {
  const uint32_t dim = sq8.dim();
  std::vector<uint8_t> level(size_t{dim} * 256);
  std::vector<float> centre(size_t{dim} * kLevels);
  for (uint32_t j = 0; j < dim; ++j) {
    FitDimension(histogram.counts(j), &centre[size_t{j} * kLevels], &level[size_t{j} * 256]);
  }
  // The PQ codebook: chunk s = dimensions {2s, 2s + 1}; centroid c holds
  // level c & 15 of the first and c >> 4 of the second.
  std::vector<uint32_t> offsets;
  for (uint32_t j = 0; j < dim; j += 2) offsets.push_back(j);
  offsets.push_back(dim);
  std::vector<float> mean(sq8.lo());
  std::vector<float> centroids(size_t{dim} * Pq::kCentroids);
  for (uint32_t j = 0; j < dim; ++j) {
    const bool second = j % 2 == 1;
    for (uint32_t c = 0; c < Pq::kCentroids; ++c) {
      const uint32_t l = second ? c >> 4 : c & 15;
      centroids[size_t{j} * Pq::kCentroids + c] = sq8.scale()[j] * centre[size_t{j} * kLevels + l];
    }
  }
  return Sq4(dim, std::move(level),
             Pq::FromCodebook(dim, std::move(offsets), std::move(mean), std::move(centroids)));
}

}  // namespace shoal::segment

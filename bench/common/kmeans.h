// Copyright 2026 The shoal Authors.
//
// A cheap k-means for benchmarks: Lloyd's iterations on a sample of the
// rows, then every row assigned to its nearest centre. Good enough to give
// real embeddings "clusters" (labels that correlate with position), not a
// quantizer: nobody measures its quality.
//
// Distances are L2, on unit-normalized rows when `normalize` is set (what
// kCosine and kInnerProduct data want), computed with the bench's
// brute-force kernels (brute_force.h).

#ifndef SHOAL_BENCH_COMMON_KMEANS_H_
#define SHOAL_BENCH_COMMON_KMEANS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/brute_force.h"

namespace shoal_bench {

struct KMeansSettings {
  uint32_t clusters = 100;
  size_t sample = 20000;  // rows Lloyd's iterations run on (all rows when fewer)
  int iterations = 8;
  bool normalize = false;
  uint64_t seed = 1;
  uint32_t threads = 0;   // 0 = all cores
};

struct KMeansResult {
  std::vector<float> centroids;      // clusters x dim, row-major
  std::vector<uint32_t> assignment;  // per row of the input: its nearest centre
};

// REQUIRES: rows.rows > 0, settings.clusters > 0. A centre left without
// sample rows keeps its previous position; clusters may come out empty.
KMeansResult KMeans(MatrixView rows, const KMeansSettings& settings);

// Unit-normalized copy of `rows` (zero rows stay zero).
std::vector<float> NormalizedRows(MatrixView rows);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_KMEANS_H_

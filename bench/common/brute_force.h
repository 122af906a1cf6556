// Copyright 2026 The shoal Authors.
//
// Exact k-nearest-neighbour search by scanning every base row: the yardstick
// for recall (ground_truth.h) and the "exact search" raw limit.
//
// Queries are scanned in blocks of kQueryBlock against tiles of base rows
// that stay in cache, so a base row is read from memory once per block
// instead of once per query; distances are float, in an AVX2+FMA kernel when
// the CPU has one (chosen at run time, like shoal's own kernels) and a
// portable one otherwise.

#ifndef SHOAL_BENCH_COMMON_BRUTE_FORCE_H_
#define SHOAL_BENCH_COMMON_BRUTE_FORCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "shoal/options.h"

namespace shoal_bench {

class Progress;

// Row-major vectors borrowed from the caller.
struct MatrixView {
  const float* data = nullptr;
  size_t rows = 0;
  uint32_t dim = 0;
  const float* Row(size_t i) const { return data + i * dim; }
};

struct Candidate {
  float distance;
  uint32_t row;  // base row index
};

// For every query, its `k` nearest base rows under `metric` in float
// precision, sorted by (distance, row). Same distances as shoal::Metric;
// kCosine normalizes on the fly. Runs on `threads` threads (0 = all cores);
// `progress`, when set, advances by one per query answered.
std::vector<std::vector<Candidate>> ExactKnnFloat(MatrixView base, MatrixView queries,
                                                  shoal::Metric metric, uint32_t k,
                                                  uint32_t threads, Progress* progress);

// Exact k nearest among chosen rows of a base set, one query at a time on
// the calling thread: the exact scan of the rows a filter matches (and the
// filtered ground truth). What kCosine needs is computed once, here.
class ExactScan {
 public:
  ExactScan(MatrixView base, shoal::Metric metric);  // `base` is borrowed
  ~ExactScan();
  // The min(k, rows.size()) nearest of base rows `rows` (row indexes, any
  // order), sorted by (distance, row). REQUIRES: k > 0.
  std::vector<Candidate> Search(const float* query, uint32_t k,
                                std::span<const uint32_t> rows) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "avx2+fma" or "portable": the kernel ExactKnnFloat uses on this CPU.
const char* BruteForceKernelName();

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_BRUTE_FORCE_H_

// Copyright 2026 The shoal Authors.
//
// Exact nearest neighbours by brute force, the yardstick for recall.

#ifndef SHOAL_BENCH_COMMON_GROUND_TRUTH_H_
#define SHOAL_BENCH_COMMON_GROUND_TRUTH_H_

#include <cstdint>
#include <span>
#include <vector>

#include "common/dataset.h"
#include "shoal/db.h"
#include "shoal/options.h"

namespace shoal_bench {

// For every query of `data`, the ids of its `k` nearest base vectors under
// `metric` (same definitions as shoal::Metric; kCosine compares normalized
// vectors), sorted by ascending distance, ties by id. A float scan
// (brute_force.h) keeps the best k + kRerankMargin rows of each query, whose
// distances are then recomputed in double precision, so that the truth does
// not depend on summation order; it can differ from a full double-precision
// scan only if float rounding moved a row by more than kRerankMargin ranks.
// Runs on `threads` threads (0 = hardware concurrency).
inline constexpr uint32_t kRerankMargin = 32;
std::vector<std::vector<uint64_t>> BruteForceKnn(const Dataset& data,
                                                 shoal::Metric metric,
                                                 uint32_t k, uint32_t threads);

// Mean over queries of |top k of got[i] ∩ first k of truth[i]| / k, for the
// first got.size() queries (got.size() <= truth.size()). 0 when got is empty.
double RecallAtK(const std::vector<std::vector<uint64_t>>& truth,
                 std::span<const std::vector<shoal::Neighbor>> got,
                 uint32_t k);
// The same for answers given as ids.
double RecallAtK(const std::vector<std::vector<uint64_t>>& truth,
                 std::span<const std::vector<uint64_t>> got, uint32_t k);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_GROUND_TRUTH_H_

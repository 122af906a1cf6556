// Copyright 2026 The shoal Authors.
//
// What the machine can do without shoal, measured in the same run as shoal
// so that the two can be compared: memcpy bandwidth of memory already mapped
// (one thread, and every thread at once on its own buffers) and exact
// brute-force search QPS (brute_force.h, on all threads). The sequential
// write() baseline to the database directory is the `raw` phase.

#ifndef SHOAL_BENCH_COMPREHENSIVE_MACHINE_LIMITS_H_
#define SHOAL_BENCH_COMPREHENSIVE_MACHINE_LIMITS_H_

#include <cstdint>
#include <vector>

#include "common/dataset.h"
#include "comprehensive/report/report.h"
#include "shoal/options.h"

namespace shoal_bench {

void MeasureMemcpy(uint32_t threads, LimitsFigures* figures);

// Answers every query of `data` exactly (float scan, k nearest), timing it,
// and checks the answers against `truth`.
void MeasureBruteForce(const Dataset& data, shoal::Metric metric, uint32_t k,
                       uint32_t threads, const std::vector<std::vector<uint64_t>>& truth,
                       LimitsFigures* figures);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMPREHENSIVE_MACHINE_LIMITS_H_

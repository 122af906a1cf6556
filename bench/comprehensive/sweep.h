// Copyright 2026 The shoal Authors.
//
// Measures an AnnIndex over a sweep of its search knob: for each value,
// single-thread Search of the queries one at a time (QPS, recall@k, latency
// percentiles), then one SearchBatch of all of them on all threads.

#ifndef SHOAL_BENCH_COMPREHENSIVE_SWEEP_H_
#define SHOAL_BENCH_COMPREHENSIVE_SWEEP_H_

#include <cstdint>
#include <vector>

#include "common/dataset.h"
#include "comprehensive/report/report.h"
#include "peers/ann_index.h"

namespace shoal_bench {

struct SweepSettings {
  uint32_t k = 10;
  uint32_t threads = 0;         // of SearchBatch (0 = all cores)
  double budget_s = 3.0;        // single-thread queries of one point stop after this
  std::vector<uint32_t> knobs;  // empty: the index's DefaultSweep()
};

// Measures `index` (already built) at every knob value; `truth` holds the
// ids of the exact k nearest of each query. Dies on a search error.
std::vector<SweepPoint> RunSweep(AnnIndex& index, const Dataset& data,
                                 const std::vector<std::vector<uint64_t>>& truth,
                                 const SweepSettings& settings);

// Mean and nearest-rank percentiles of per-query latencies `us`
// (microseconds): what every sweep point reports.
LatencyFigures Latencies(std::vector<double> us);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMPREHENSIVE_SWEEP_H_

// Copyright 2026 The shoal Authors.
//
// Measures an AnnIndex's filtered search over one scenario of the filter
// workload (filter_workload.h), at each value of its search knob: the
// queries one FilteredSearch at a time on one thread (QPS, latency, recall,
// short answers, answers failing the predicate), then FilteredSearchBatch
// of all of them on all threads. Both are repeated until 0.2 s have passed
// (a fast pass is shorter than a preemption); the first pass is scored.

#ifndef SHOAL_BENCH_COMPREHENSIVE_FILTER_SWEEP_H_
#define SHOAL_BENCH_COMPREHENSIVE_FILTER_SWEEP_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "common/dataset.h"
#include "common/filter_workload.h"
#include "comprehensive/report/report.h"
#include "peers/ann_index.h"
#include "shoal/options.h"

namespace shoal_bench {

struct FilterSweepSettings {
  uint32_t k = 10;
  uint32_t threads = 0;         // of the batch (0 = all cores)
  double budget_s = 1.0;        // the single-thread pass of a point stops after this
  std::vector<uint32_t> knobs;  // empty: the index's DefaultSweep()
  // Once a point's single-thread recall reaches this, the larger knob
  // values are skipped: they cost more and cannot gain.
  double stop_recall = 0.9995;
  // When set (shoal), called with the stats to fill during a single-thread
  // pass, and with null after it.
  std::function<void(shoal::SearchStats*)> set_stats;
};

// The points of `index` (built over `data`) on `scenario`. An index that
// cannot filter (Unimplemented) gets a run with a note and no points; any
// other search error is fatal.
FilterRun RunFilterSweep(AnnIndex& index, const Dataset& data, const FilterScenario& scenario,
                         const FilterSweepSettings& settings);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMPREHENSIVE_FILTER_SWEEP_H_

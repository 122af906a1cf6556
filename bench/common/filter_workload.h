// Copyright 2026 The shoal Authors.
//
// The filtered-search workload of comprehensive_bench --phases filter: what
// every base row carries (labels, an int64 attribute "ts"), the scenarios
// searched (a predicate per query) and their exact answers.
//
// Every row gets, independently:
//   - for each uniform selectivity s: label kUniformLabel + i with
//     probability s (i: the index of s in the settings);
//   - label kClusterLabel + c, c its k-means cluster (kmeans.h: ~100
//     clusters, on normalized rows for cosine and inner product);
//   - labels kAndLabelA and kAndLabelB, each with probability
//     and_fraction, independently;
//   - ts uniform in [0, kTsRange).
// Scenarios (families, in this order):
//   uniform  one per selectivity: AnyLabel({kUniformLabel + i});
//   cluster  "cluster near": each query filtered to its nearest centre's
//            cluster (positive correlation); "cluster far": to the cluster
//            (of >= k rows) whose centre is farthest (negative correlation);
//   range    Range("ts", lo, lo + range_fraction * kTsRange), lo drawn per
//            window, queries taking range_windows windows in turn;
//   and      And({AnyLabel({kAndLabelA}), AnyLabel({kAndLabelB})}).
// Which rows a predicate matches is decided by MatchesFilter, the bench's
// own reading of shoal/filter.h, from the tags generated here (not from
// the engine); the truth of a query is the exact k nearest of those rows
// (ExactScan, float distances, ties by row).
//
// Row r has id data.ids[r] == r (Dataset's ids), so row sets and id sets
// are the same thing here.

#ifndef SHOAL_BENCH_COMMON_FILTER_WORKLOAD_H_
#define SHOAL_BENCH_COMMON_FILTER_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/dataset.h"
#include "shoal/filter.h"
#include "shoal/options.h"
#include "shoal/record.h"

namespace shoal_bench {

inline constexpr uint32_t kUniformLabel = 1000;
inline constexpr uint32_t kClusterLabel = 2000;
inline constexpr uint32_t kAndLabelA = 3000;
inline constexpr uint32_t kAndLabelB = 3001;
inline constexpr char kTsAttribute[] = "ts";  // CollectionOptions::attributes[0]
inline constexpr int64_t kTsRange = 1000000;

struct FilterWorkloadSettings {
  std::vector<std::string> families = {"uniform", "cluster", "range", "and"};
  std::vector<double> selectivities = {0.5, 0.1, 0.01, 0.001, 0.0001};
  uint32_t clusters = 100;
  double range_fraction = 0.05;
  uint32_t range_windows = 8;
  double and_fraction = 0.1;  // of each label: the And matches about its square
  uint32_t k = 10;
  uint64_t seed = 42;
  uint32_t threads = 0;       // for k-means and the truth (0 = all cores)
};

// One predicate in the forms the indexes take (ann_index.h, RowFilter).
struct Predicate {
  shoal::Filter filter;
  std::vector<uint8_t> bitmap;  // bit r % 8 of byte r / 8: row r matches
  std::vector<uint32_t> rows;   // the matching rows, ascending
};

struct FilterScenario {
  std::string name;    // "uniform 1%", "cluster near", "range 5%", ...
  std::string family;  // "uniform", "cluster", "range", "and"
  double target = 0;   // the selectivity asked for (0: none, e.g. clusters)
  std::vector<Predicate> predicates;
  std::vector<uint32_t> query_predicate;  // per query: its index in predicates
  // Per query: the ids of its exact k nearest matching rows (all of them
  // when fewer than k match), nearest first.
  std::vector<std::vector<uint64_t>> truth;
  double truth_seconds = 0;

  const Predicate& ForQuery(size_t q) const { return predicates[query_predicate[q]]; }
  // Mean over queries of the fraction of base rows their predicate matches.
  double Selectivity(size_t num_rows) const;
  // Queries whose predicate matches at least k rows.
  size_t QueriesWithK(uint32_t k) const;
};

struct FilterWorkload {
  // Row r's labels are labels[label_begin[r] .. label_begin[r + 1]).
  std::vector<uint32_t> labels;
  std::vector<size_t> label_begin;
  std::vector<shoal::AttributeValue> ts;  // one per row: {0, value}
  std::vector<FilterScenario> scenarios;

  std::span<const uint32_t> Labels(size_t row) const {
    return {labels.data() + label_begin[row], label_begin[row + 1] - label_begin[row]};
  }
  // Records of every base row (views of `data` and of this workload).
  std::vector<shoal::Record> Records(const Dataset& data) const;
};

// Tags, scenarios and truth for `data` (searched with `metric`). Dies on a
// bad setting (an unknown family, a selectivity outside (0, 1]).
FilterWorkload MakeFilterWorkload(const Dataset& data, shoal::Metric metric,
                                  const FilterWorkloadSettings& settings);

// Whether a row with `labels` and attribute "ts" = `ts` passes `filter`, as
// shoal/filter.h defines it (an Ids predicate is asked with `id`).
bool MatchesFilter(const shoal::Filter& filter, std::span<const uint32_t> labels, int64_t ts,
                   uint64_t id);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_FILTER_WORKLOAD_H_

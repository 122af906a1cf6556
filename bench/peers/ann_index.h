// Copyright 2026 The shoal Authors.
//
// One nearest-neighbour index under test, seen the same way whether it is
// shoal or a peer library, so that one sweep loop (sweep.h) measures them
// all alike: build once, then for each value of the search knob, answer the
// queries one call at a time on one thread, and all at once on all threads.
// Filtered searches (--phases filter) go through FilteredSearch and
// FilteredSearchBatch, which an index implements when it can honour a
// predicate inside its search (not by filtering its answers afterwards).

#ifndef SHOAL_BENCH_PEERS_ANN_INDEX_H_
#define SHOAL_BENCH_PEERS_ANN_INDEX_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/dataset.h"
#include "comprehensive/report/report.h"
#include "shoal/filter.h"

namespace shoal_bench {

// One predicate of a filtered search, in the three forms indexes take; all
// three describe the same rows (filter_workload.h builds them together).
// Base row r has id r (Dataset's ids), so rows and ids are the same here.
struct RowFilter {
  const shoal::Filter* filter = nullptr;  // declarative: shoal
  std::span<const uint8_t> bitmap;        // bit r % 8 of byte r / 8: faiss, hnswlib
  std::span<const uint32_t> rows;         // the matching rows, ascending: exact scan
};

class AnnIndex {
 public:
  virtual ~AnnIndex() = default;

  // "shoal", "hnswlib M=16", ... and its build parameters.
  virtual std::string Name() const = 0;
  virtual std::string Params() const = 0;
  // The search-time knob ("list_size", "ef", "nprobe") and the values swept.
  virtual std::string KnobName() const = 0;
  virtual std::vector<uint32_t> DefaultSweep() const = 0;

  // Builds over every base row of `data` (ids data.ids) on `threads`
  // threads, filling `figures`. Called once, before any search.
  virtual absl::Status Build(const Dataset& data, uint32_t threads,
                             BuildFigures* figures) = 0;
  // Applies to the searches that follow. Not concurrent with searches.
  virtual void SetKnob(uint32_t value) = 0;
  // The ids of the (about) k nearest base rows of `query`, on this thread.
  virtual absl::Status Search(const float* query, uint32_t k, std::vector<uint64_t>* ids) = 0;
  // Bytes the built index keeps in memory to answer queries (vectors, codes,
  // graph, id maps), from its data structures; -1 when unknown.
  virtual int64_t IndexBytes() const { return -1; }
  // Distance computations done by Search calls so far, when the index counts
  // them (hnswlib does); -1 otherwise.
  virtual int64_t DistanceComputations() const { return -1; }
  // Every query (row-major) at once on `threads` threads; (*ids)[i] answers query i.
  virtual absl::Status SearchBatch(std::span<const float> queries, uint32_t k,
                                   uint32_t threads,
                                   std::vector<std::vector<uint64_t>>* ids) = 0;

  // Search among the base rows `filter` matches only: never an id that fails
  // it, and at most k. Unimplemented when the index cannot filter.
  virtual absl::Status FilteredSearch(const float* /*query*/, uint32_t /*k*/,
                                      const RowFilter& /*filter*/,
                                      std::vector<uint64_t>* /*ids*/) {
    return absl::UnimplementedError(Name() + ": no filtered search");
  }
  // SearchBatch with a predicate per query: filters[i] (its views alive
  // during the call) is query i's.
  virtual absl::Status FilteredSearchBatch(std::span<const float> /*queries*/,
                                           uint32_t /*k*/, uint32_t /*threads*/,
                                           std::span<const RowFilter> /*filters*/,
                                           std::vector<std::vector<uint64_t>>* /*ids*/) {
    return absl::UnimplementedError(Name() + ": no filtered search");
  }
};

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_PEERS_ANN_INDEX_H_

// Copyright 2026 The shoal Authors.
//
// One nearest-neighbour index under test, seen the same way whether it is
// shoal or a peer library, so that one sweep loop (sweep.h) measures them
// all alike: build once, then for each value of the search knob, answer the
// queries one call at a time on one thread, and all at once on all threads.

#ifndef SHOAL_BENCH_PEERS_ANN_INDEX_H_
#define SHOAL_BENCH_PEERS_ANN_INDEX_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/dataset.h"
#include "comprehensive/report/report.h"

namespace shoal_bench {

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
};

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_PEERS_ANN_INDEX_H_

// Copyright 2026 The shoal Authors.
//
// shoal as an AnnIndex: a fresh database whose base set is in on-disk
// segments, loaded one of two ways, each timed on its own:
//   kBulkLoad  one DB::BulkLoad of the whole base set (a segment per shard);
//   kPutFlush  PutBatch of everything into the memtables (timed apart), then
//              DB::Flush, which builds the segments; the build time is Flush;
//   kStream    as a program writes over time: PutBatch(1000) with 4 MiB
//              memtables (flushes and background merges run meanwhile), then
//              Flush + WaitForCompact; the build time is all of it (issue 17's
//              "streamed ingest", against one BulkLoad).
// Searches go through the public API (Search, SearchBatch); the knob is
// SearchOptions::list_size. Filtered searches set SearchOptions::filter to
// the RowFilter's declarative predicate; with SetRecords, kBulkLoad loads
// records (labels, attributes) instead of bare vectors.

#ifndef SHOAL_BENCH_COMPREHENSIVE_SHOAL_INDEX_H_
#define SHOAL_BENCH_COMPREHENSIVE_SHOAL_INDEX_H_

#include <memory>
#include <span>
#include <string>

#include "peers/ann_index.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "shoal/record.h"

namespace shoal_bench {

class ShoalIndex : public AnnIndex {
 public:
  enum class Load { kBulkLoad, kPutFlush, kStream };
  // kStream: rows per PutBatch and memtable bytes per shard.
  static constexpr size_t kStreamBatch = 1000;
  static constexpr size_t kStreamMemtableBytes = size_t{4} << 20;

  // The database lives in `dir`, which is wiped first and removed by the
  // destructor. options.error_if_exists is forced on.
  ShoalIndex(Load load, std::string dir, shoal::Options options,
             shoal::SearchOptions search);
  ~ShoalIndex() override;

  std::string Name() const override { return "shoal"; }
  std::string Params() const override;
  std::string KnobName() const override { return "list_size"; }
  std::vector<uint32_t> DefaultSweep() const override;
  absl::Status Build(const Dataset& data, uint32_t threads, BuildFigures* figures) override;
  void SetKnob(uint32_t value) override { search_.list_size = value; }
  // The segment files, memory-mapped whole (node blocks, codes, id tables):
  // after Build every vector is in one.
  int64_t IndexBytes() const override;
  absl::Status Search(const float* query, uint32_t k, std::vector<uint64_t>* ids) override;
  absl::Status SearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                           std::vector<std::vector<uint64_t>>* ids) override;
  absl::Status FilteredSearch(const float* query, uint32_t k, const RowFilter& filter,
                              std::vector<uint64_t>* ids) override;
  // Queries with the same predicate (the same RowFilter::filter) go in one
  // SearchBatch, since a SearchOptions carries one filter.
  absl::Status FilteredSearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                                   std::span<const RowFilter> filters,
                                   std::vector<std::vector<uint64_t>>* ids) override;

  // Before Build, kBulkLoad only: load these records (the same ids and
  // vectors as the data set, in its order) with DB::BulkLoad(records). The
  // records' views must stay valid through Build; the collection's
  // attributes come from the options given to the constructor.
  void SetRecords(std::span<const shoal::Record> records) { records_ = records; }
  // Searches from now on add to *stats (SearchOptions::stats; null: none).
  void SetStats(shoal::SearchStats* stats) { search_.stats = stats; }

 private:
  // PutBatch of every base row, `batch` rows a call.
  absl::Status PutAll(const Dataset& data, size_t batch, BuildFigures* figures);

  const Load load_;
  const std::string dir_;
  shoal::Options options_;
  shoal::SearchOptions search_;
  uint32_t dim_ = 0;
  std::span<const shoal::Record> records_;
  std::unique_ptr<shoal::DB> db_;
};

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMPREHENSIVE_SHOAL_INDEX_H_

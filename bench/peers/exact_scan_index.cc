// Copyright 2026 The shoal Authors.
//
// "exact scan (matching ids known)" as an AnnIndex: what a filtered search
// costs without an index, given the list of matching rows (a posting list):
// the distance to every matching row, on the calling thread, keeping the k
// nearest. An oracle: it never looks at a row that fails the predicate
// (faiss Flat, by contrast, checks the predicate on every row). Build
// only borrows the base rows (and, for kCosine, computes their norms).

#include <memory>
#include <numeric>

#include "common/bench_util.h"
#include "common/brute_force.h"
#include "fmt/core.h"
#include "peers/peers.h"

namespace shoal_bench {
namespace {

constexpr size_t kSearchChunk = 4;

class ExactScanIndex : public AnnIndex {
 public:
  explicit ExactScanIndex(shoal::Metric metric) : metric_(metric) {}

  std::string Name() const override { return "exact scan (matching ids known)"; }
  std::string Params() const override { return "brute force over the matching rows"; }
  std::string KnobName() const override { return "-"; }
  std::vector<uint32_t> DefaultSweep() const override { return {0}; }
  void SetKnob(uint32_t) override {}

  absl::Status Build(const Dataset& data, uint32_t threads, BuildFigures* figures) override {
    const Stopwatch sw;
    data_ = &data;
    scan_ = std::make_unique<ExactScan>(MatrixView{data.base.data(), data.size(), data.dim()},
                                        metric_);
    all_rows_.resize(data.size());
    std::iota(all_rows_.begin(), all_rows_.end(), 0u);
    figures->method = "none (borrows the rows)";
    figures->vectors = data.size();
    figures->threads = ResolveThreads(threads);
    figures->seconds = sw.Seconds();
    return absl::OkStatus();
  }

  absl::Status Search(const float* query, uint32_t k, std::vector<uint64_t>* ids) override {
    Answer(query, k, all_rows_, ids);
    return absl::OkStatus();
  }
  absl::Status SearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                           std::vector<std::vector<uint64_t>>* ids) override {
    std::vector<RowFilter> all(queries.size() / data_->dim(), RowFilter{nullptr, {}, all_rows_});
    return FilteredSearchBatch(queries, k, threads, all, ids);
  }
  absl::Status FilteredSearch(const float* query, uint32_t k, const RowFilter& filter,
                              std::vector<uint64_t>* ids) override {
    Answer(query, k, filter.rows, ids);
    return absl::OkStatus();
  }
  absl::Status FilteredSearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                                   std::span<const RowFilter> filters,
                                   std::vector<std::vector<uint64_t>>* ids) override {
    const uint32_t dim = data_->dim();
    ids->assign(queries.size() / dim, {});
    ParallelChunks(ids->size(), threads, kSearchChunk, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        Answer(queries.data() + i * dim, k, filters[i].rows, &(*ids)[i]);
      }
    });
    return absl::OkStatus();
  }

 private:
  void Answer(const float* query, uint32_t k, std::span<const uint32_t> rows,
              std::vector<uint64_t>* ids) const {
    ids->clear();
    for (const Candidate& c : scan_->Search(query, k, rows)) ids->push_back(data_->ids[c.row]);
  }

  const shoal::Metric metric_;
  const Dataset* data_ = nullptr;
  std::unique_ptr<ExactScan> scan_;
  std::vector<uint32_t> all_rows_;
};

}  // namespace

std::unique_ptr<AnnIndex> NewExactScanIndex(shoal::Metric metric) {
  return std::make_unique<ExactScanIndex>(metric);
}

}  // namespace shoal_bench

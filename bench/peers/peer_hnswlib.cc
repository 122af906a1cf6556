// Copyright 2026 The shoal Authors.
//
// hnswlib as an AnnIndex. hnswlib picks its distance kernels at compile time
// (SSE, AVX, AVX-512 by the compiler's target macros), so CMake compiles this
// file with -march=native when SHOAL_BENCH_PEERS_NATIVE is on, as
// ann-benchmarks does; shoal picks its kernels at run time. Filtered search
// needs hnswlib 0.7 or later (BaseFilterFunctor; CMake defines
// SHOAL_BENCH_HNSWLIB_FILTER when the headers have it).

#include <exception>
#include <memory>

#include "common/bench_util.h"
#include "common/progress.h"
#include "fmt/core.h"
#include "hnswlib/hnswlib.h"
#include "peers/peers.h"

namespace shoal_bench {
namespace {

constexpr size_t kAddChunk = 64;
constexpr size_t kSearchChunk = 4;
constexpr size_t kRandomSeed = 100;

#ifdef SHOAL_BENCH_HNSWLIB_FILTER
// hnswlib's filter functor over a RowFilter's bitmap (labels are rows here).
class BitmapFilter : public hnswlib::BaseFilterFunctor {
 public:
  explicit BitmapFilter(std::span<const uint8_t> bitmap) : bitmap_(bitmap) {}
  bool operator()(hnswlib::labeltype id) override {
    return id / 8 < bitmap_.size() && ((bitmap_[id / 8] >> (id % 8)) & 1) != 0;
  }

 private:
  std::span<const uint8_t> bitmap_;
};
#else
class BitmapFilter {};  // hnswlib before 0.7: no filtered search
#endif

class HnswlibIndex : public AnnIndex {
 public:
  HnswlibIndex(uint32_t m, uint32_t ef_construction, shoal::Metric metric)
      : m_(m), ef_construction_(ef_construction), metric_(metric) {}

  std::string Name() const override { return fmt::format("hnswlib M={}", m_); }
  std::string Params() const override {
    return fmt::format("M={} efConstruction={}", m_, ef_construction_);
  }
  std::string KnobName() const override { return "ef"; }
  std::vector<uint32_t> DefaultSweep() const override {
    return {10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300};
  }

  absl::Status Build(const Dataset& data, uint32_t threads, BuildFigures* figures) override {
    dim_ = data.dim();
    const std::vector<float> rows = PeerVectors(data.base, dim_, metric_);
    try {
      if (metric_ == shoal::Metric::kL2) {
        space_ = std::make_unique<hnswlib::L2Space>(dim_);
      } else {
        space_ = std::make_unique<hnswlib::InnerProductSpace>(dim_);
      }
      index_ = std::make_unique<hnswlib::HierarchicalNSW<float>>(
          space_.get(), data.size(), m_, ef_construction_, kRandomSeed);
    } catch (const std::exception& e) {
      return absl::InternalError(fmt::format("hnswlib: {}", e.what()));
    }
    figures->method = fmt::format("addPoint from {} threads", ResolveThreads(threads));
    figures->vectors = data.size();
    figures->threads = ResolveThreads(threads);
    Progress progress(Name() + " build", data.size());
    const Stopwatch sw;
    absl::Status status = AddAll(data, rows, threads, progress);
    figures->seconds = sw.Seconds();
    return status;
  }

  void SetKnob(uint32_t value) override { index_->setEf(value); }
  // The level-0 block (links, vector, label per element), the upper levels'
  // link lists, the level of each element and its lock (hnswlib keeps a
  // std::mutex per element); its label hash map is left out.
  int64_t IndexBytes() const override {
    if (index_ == nullptr) return -1;
    const hnswlib::HierarchicalNSW<float>& h = *index_;
    size_t bytes = h.max_elements_ * (h.size_data_per_element_ + sizeof(int) + sizeof(std::mutex));
    for (size_t i = 0; i < h.cur_element_count; ++i) {
      bytes += static_cast<size_t>(h.element_levels_[i]) * h.size_links_per_element_;
    }
    return static_cast<int64_t>(bytes);
  }
  int64_t DistanceComputations() const override {
    return index_->metric_distance_computations.load();
  }

  absl::Status Search(const float* query, uint32_t k, std::vector<uint64_t>* ids) override {
    if (metric_ == shoal::Metric::kCosine) {
      const std::vector<float> q = PeerVectors({query, dim_}, dim_, metric_);
      Answer(q.data(), k, ids);
    } else {
      Answer(query, k, ids);
    }
    return absl::OkStatus();
  }

  absl::Status SearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                           std::vector<std::vector<uint64_t>>* ids) override {
    const std::vector<float> q = PeerVectors(queries, dim_, metric_);
    ids->assign(q.size() / dim_, {});
    ParallelChunks(ids->size(), threads, kSearchChunk, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) Answer(q.data() + i * dim_, k, &(*ids)[i]);
    });
    return absl::OkStatus();
  }

#ifdef SHOAL_BENCH_HNSWLIB_FILTER
  absl::Status FilteredSearch(const float* query, uint32_t k, const RowFilter& filter,
                              std::vector<uint64_t>* ids) override {
    BitmapFilter allowed(filter.bitmap);
    if (metric_ == shoal::Metric::kCosine) {
      const std::vector<float> q = PeerVectors({query, dim_}, dim_, metric_);
      Answer(q.data(), k, ids, &allowed);
    } else {
      Answer(query, k, ids, &allowed);
    }
    return absl::OkStatus();
  }

  absl::Status FilteredSearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                                   std::span<const RowFilter> filters,
                                   std::vector<std::vector<uint64_t>>* ids) override {
    const std::vector<float> q = PeerVectors(queries, dim_, metric_);
    ids->assign(q.size() / dim_, {});
    ParallelChunks(ids->size(), threads, kSearchChunk, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        BitmapFilter allowed(filters[i].bitmap);
        Answer(q.data() + i * dim_, k, &(*ids)[i], &allowed);
      }
    });
    return absl::OkStatus();
  }
#endif

 private:
  // The first point alone (it becomes the entry point), then the rest from
  // every thread, as hnswlib's Python binding does.
  absl::Status AddAll(const Dataset& data, const std::vector<float>& rows, uint32_t threads,
                      Progress& progress) {
    try {
      index_->addPoint(rows.data(), data.ids[0]);
    } catch (const std::exception& e) {
      return absl::InternalError(fmt::format("hnswlib addPoint: {}", e.what()));
    }
    std::atomic<bool> failed{false};
    ParallelChunks(data.size() - 1, threads, kAddChunk, [&](size_t begin, size_t end) {
      try {
        for (size_t i = begin + 1; i < end + 1; ++i) {
          index_->addPoint(rows.data() + i * dim_, data.ids[i]);
        }
      } catch (const std::exception&) {
        failed = true;
      }
      progress.Add(end - begin);
    });
    return failed ? absl::InternalError("hnswlib addPoint failed") : absl::OkStatus();
  }

  // `allowed`: null for an unfiltered search.
  void Answer(const float* q, uint32_t k, std::vector<uint64_t>* ids,
              BitmapFilter* allowed = nullptr) const {
#ifdef SHOAL_BENCH_HNSWLIB_FILTER
    std::priority_queue<std::pair<float, hnswlib::labeltype>> top =
        index_->searchKnn(q, k, allowed);
#else
    (void)allowed;
    std::priority_queue<std::pair<float, hnswlib::labeltype>> top = index_->searchKnn(q, k);
#endif
    ids->resize(top.size());
    for (size_t j = ids->size(); j-- > 0; top.pop()) (*ids)[j] = top.top().second;
  }

  const uint32_t m_, ef_construction_;
  const shoal::Metric metric_;
  uint32_t dim_ = 0;
  std::unique_ptr<hnswlib::SpaceInterface<float>> space_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> index_;
};

}  // namespace

std::unique_ptr<AnnIndex> NewHnswlibIndex(uint32_t m, uint32_t ef_construction,
                                          shoal::Metric metric) {
  return std::make_unique<HnswlibIndex>(m, ef_construction, metric);
}

}  // namespace shoal_bench

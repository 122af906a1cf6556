// Copyright 2026 The shoal Authors.
//
// faiss as an AnnIndex: IndexHNSWFlat, IndexIVFFlat and (--phases filter
// only) IndexFlat. faiss runs its loops
// on OpenMP; the thread count is set before every call (1 for single-thread
// searches). Debian's libfaiss is a generic x86-64 build (SSE, no AVX2), as
// installed; that is the faiss measured here. Filtered searches pass
// SearchParameters whose `sel` is an IDSelectorBitmap over the RowFilter's
// bitmap (faiss labels are rows), with the knob set in them too (faiss reads
// efSearch / nprobe from the parameters, not the index, when given some).

#include <omp.h>

#include <atomic>
#include <exception>
#include <limits>
#include <memory>

#include "common/bench_util.h"
#include "common/progress.h"
#include "faiss/IndexFlat.h"
#include "faiss/IndexHNSW.h"
#include "faiss/IndexIVFFlat.h"
#include "faiss/impl/io.h"
#include "faiss/impl/IDSelector.h"
#include "faiss/index_io.h"
#include "faiss/utils/distances.h"
#include "fmt/core.h"
#include "peers/peers.h"

namespace shoal_bench {
namespace {

using Idx = faiss::Index::idx_t;
// Rows per add() call: small enough for the progress bar to move.
constexpr size_t kAddChunk = 10000;
// IVF training (k-means): see FaissIvfFlatIndex::CreateAndTrain.
constexpr int kTrainIterations = 10;
constexpr int kTrainPointsPerList = 40;
// faiss's default efConstruction. 200 (hnswlib's) took over four minutes on
// medium with Debian's generic (SSE) build, past the bench's time limit.
constexpr uint32_t kFaissEfConstruction = 40;

faiss::MetricType FaissMetric(shoal::Metric m) {
  return m == shoal::Metric::kL2 ? faiss::METRIC_L2 : faiss::METRIC_INNER_PRODUCT;
}

// What the faiss indexes share: ids, queries, search calls.
class FaissIndex : public AnnIndex {
 public:
  explicit FaissIndex(shoal::Metric metric) : metric_(metric) {}

  absl::Status Build(const Dataset& data, uint32_t threads, BuildFigures* figures) override {
    dim_ = data.dim();
    ids_ = data.ids;
    const std::vector<float> rows = PeerVectors(data.base, dim_, metric_);
    figures->vectors = data.size();
    figures->threads = ResolveThreads(threads);
    omp_set_num_threads(static_cast<int>(figures->threads));
    try {
      const Stopwatch sw;
      CreateAndTrain(rows, figures);
      Progress progress(Name() + " add", data.size());
      for (size_t start = 0; start < data.size(); start += kAddChunk) {
        const size_t m = std::min(kAddChunk, data.size() - start);
        index_->add(static_cast<Idx>(m), rows.data() + start * dim_);
        progress.Add(m);
      }
      figures->seconds = sw.Seconds();
    } catch (const std::exception& e) {
      return absl::InternalError(fmt::format("faiss: {}", e.what()));
    }
    return absl::OkStatus();
  }

  absl::Status Search(const float* query, uint32_t k, std::vector<uint64_t>* ids) override {
    omp_set_num_threads(1);
    std::vector<std::vector<uint64_t>> out;
    absl::Status s = Run({query, dim_}, k, &out);
    if (s.ok()) *ids = std::move(out[0]);
    return s;
  }

  absl::Status SearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                           std::vector<std::vector<uint64_t>>* ids) override {
    omp_set_num_threads(static_cast<int>(ResolveThreads(threads)));
    return Run(queries, k, ids);
  }

  absl::Status FilteredSearch(const float* query, uint32_t k, const RowFilter& filter,
                              std::vector<uint64_t>* ids) override {
    omp_set_num_threads(1);
    std::vector<std::vector<uint64_t>> out;
    absl::Status s = RunFiltered({query, dim_}, k, filter, &out);
    if (s.ok()) *ids = std::move(out[0]);
    return s;
  }

  // One faiss call per query (a call takes one selector), queries spread
  // over `threads` threads; faiss itself on one thread each.
  absl::Status FilteredSearchBatch(std::span<const float> queries, uint32_t k, uint32_t threads,
                                   std::span<const RowFilter> filters,
                                   std::vector<std::vector<uint64_t>>* ids) override {
    omp_set_num_threads(1);
    ids->assign(queries.size() / dim_, {});
    std::atomic<bool> failed{false};
    ParallelChunks(ids->size(), threads, 4, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        std::vector<std::vector<uint64_t>> out;
        if (!RunFiltered(queries.subspan(i * dim_, dim_), k, filters[i], &out).ok()) {
          failed = true;
        } else {
          (*ids)[i] = std::move(out[0]);
        }
      }
    });
    return failed ? absl::InternalError(Name() + ": filtered search failed") : absl::OkStatus();
  }

 protected:
  // Creates index_ and trains it if it needs training; may note the
  // training time in `figures`.
  virtual void CreateAndTrain(const std::vector<float>& rows, BuildFigures* figures) = 0;
  // Search parameters carrying the current knob and `sel`.
  virtual std::unique_ptr<faiss::SearchParameters> FilteredParams(
      const faiss::IDSelector* sel) const = 0;

  // The index serialized (faiss writes exactly its vectors, codes and
  // graph): what it holds in memory, give or take vector headers.
  int64_t IndexBytes() const override {
    if (index_ == nullptr) return -1;
    try {
      faiss::VectorIOWriter out;
      faiss::write_index(index_.get(), &out);
      return static_cast<int64_t>(out.data.size());
    } catch (const std::exception&) {
      return -1;
    }
  }

  const shoal::Metric metric_;
  uint32_t dim_ = 0;
  std::unique_ptr<faiss::Index> index_;

 private:
  absl::Status RunFiltered(std::span<const float> queries, uint32_t k, const RowFilter& filter,
                           std::vector<std::vector<uint64_t>>* ids) {
    try {
      const faiss::IDSelectorBitmap sel(filter.bitmap.size(), filter.bitmap.data());
      const std::unique_ptr<faiss::SearchParameters> params = FilteredParams(&sel);
      return Run(queries, k, ids, params.get());
    } catch (const std::exception& e) {
      return absl::InternalError(fmt::format("faiss search: {}", e.what()));
    }
  }

  absl::Status Run(std::span<const float> queries, uint32_t k,
                   std::vector<std::vector<uint64_t>>* ids,
                   const faiss::SearchParameters* params = nullptr) {
    const size_t n = queries.size() / dim_;
    std::vector<float> q = PeerVectors(queries, dim_, metric_);
    std::vector<float> distances(n * k);
    std::vector<Idx> labels(n * k);
    try {
      index_->search(static_cast<Idx>(n), q.data(), k, distances.data(), labels.data(), params);
    } catch (const std::exception& e) {
      return absl::InternalError(fmt::format("faiss search: {}", e.what()));
    }
    ids->assign(n, {});
    for (size_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < k; ++j) {
        const Idx label = labels[i * k + j];
        if (label >= 0) (*ids)[i].push_back(ids_[static_cast<size_t>(label)]);
      }
    }
    return absl::OkStatus();
  }

  std::vector<uint64_t> ids_;  // faiss labels are row numbers
};

class FaissHnswIndex : public FaissIndex {
 public:
  FaissHnswIndex(uint32_t m, uint32_t ef_construction, shoal::Metric metric)
      : FaissIndex(metric), m_(m), ef_construction_(ef_construction) {}
  std::string Name() const override { return fmt::format("faiss HNSWFlat M={}", m_); }
  std::string Params() const override {
    return fmt::format("M={} efConstruction={}", m_, ef_construction_);
  }
  std::string KnobName() const override { return "efSearch"; }
  std::vector<uint32_t> DefaultSweep() const override {
    return {10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300};
  }
  void SetKnob(uint32_t value) override { hnsw_->hnsw.efSearch = static_cast<int>(value); }

 private:
  std::unique_ptr<faiss::SearchParameters> FilteredParams(
      const faiss::IDSelector* sel) const override {
    auto p = std::make_unique<faiss::SearchParametersHNSW>();
    p->efSearch = hnsw_->hnsw.efSearch;
    p->sel = const_cast<faiss::IDSelector*>(sel);  // faiss 1.7.3 holds it non-const
    return p;
  }

  void CreateAndTrain(const std::vector<float>&, BuildFigures* figures) override {
    auto index = std::make_unique<faiss::IndexHNSWFlat>(static_cast<int>(dim_),
                                                        static_cast<int>(m_),
                                                        FaissMetric(metric_));
    index->hnsw.efConstruction = static_cast<int>(ef_construction_);
    hnsw_ = index.get();
    index_ = std::move(index);
    figures->method = fmt::format("add on {} OpenMP threads", figures->threads);
  }

  const uint32_t m_, ef_construction_;
  faiss::IndexHNSWFlat* hnsw_ = nullptr;  // index_, typed
};

class FaissIvfFlatIndex : public FaissIndex {
 public:
  FaissIvfFlatIndex(uint32_t nlist, shoal::Metric metric) : FaissIndex(metric), nlist_(nlist) {}
  std::string Name() const override { return fmt::format("faiss IVFFlat nlist={}", nlist_); }
  std::string Params() const override {
    return fmt::format("nlist={} (4 sqrt(n)), k-means: {} iterations on <= {} rows per list, "
                       "no BLAS", nlist_, kTrainIterations, kTrainPointsPerList);
  }
  std::string KnobName() const override { return "nprobe"; }
  std::vector<uint32_t> DefaultSweep() const override {
    std::vector<uint32_t> v;
    for (uint32_t p = 1; p <= std::min<uint32_t>(nlist_, 256); p *= 2) v.push_back(p);
    return v;
  }
  void SetKnob(uint32_t value) override { ivf_->nprobe = value; }

 private:
  std::unique_ptr<faiss::SearchParameters> FilteredParams(
      const faiss::IDSelector* sel) const override {
    auto p = std::make_unique<faiss::SearchParametersIVF>();
    p->nprobe = ivf_->nprobe;
    p->sel = const_cast<faiss::IDSelector*>(sel);
    return p;
  }

  void CreateAndTrain(const std::vector<float>& rows, BuildFigures* figures) override {
    // faiss computes many-query distances with BLAS sgemm from
    // distance_compute_blas_threshold queries on. Debian's default BLAS is
    // the unoptimized reference one, which made k-means on medium take
    // minutes; faiss's own SIMD loop (parallel over queries) is several
    // times faster there, so use it for every batch.
    faiss::distance_compute_blas_threshold = std::numeric_limits<int>::max();
    // Even so, faiss's default k-means (25 iterations over every base row)
    // took minutes on medium with this generic build. Ten iterations on a
    // sample of kTrainPointsPerList rows per list keep it to seconds, at the
    // cost of somewhat less balanced lists (faiss warns below 39 per list).
    auto quantizer = std::make_unique<faiss::IndexFlat>(static_cast<Idx>(dim_),
                                                        FaissMetric(metric_));
    auto index = std::make_unique<faiss::IndexIVFFlat>(quantizer.get(), dim_, nlist_,
                                                       FaissMetric(metric_));
    index->own_fields = true;  // the index deletes the quantizer
    index->cp.niter = kTrainIterations;
    index->cp.max_points_per_centroid = kTrainPointsPerList;
    quantizer.release();
    ivf_ = index.get();
    index_ = std::move(index);
    Progress progress(Name() + " train (k-means)", 0);
    const Stopwatch sw;
    index_->train(static_cast<Idx>(rows.size() / dim_), rows.data());
    figures->other_label = "of which k-means training";
    figures->other_seconds = sw.Seconds();
    figures->method = fmt::format("train + add on {} OpenMP threads", figures->threads);
  }

  const uint32_t nlist_;
  faiss::IndexIVFFlat* ivf_ = nullptr;  // index_, typed
};

// The exact filtered search a faiss user runs: IndexFlat's search with an
// IDSelectorBitmap visits all N rows, checks the predicate on each and
// computes the distance to those that match (faiss 1.7.3's
// exhaustive_L2sqr_seq / exhaustive_inner_product_seq, one query per call
// here). Unlike the exact scan, it is not handed the list of matching rows.
class FaissFlatIndex : public FaissIndex {
 public:
  explicit FaissFlatIndex(shoal::Metric metric) : FaissIndex(metric) {}
  std::string Name() const override { return "faiss Flat"; }
  std::string Params() const override {
    return "exhaustive; the selector is checked on every row";
  }
  std::string KnobName() const override { return "-"; }
  std::vector<uint32_t> DefaultSweep() const override { return {0}; }
  void SetKnob(uint32_t) override {}

 private:
  std::unique_ptr<faiss::SearchParameters> FilteredParams(
      const faiss::IDSelector* sel) const override {
    auto p = std::make_unique<faiss::SearchParameters>();
    p->sel = const_cast<faiss::IDSelector*>(sel);
    return p;
  }

  void CreateAndTrain(const std::vector<float>&, BuildFigures* figures) override {
    index_ = std::make_unique<faiss::IndexFlat>(static_cast<Idx>(dim_), FaissMetric(metric_));
    figures->method = "add (copies the rows)";
  }
};

}  // namespace

std::unique_ptr<AnnIndex> NewFaissHnswIndex(uint32_t m, uint32_t ef_construction,
                                            shoal::Metric metric) {
  return std::make_unique<FaissHnswIndex>(
      m, ef_construction == 0 ? kFaissEfConstruction : ef_construction, metric);
}

std::unique_ptr<AnnIndex> NewFaissIvfFlatIndex(uint32_t nlist, shoal::Metric metric) {
  return std::make_unique<FaissIvfFlatIndex>(nlist, metric);
}

std::unique_ptr<AnnIndex> NewFaissFlatIndex(shoal::Metric metric) {
  return std::make_unique<FaissFlatIndex>(metric);
}

}  // namespace shoal_bench

// Copyright 2026 The shoal Authors.

#include "comprehensive/shoal_index.h"

#include <algorithm>
#include <filesystem>

#include "common/bench_util.h"
#include "common/progress.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr size_t kPutBatch = 10000;

// Files under `dir` whose names end with `suffix`.
size_t CountFiles(const std::string& dir, std::string_view suffix) {
  size_t n = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
    if (entry.path().filename().string().ends_with(suffix)) ++n;
  }
  return n;
}

}  // namespace

ShoalIndex::ShoalIndex(Load load, std::string dir, shoal::Options options,
                       shoal::SearchOptions search)
    : load_(load), dir_(std::move(dir)), options_(options), search_(search) {
  options_.error_if_exists = true;
}

ShoalIndex::~ShoalIndex() {
  if (db_ != nullptr) CheckOk(db_->Close(), "Close " + dir_);
  db_.reset();
  CheckOk(RemoveTree(dir_), "wipe " + dir_);
}

std::string ShoalIndex::Params() const {
  const shoal::GraphOptions& g = options_.default_collection.graph;
  return fmt::format("R={} L={} alpha={} shards={} beam_width={}", g.max_degree,
                     g.build_list_size, g.alpha,
                     options_.default_collection.shard_count == 0
                         ? std::string("auto")
                         : fmt::format("{}", options_.default_collection.shard_count),
                     search_.beam_width);
}

std::vector<uint32_t> ShoalIndex::DefaultSweep() const {
  return {2, 3, 5, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300};
}

absl::Status ShoalIndex::PutAll(const Dataset& data, size_t batch, BuildFigures* figures) {
  Progress progress("shoal PutBatch", data.size());
  const size_t n = data.size(), dim = data.dim();
  const Stopwatch sw;
  for (size_t start = 0; start < n; start += batch) {
    const size_t m = std::min(batch, n - start);
    absl::Status s = db_->PutBatch(std::span(data.ids).subspan(start, m),
                                   std::span(data.base).subspan(start * dim, m * dim));
    if (!s.ok()) return s;
    progress.Add(m);
  }
  figures->other_label = "PutBatch before the Flush";
  figures->other_seconds = sw.Seconds();
  return absl::OkStatus();
}

int64_t ShoalIndex::IndexBytes() const {
  std::error_code error;
  int64_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_, error)) {
    if (entry.is_regular_file(error) && entry.path().extension() == ".vamana") {
      bytes += static_cast<int64_t>(entry.file_size(error));
    }
  }
  return error ? -1 : bytes;
}

absl::Status ShoalIndex::Build(const Dataset& data, uint32_t threads, BuildFigures* figures) {
  CheckOk(RemoveTree(dir_), "wipe " + dir_);
  CheckOk(MakeDirs(dir_), "mkdir " + dir_);
  options_.worker_threads = threads;
  dim_ = data.dim();
  absl::StatusOr<std::unique_ptr<shoal::DB>> db = shoal::DB::Open(options_, dir_ + "/db");
  if (!db.ok()) return db.status();
  db_ = std::move(db).value();
  figures->vectors = data.size();
  figures->threads = ResolveThreads(threads);
  absl::Status s;
  if (load_ == Load::kStream) {
    const Stopwatch sw;
    s = PutAll(data, kStreamBatch, figures);
    if (s.ok()) {
      Progress progress("shoal Flush + WaitForCompact", 0);
      s = db_->Flush();
    }
    if (s.ok()) s = db_->WaitForCompact();
    figures->seconds = sw.Seconds();
    absl::StatusOr<shoal::CollectionOptions> shape =
        db_->GetCollectionOptions(shoal::kDefaultCollection);
    const size_t shards = shape.ok() ? std::max<uint32_t>(1, shape->shard_count) : 1;
    figures->method = fmt::format(
        "PutBatch({}) + Flush + WaitForCompact, {} MiB memtables ({:.1f} segments/shard)",
        kStreamBatch, kStreamMemtableBytes >> 20,
        static_cast<double>(CountFiles(dir_, ".vamana")) / static_cast<double>(shards));
    figures->other_label = "PutBatch calls, within that";
  } else if (load_ == Load::kBulkLoad) {
    figures->method = records_.empty() ? "BulkLoad" : "BulkLoad of records";
    Progress progress("shoal BulkLoad", 0);
    const Stopwatch sw;
    s = records_.empty() ? db_->BulkLoad(data.ids, data.base) : db_->BulkLoad(records_);
    figures->seconds = sw.Seconds();
  } else {
    figures->method = "Flush after PutBatch";
    s = PutAll(data, kPutBatch, figures);
    if (!s.ok()) return s;
    Progress progress("shoal Flush", 0);
    const Stopwatch sw;
    s = db_->Flush();
    figures->seconds = sw.Seconds();
  }
  return s;
}

absl::Status ShoalIndex::Search(const float* query, uint32_t k, std::vector<uint64_t>* ids) {
  shoal::SearchOptions opts = search_;
  opts.k = k;
  absl::StatusOr<std::vector<shoal::Neighbor>> r = db_->Search({query, dim_}, opts);
  if (!r.ok()) return r.status();
  ids->clear();
  for (const shoal::Neighbor& n : *r) ids->push_back(n.id);
  return absl::OkStatus();
}

absl::Status ShoalIndex::SearchBatch(std::span<const float> queries, uint32_t k,
                                     uint32_t /*threads: Options::worker_threads*/,
                                     std::vector<std::vector<uint64_t>>* ids) {
  shoal::SearchOptions opts = search_;
  opts.k = k;
  absl::StatusOr<std::vector<std::vector<shoal::Neighbor>>> r = db_->SearchBatch(queries, opts);
  if (!r.ok()) return r.status();
  ids->assign(r->size(), {});
  for (size_t i = 0; i < r->size(); ++i) {
    for (const shoal::Neighbor& n : (*r)[i]) (*ids)[i].push_back(n.id);
  }
  return absl::OkStatus();
}

absl::Status ShoalIndex::FilteredSearch(const float* query, uint32_t k, const RowFilter& filter,
                                        std::vector<uint64_t>* ids) {
  shoal::SearchOptions opts = search_;
  opts.k = k;
  opts.filter = filter.filter;
  absl::StatusOr<std::vector<shoal::Neighbor>> r = db_->Search({query, dim_}, opts);
  if (!r.ok()) return r.status();
  ids->clear();
  for (const shoal::Neighbor& n : *r) ids->push_back(n.id);
  return absl::OkStatus();
}

absl::Status ShoalIndex::FilteredSearchBatch(std::span<const float> queries, uint32_t k,
                                             uint32_t /*threads: Options::worker_threads*/,
                                             std::span<const RowFilter> filters,
                                             std::vector<std::vector<uint64_t>>* ids) {
  ids->assign(filters.size(), {});
  std::vector<bool> done(filters.size(), false);
  std::vector<size_t> group;
  std::vector<float> rows;
  for (size_t first = 0; first < filters.size(); ++first) {
    if (done[first]) continue;
    group.clear();
    rows.clear();
    for (size_t i = first; i < filters.size(); ++i) {
      if (done[i] || filters[i].filter != filters[first].filter) continue;
      done[i] = true;
      group.push_back(i);
      rows.insert(rows.end(), queries.begin() + i * dim_, queries.begin() + (i + 1) * dim_);
    }
    shoal::SearchOptions opts = search_;
    opts.k = k;
    opts.filter = filters[first].filter;
    absl::StatusOr<std::vector<std::vector<shoal::Neighbor>>> r = db_->SearchBatch(rows, opts);
    if (!r.ok()) return r.status();
    for (size_t j = 0; j < group.size(); ++j) {
      for (const shoal::Neighbor& n : (*r)[j]) (*ids)[group[j]].push_back(n.id);
    }
  }
  return absl::OkStatus();
}

}  // namespace shoal_bench

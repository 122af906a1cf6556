// Copyright 2026 The shoal Authors.
//
// Collection's searches: a query is checked and normalized once, then every
// shard is searched (memtables exactly, segments by their walks) on the
// calling thread or, for large work and for disk-resident segments, on the
// worker threads at once; segments the shards share (one graph while small)
// are walked once for all of them; the shards' top-k are merged.

#include <algorithm>
#include <vector>

#include "db/collection.h"
#include "db/validate.h"
#include "distance/distance.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

// A search visits the shards on the calling thread unless stored vectors x
// list_size reaches this: a pool thread takes tens of microseconds to wake,
// as long as a whole search of a small shard. On medium (100K x 256, 2
// shards, 2 vCPUs) one thread was faster at every list size (list_size 20:
// 13.6K -> 18.2-20.6K QPS; 100: 8.2K -> 8.6-8.8K), i.e. up to 10^7.
constexpr size_t kParallelSearchWork = size_t{1} << 25;
// With disk-resident segments (Options::segment_storage kDisk), from this
// many stored vectors on: each shard's walks then wait on block reads
// (~50-70 us each, tens a walk), so the shards are searched at once and
// their reads overlap, where one after the other they add up. Measured at
// 1M x 128 (docs/performance-history.md); the threshold itself was not tuned: a
// collection this large either has segments, whose walks take hundreds of
// microseconds, or memtables whose exact scans take as long, either way
// well above a pool thread's wake-up.
constexpr size_t kParallelDiskSearchVectors = size_t{1} << 14;

// SearchOptions::stats of a search made of parts run at once.
void AddSearchStats(const SearchStats& from, SearchStats* to) {
  to->segments += from.segments;
  to->hops += from.hops;
  to->distance_computations += from.distance_computations;
  to->reads += from.reads;
  to->cache_hits += from.cache_hits;
  to->io_wait_ns += from.io_wait_ns;
  to->compute_ns += from.compute_ns;
}

}  // namespace

absl::Status Collection::PrepareQuery(std::span<const float> query,
                                      std::vector<float>* out) const {
  SHOAL_RETURN_IF_ERROR(ValidateVectors(query, 1, options_.dim, options_.metric, "query"));
  out->assign(query.begin(), query.end());
  if (options_.metric == Metric::kCosine && !NormalizeInPlace(out->data(), options_.dim)) {
    return absl::InvalidArgumentError("a zero query has no direction under kCosine");
  }
  return absl::OkStatus();
}

void Collection::TakeViews(std::vector<Shard::View>* views,
                           std::vector<const Segment*>* shared) const {
  views->clear();
  shared->clear();
  for (const auto& shard : shards_) {
    views->push_back(shard->TakeView());
    for (const SourceSnapshot::Source& source : views->back().older.sources()) {
      if (source.shared &&
          std::find(shared->begin(), shared->end(), source.segment.get()) == shared->end()) {
        shared->push_back(source.segment.get());
      }
    }
  }
}

absl::Status Collection::SearchSharedSegments(const std::vector<Shard::View>& views,
                                              const std::vector<const Segment*>& shared,
                                              const float* query, const SearchOptions& options,
                                              const filter::CompiledFilter* filter,
                                              TopK* top) const {
  if (shared.empty()) return absl::OkStatus();
  std::vector<const Shard*> shards;
  for (const auto& shard : shards_) shards.push_back(shard.get());
  for (const Segment* segment : shared) {
    SHOAL_RETURN_IF_ERROR(Shard::SearchShared(shards, views, segment, query, options, top, filter));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<const filter::CompiledFilter>> Collection::CompileFilter(
    const SearchOptions& options) const {
  if (options.filter == nullptr) return nullptr;
  return filter::CompiledFilter::Compile(*options.filter, options_.attributes);
}

absl::StatusOr<std::vector<Neighbor>> Collection::SearchShards(
    const float* query, const SearchOptions& options,
    const filter::CompiledFilter* filter) const {
  TopK top(options.k);
  std::vector<Shard::View> views;
  std::vector<const Segment*> shared;
  TakeViews(&views, &shared);
  for (size_t i = 0; i < shards_.size(); ++i) {
    SHOAL_RETURN_IF_ERROR(
        shards_[i]->Search(views[i], query, options, &top, /*skip_shared=*/true, filter));
  }
  SHOAL_RETURN_IF_ERROR(SearchSharedSegments(views, shared, query, options, filter, &top));
  return top.Take();
}

absl::StatusOr<std::vector<Neighbor>> Collection::Search(std::span<const float> query,
                                                         const SearchOptions& options) const {
  SHOAL_RETURN_IF_ERROR(ValidateSearchOptions(options));
  std::vector<float> q;
  SHOAL_RETURN_IF_ERROR(PrepareQuery(query, &q));
  SHOAL_ASSIGN_OR_RETURN(const std::unique_ptr<const filter::CompiledFilter> compiled,
                         CompileFilter(options));
  const filter::CompiledFilter* filter = compiled.get();
  const size_t stored = live_count();
  const bool at_once = stored * options.list_size >= kParallelSearchWork ||
                       (disk_resident_ && stored >= kParallelDiskSearchVectors);
  if (shards_.size() == 1 || !at_once) return SearchShards(q.data(), options, filter);
  std::vector<Shard::View> views;
  std::vector<const Segment*> shared;
  TakeViews(&views, &shared);
  // The shards, then each shared segment, as parts run at once.
  const size_t count = shards_.size() + shared.size();
  std::vector<std::vector<Neighbor>> parts(count);
  std::vector<absl::Status> status(count);
  // Each part adds to a SearchStats of its own (they run at once).
  std::vector<SearchStats> stats(options.stats != nullptr ? count : 0);
  // Without helping: a search must not wait for a queued graph build's chunk.
  pool_->ParallelForWithoutHelping(count, [&](size_t i) {
    TopK top(options.k);
    SearchOptions mine = options;
    if (options.stats != nullptr) mine.stats = &stats[i];
    if (i < shards_.size()) {
      status[i] =
          shards_[i]->Search(views[i], q.data(), mine, &top, /*skip_shared=*/true, filter);
    } else {
      status[i] = SearchSharedSegments(views, {shared[i - shards_.size()]}, q.data(), mine,
                                       filter, &top);
    }
    parts[i] = top.Take();
  });
  for (const SearchStats& s : stats) AddSearchStats(s, options.stats);
  for (const absl::Status& s : status) SHOAL_RETURN_IF_ERROR(s);
  TopK merged(options.k);
  for (const auto& part : parts) {
    for (const Neighbor& n : part) merged.Push(n.id, n.distance);
  }
  return merged.Take();
}

absl::StatusOr<std::vector<std::vector<Neighbor>>> Collection::SearchBatch(
    std::span<const float> queries, const SearchOptions& options) const {
  SHOAL_RETURN_IF_ERROR(ValidateSearchOptions(options));
  const size_t dim = options_.dim;
  if (queries.empty() || queries.size() % dim != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "queries has ", queries.size(), " floats; expected a positive multiple of dim ", dim));
  }
  const size_t n = queries.size() / dim;
  SHOAL_RETURN_IF_ERROR(ValidateVectors(queries, n, options_.dim, options_.metric, "queries"));
  SHOAL_ASSIGN_OR_RETURN(const std::unique_ptr<const filter::CompiledFilter> compiled,
                         CompileFilter(options));
  std::vector<std::vector<Neighbor>> results(n);
  std::vector<absl::Status> status(n);
  // Each task answers a run of queries, so small queries do not pay a task each.
  const size_t per_task = std::max<size_t>(1, n / (pool_->size() * 8 + 1));
  const size_t tasks = (n + per_task - 1) / per_task;
  // Each task adds to a SearchStats of its own (they run at once).
  std::vector<SearchStats> stats(options.stats != nullptr ? tasks : 0);
  pool_->ParallelFor(tasks, [&](size_t t) {
    std::vector<float> q;
    SearchOptions mine = options;
    if (options.stats != nullptr) mine.stats = &stats[t];
    for (size_t i = t * per_task; i < std::min(n, (t + 1) * per_task); ++i) {
      status[i] = PrepareQuery(queries.subspan(i * dim, dim), &q);
      if (!status[i].ok()) continue;
      absl::StatusOr<std::vector<Neighbor>> r = SearchShards(q.data(), mine, compiled.get());
      if (r.ok()) {
        results[i] = std::move(r).value();
      } else {
        status[i] = r.status();
      }
    }
  });
  for (const SearchStats& s : stats) AddSearchStats(s, options.stats);
  for (size_t i = 0; i < n; ++i) {
    if (!status[i].ok()) {
      return absl::Status(status[i].code(),
                          absl::StrCat("query ", i, ": ", status[i].message()));
    }
  }
  return results;
}

}  // namespace shoal

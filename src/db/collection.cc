// Copyright 2026 The shoal Authors.

#include "db/collection.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "util/mutex.h"
#include "db/validate.h"
#include "distance/distance.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

// Below this many floats a batch is written shard after shard on the calling
// thread: handing work to the pool costs more than it saves.
constexpr size_t kParallelBatchFloats = 1 << 16;
// Below this many stored vectors a search scans the shards on one thread.
constexpr size_t kParallelSearchVectors = 1 << 15;

}  // namespace

absl::StatusOr<std::unique_ptr<Collection>> Collection::Open(
    FileSystem* fs, ThreadPool* pool, BackgroundWorker* prefaulter, const std::string& dir,
    std::string name, const CollectionOptions& options, const Options& db_options) {
  std::unique_ptr<Collection> c(new Collection(pool, dir, std::move(name), options));
  c->shards_.resize(options.shard_count);
  std::vector<absl::Status> status(options.shard_count);
  pool->ParallelFor(options.shard_count, [&](size_t i) {
    ShardOptions so;
    so.index = static_cast<uint32_t>(i);
    so.dim = options.dim;
    so.metric = options.metric;
    so.fsync = db_options.fsync;
    so.salvage_corrupt_wal = db_options.salvage_corrupt_wal;
    so.wal_file_bytes = db_options.wal_file_bytes;
    so.arena_block_bytes = db_options.arena_block_bytes;
    so.memtable_bytes = db_options.memtable_bytes;
    so.preallocate = db_options.preallocate;
    so.prefaulter = prefaulter;
    absl::StatusOr<std::unique_ptr<Shard>> shard =
        Shard::Open(fs, JoinPath(dir, absl::StrCat("shard-", i)), so);
    if (shard.ok()) {
      c->shards_[i] = std::move(shard).value();
    } else {
      status[i] = shard.status();
    }
  });
  for (const absl::Status& s : status) SHOAL_RETURN_IF_ERROR(s);
  return c;
}

absl::Status Collection::Put(uint64_t id, std::span<const float> vector) {
  SHOAL_RETURN_IF_ERROR(ValidateVectors(vector, 1, options_.dim, "vector"));
  const float* row = vector.data();
  std::vector<float> normalized;
  if (options_.metric == Metric::kCosine) {
    normalized.assign(vector.begin(), vector.end());
    if (!NormalizeInPlace(normalized.data(), options_.dim)) {
      return absl::InvalidArgumentError("a zero vector has no direction under kCosine");
    }
    row = normalized.data();
  }
  Shard& shard = *shards_[ShardOf(id, options_.shard_count)];
  return shard.Put(std::span<const uint64_t>(&id, 1), std::span<const float* const>(&row, 1));
}

absl::Status Collection::PutBatch(std::span<const uint64_t> ids,
                                  std::span<const float> vectors) {
  if (ids.empty()) return absl::InvalidArgumentError("PutBatch of an empty batch");
  SHOAL_RETURN_IF_ERROR(ValidateVectors(vectors, ids.size(), options_.dim, "vectors"));
  const size_t n = ids.size();
  const size_t dim = options_.dim;
  std::vector<float> normalized;
  const float* base = vectors.data();
  if (options_.metric == Metric::kCosine) {
    normalized.assign(vectors.begin(), vectors.end());
    for (size_t i = 0; i < n; ++i) {
      if (!NormalizeInPlace(normalized.data() + i * dim, options_.dim)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "vectors row ", i, " is a zero vector, which has no direction under kCosine"));
      }
    }
    base = normalized.data();
  }

  // Split the batch by shard, keeping the batch order within each shard so
  // that the last copy of a repeated id wins.
  const uint32_t shard_count = options_.shard_count;
  std::vector<uint32_t> shard_of(n);
  std::vector<size_t> start(shard_count + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    shard_of[i] = ShardOf(ids[i], shard_count);
    ++start[shard_of[i] + 1];
  }
  for (uint32_t s = 0; s < shard_count; ++s) start[s + 1] += start[s];
  std::vector<uint64_t> part_ids(n);
  std::vector<const float*> part_rows(n);
  {
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < n; ++i) {
      const size_t at = fill[shard_of[i]]++;
      part_ids[at] = ids[i];
      part_rows[at] = base + i * dim;
    }
  }
  std::vector<uint32_t> busy;  // shards with a part
  for (uint32_t s = 0; s < shard_count; ++s) {
    if (start[s + 1] > start[s]) busy.push_back(s);
  }
  std::vector<absl::Status> status(busy.size());
  auto write_part = [&](size_t j) {
    const uint32_t s = busy[j];
    const size_t first = start[s], count = start[s + 1] - start[s];
    status[j] = shards_[s]->Put(std::span<const uint64_t>(part_ids.data() + first, count),
                                std::span<const float* const>(part_rows.data() + first, count));
  };
  if (busy.size() > 1 && n * dim >= kParallelBatchFloats) {
    pool_->ParallelFor(busy.size(), write_part);
  } else {
    for (size_t j = 0; j < busy.size(); ++j) write_part(j);
  }
  for (const absl::Status& s : status) SHOAL_RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

absl::Status Collection::Delete(uint64_t id) {
  return shards_[ShardOf(id, options_.shard_count)]->Delete(std::span<const uint64_t>(&id, 1));
}

absl::StatusOr<std::vector<float>> Collection::Get(uint64_t id) const {
  std::vector<float> out;
  SHOAL_RETURN_IF_ERROR(shards_[ShardOf(id, options_.shard_count)]->Get(id, &out));
  return out;
}

absl::Status Collection::PrepareQuery(std::span<const float> query,
                                      std::vector<float>* out) const {
  SHOAL_RETURN_IF_ERROR(ValidateVectors(query, 1, options_.dim, "query"));
  out->assign(query.begin(), query.end());
  if (options_.metric == Metric::kCosine && !NormalizeInPlace(out->data(), options_.dim)) {
    return absl::InvalidArgumentError("a zero query has no direction under kCosine");
  }
  return absl::OkStatus();
}

std::vector<Neighbor> Collection::SearchShards(const float* query, uint32_t k) const {
  TopK top(k);
  for (const auto& shard : shards_) shard->Search(query, &top);
  return top.Take();
}

absl::StatusOr<std::vector<Neighbor>> Collection::Search(std::span<const float> query,
                                                         const SearchOptions& options) const {
  SHOAL_RETURN_IF_ERROR(ValidateSearchOptions(options));
  std::vector<float> q;
  SHOAL_RETURN_IF_ERROR(PrepareQuery(query, &q));
  if (shards_.size() == 1 || live_count() < kParallelSearchVectors) {
    return SearchShards(q.data(), options.k);
  }
  std::vector<std::vector<Neighbor>> parts(shards_.size());
  pool_->ParallelFor(shards_.size(), [&](size_t i) {
    TopK top(options.k);
    shards_[i]->Search(q.data(), &top);
    parts[i] = top.Take();
  });
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
  SHOAL_RETURN_IF_ERROR(ValidateVectors(queries, n, options_.dim, "queries"));
  std::vector<std::vector<Neighbor>> results(n);
  std::vector<absl::Status> status(n);
  // Each task answers a run of queries, so small queries do not pay a task each.
  const size_t per_task = std::max<size_t>(1, n / (pool_->size() * 8 + 1));
  const size_t tasks = (n + per_task - 1) / per_task;
  pool_->ParallelFor(tasks, [&](size_t t) {
    std::vector<float> q;
    for (size_t i = t * per_task; i < std::min(n, (t + 1) * per_task); ++i) {
      status[i] = PrepareQuery(queries.subspan(i * dim, dim), &q);
      if (status[i].ok()) results[i] = SearchShards(q.data(), options.k);
    }
  });
  for (size_t i = 0; i < n; ++i) {
    if (!status[i].ok()) {
      return absl::Status(status[i].code(),
                          absl::StrCat("query ", i, ": ", status[i].message()));
    }
  }
  return results;
}

absl::Status Collection::SyncWal() {
  absl::Status first;
  for (auto& shard : shards_) {
    absl::Status s = shard->SyncWal();
    if (first.ok()) first = s;
  }
  return first;
}

absl::Status Collection::Close() {
  absl::Status first;
  for (auto& shard : shards_) {
    absl::Status s = shard->Close();
    if (first.ok()) first = s;
  }
  return first;
}

size_t Collection::live_count() const {
  size_t n = 0;
  for (const auto& shard : shards_) n += shard->live_count();
  return n;
}

}  // namespace shoal

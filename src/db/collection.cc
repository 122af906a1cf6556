// Copyright 2026 The shoal Authors.

#include "db/collection.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "db/load_progress.h"
#include "db/route_by_shard.h"
#include "db/validate.h"
#include "distance/distance.h"
#include "util/debug_timing.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {
namespace {

// A PutBatch of at least this many vectors is written as a bulk load
// (segments built directly, no log, no memtable).
constexpr size_t kBulkPutBatchVectors = 1 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<Collection>> Collection::Open(
    const Context& context, const std::string& dir, std::string name,
    const CollectionOptions& options, const std::vector<ShardMeta>& shards) {
  std::unique_ptr<Collection> c(
      new Collection(context.fs, context.pool, dir, std::move(name), options, context.manifest,
                     context.incarnation,
                     context.db_options.segment_storage == SegmentStorage::kDisk));
  const Options& db_options = context.db_options;
  if (db_options.fsync == FsyncPolicy::kAlways && db_options.collection_commit_log) {
    wal::CommitLogOptions log_options;
    log_options.file_bytes = db_options.wal_file_bytes;
    log_options.direct_io = db_options.direct_io_log;
    log_options.prefaulter = context.prefaulter;
    log_options.sync_shard_logs = [c = c.get()] { return c->SyncWal(); };
    c->commit_log_ = std::make_unique<wal::CommitLog>(
        context.fs, c->CommitLogDir(), std::move(log_options));
  }
  c->compactor_ = context.compactor;
  c->file_deleter_ = context.file_deleter;
  c->compaction_ = db_options.compaction;
  SHOAL_RETURN_IF_ERROR(context.fs->CreateDir(dir));
  SHOAL_RETURN_IF_ERROR(c->OpenSharedSegments(context, shards));
  c->shards_.resize(options.shard_count);
  std::vector<absl::Status> status(options.shard_count);
  context.pool->ParallelFor(options.shard_count, [&](size_t i) {
    ShardOptions so;
    so.db = context.db_options;
    so.collection = options;
    so.collection_name = c->name_;
    so.collection_incarnation = context.incarnation;
    so.index = static_cast<uint32_t>(i);
    // Only kAlways writes gather; the others would only bounce the
    // counters' cache line between the shards' writers.
    so.group_commit =
        context.db_options.fsync == FsyncPolicy::kAlways ? &c->group_commit_ : nullptr;
    so.commit_log = c->commit_log_.get();
    so.prefaulter = context.prefaulter;
    so.flusher = context.flusher;
    so.compactor = context.compactor;
    so.pool = context.pool;
    so.manifest = context.manifest;
    so.file_deleter = context.file_deleter;
    so.memory_budget = context.memory_budget;
    if (i < shards.size()) so.meta = shards[i];
    so.shared_dir = dir;
    so.shared_segments = &c->shared_at_open_;
    so.collection_folds = [c = c.get()] { return c->folds_.load(std::memory_order_acquire); };
    so.after_flush = [c = c.get()] { c->UpdateFoldMode(); };
    so.fold_flush = [c = c.get()](Shard* flushing) -> absl::StatusOr<bool> {
      // While the collection opens, shards_ is not whole yet; once it
      // closes, each shard flushes its own.
      if (!c->open_.load(std::memory_order_acquire)) return false;
      {
        MutexLock lock(&c->fold_mu_);
        if (c->folds_stopped_) return false;
      }
      bool flushed = false;
      SHOAL_RETURN_IF_ERROR(c->FoldShards(c->compaction_.fold_ratio, flushing, &flushed));
      return flushed;
    };
    so.release_shared = [c = c.get()](uint64_t number) { c->ReleaseShared(number); };
    absl::StatusOr<std::unique_ptr<Shard>> shard =
        Shard::Open(context.fs, JoinPath(dir, ShardDirName(static_cast<uint32_t>(i))), so);
    if (shard.ok()) {
      c->shards_[i] = std::move(shard).value();
    } else {
      status[i] = shard.status();
    }
  });
  c->shared_at_open_.clear();  // the shards hold theirs
  for (const absl::Status& s : status) SHOAL_RETURN_IF_ERROR(s);
  // Shard::Open may have created shard-<n>/: make those entries durable, or a
  // machine crash could drop a shard directory with its synced log.
  SHOAL_RETURN_IF_ERROR(context.fs->SyncDir(dir));
  SHOAL_RETURN_IF_ERROR(c->RecoverCommitLog(db_options.salvage_corrupt_wal));
  c->open_.store(true, std::memory_order_release);
  c->UpdateFoldMode();
  return c;
}

std::string Collection::CommitLogDir() const { return JoinPath(dir_, kCommitLogDir); }

absl::Status Collection::RecoverCommitLog(bool salvage) {
  const std::string dir = CommitLogDir();
  // Whatever the options now: a crash under kAlways may have left records
  // that only the commit log holds.
  SHOAL_ASSIGN_OR_RETURN(
      std::vector<uint64_t> numbers,
      wal::ReplayCommitLog(fs_, dir, options_.dim, salvage,
                           [&](uint32_t shard, const wal::RecordView& r) -> absl::Status {
                             if (shard >= shards_.size()) {
                               return absl::DataLossError(absl::StrCat(
                                   "commit log record at offset ", r.offset, " names shard ",
                                   shard, " of a collection with ", shards_.size()));
                             }
                             return shards_[shard]->ApplyCommitted(r);
                           }));
  const uint64_t next = numbers.empty() ? 1 : numbers.back() + 1;
  if (!numbers.empty()) {
    // The records the shards took from it must be durable before it goes.
    SHOAL_RETURN_IF_ERROR(SyncWal());
    SHOAL_RETURN_IF_ERROR(wal::RemoveCommitLogFiles(fs_, dir, next));
  }
  if (commit_log_ == nullptr) return absl::OkStatus();
  if (!fs_->Exists(dir)) {
    SHOAL_RETURN_IF_ERROR(fs_->CreateDir(dir));
    SHOAL_RETURN_IF_ERROR(fs_->SyncDir(dir_));
  }
  return commit_log_->Start(next);
}

absl::Status Collection::Put(uint64_t id, std::span<const float> vector) {
  const int64_t start = timing::kEnabled ? timing::NowMicros() : 0;
  SHOAL_RETURN_IF_ERROR(ValidateVectors(vector, 1, options_.dim, options_.metric, "vector"));
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
  return shard.Put(std::span<const uint64_t>(&id, 1), std::span<const float* const>(&row, 1),
                   timing::kEnabled ? timing::NowMicros() - start : 0);
}

absl::Status Collection::Partition(std::span<const uint64_t> ids,
                                   std::span<const float> vectors, bool dedupe,
                                   std::unique_ptr<float[]>* normalized,
                                   std::vector<uint64_t>* part_ids,
                                   std::vector<const float*>* part_rows,
                                   std::vector<size_t>* start) const {
  if (ids.empty()) return absl::InvalidArgumentError("an empty batch");
  const size_t n = ids.size();
  const size_t dim = options_.dim;
  if (vectors.size() != n * dim) {
    // ValidateVectors says how the sizes disagree.
    absl::Status s = ValidateVectors(vectors, n, options_.dim, options_.metric, "vectors");
    return s.ok() ? absl::InvalidArgumentError("vectors: wrong number of floats") : s;
  }
  // Checked (and for kCosine copied and normalized) in chunks of rows, over
  // the pool for a large batch: the check is the first pass over rows that
  // usually come cold from RAM, and on the calling thread alone it took
  // 12-15% of a sustained PutBatch's time (1M x 128-d, batches of 10,000,
  // /dev/shm). A chunk whose rows the fast check cannot clear sends the
  // batch to ValidateVectors, which names the first bad row.
  const bool cosine = options_.metric == Metric::kCosine;
  const float* base = vectors.data();
  float* out = nullptr;
  if (cosine) {
    normalized->reset(new float[n * dim]);  // not zero-filled first
    out = normalized->get();
  }
  constexpr size_t kChunkFloats = size_t{1} << 16;
  const size_t rows_per_chunk = std::max<size_t>(1, kChunkFloats / dim);
  const size_t chunks = (n + rows_per_chunk - 1) / rows_per_chunk;
  std::vector<uint8_t> unchecked(chunks, 0);  // the fast check did not clear the chunk
  std::vector<size_t> first_zero(chunks, n);  // each chunk's first zero row (kCosine)
  auto work = [&](size_t c) {
    const size_t first = c * rows_per_chunk;
    const size_t end = std::min(n, first + rows_per_chunk);
    if (dim > kMaxFastCheckDim ||
        !AllWellBelowDistanceRange(base + first * dim, (end - first) * dim)) {
      unchecked[c] = 1;
    }
    if (!cosine) return;
    for (size_t i = first; i < end; ++i) {
      std::memcpy(out + i * dim, base + i * dim, dim * sizeof(float));
      if (!NormalizeInPlace(out + i * dim, options_.dim) && first_zero[c] == n) {
        first_zero[c] = i;
      }
    }
  };
  if (pool_ != nullptr && chunks > 1) {
    pool_->ParallelFor(chunks, work);
  } else {
    for (size_t c = 0; c < chunks; ++c) work(c);
  }
  if (std::find(unchecked.begin(), unchecked.end(), 1) != unchecked.end()) {
    SHOAL_RETURN_IF_ERROR(ValidateVectors(vectors, n, options_.dim, options_.metric, "vectors"));
  }
  if (cosine) {
    const size_t zero = *std::min_element(first_zero.begin(), first_zero.end());
    if (zero < n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "vectors row ", zero, " is a zero vector, which has no direction under kCosine"));
    }
    base = out;
  }
  // Split by shard; the rows are read where they are (or were normalized).
  part_ids->resize(n);
  part_rows->resize(n);
  const size_t placed = RouteByShard(
      n, options_.shard_count, dedupe, [&](size_t i) { return ids[i]; },
      [&](size_t i, size_t at) {
        (*part_ids)[at] = ids[i];
        (*part_rows)[at] = base + i * dim;
      },
      start);
  part_ids->resize(placed);
  part_rows->resize(placed);
  return absl::OkStatus();
}

absl::Status Collection::PutBatch(std::span<const uint64_t> ids,
                                  std::span<const float> vectors) {
  if (ids.size() >= kBulkPutBatchVectors) return BulkLoad(ids, vectors);
  const int64_t started = timing::kEnabled ? timing::NowMicros() : 0;
  std::unique_ptr<float[]> normalized;
  std::vector<uint64_t> part_ids;
  std::vector<const float*> part_rows;
  std::vector<size_t> start;
  absl::Status valid =
      Partition(ids, vectors, /*dedupe=*/false, &normalized, &part_ids, &part_rows, &start);
  if (!valid.ok()) {
    return absl::Status(valid.code(), absl::StrCat("PutBatch: ", valid.message()));
  }
  std::vector<Shard::BatchPart> parts;  // in shard order
  for (uint32_t s = 0; s < options_.shard_count; ++s) {
    const size_t first = start[s], count = start[s + 1] - start[s];
    if (count == 0) continue;
    parts.push_back({shards_[s].get(), std::span<const uint64_t>(part_ids.data() + first, count),
                     std::span<const float* const>(part_rows.data() + first, count),
                     std::span<const record::Extras>()});
  }
  if (parts.size() == 1) {
    const int64_t route_us = timing::kEnabled ? timing::NowMicros() - started : 0;
    return parts.front().shard->Put(parts.front().ids, parts.front().rows, route_us);
  }
  return Shard::PutAcross(parts, pool_);
}

absl::Status Collection::BulkLoad(std::span<const uint64_t> ids,
                                  std::span<const float> vectors,
                                  const BulkLoadOptions& options) {
  if (ids.empty()) {
    // Nothing to load, once the vectors agree.
    absl::Status valid = ValidateVectors(vectors, 0, options_.dim, options_.metric, "vectors");
    if (!valid.ok()) return absl::Status(valid.code(), absl::StrCat("BulkLoad: ", valid.message()));
    return absl::OkStatus();
  }
  // Where a load's time goes, for SHOAL_DEBUG_TIMING: checking and routing
  // the input, copying each shard's rows together, building the graphs (the
  // medoids and the insertion passes), writing the files (encode, write, fsync,
  // rename) and publishing them in MANIFEST.
  timing::Scope timing("bulkload",
                       "collection,vectors,shards,partition_us,copy_us,graph_us,write_us,"
                       "publish_us,total_us");
  std::unique_ptr<float[]> normalized;
  std::vector<uint64_t> part_ids;
  std::vector<const float*> part_rows;
  std::vector<size_t> start;
  absl::Status valid =
      Partition(ids, vectors, /*dedupe=*/true, &normalized, &part_ids, &part_rows, &start);
  if (!valid.ok()) {
    return absl::Status(valid.code(), absl::StrCat("BulkLoad: ", valid.message()));
  }
  return LoadPartitioned(ids.size(), part_ids, part_rows, {}, start, &timing, options);
}

absl::Status Collection::LoadPartitioned(size_t total, std::span<const uint64_t> part_ids,
                                         std::span<const float* const> part_rows,
                                         std::span<const std::string_view> part_extras,
                                         std::span<const size_t> start, timing::Scope* scope,
                                         const BulkLoadOptions& options) {
  timing::Scope& timing = *scope;
  // Nodes placed in their graphs, reported while the graphs are built.
  std::atomic<uint64_t> placed{0};
  LoadProgress progress(options.progress, &placed, part_ids.size());
  int64_t copy_us = 0, graph_us = 0, write_us = 0;
  const int64_t partition_us = timing.Lap();
  const size_t dim = options_.dim;
  auto extras_of = [&](size_t first, size_t count) {
    return part_extras.empty() ? part_extras : part_extras.subspan(first, count);
  };
  // A small collection gets one graph for all its shards: one shared
  // segment (CompactionOptions::one_graph_max_vectors).
  const uint64_t one_graph_max = compaction_.one_graph_max_vectors;
  const bool one_graph = options_.shard_count > 1 && one_graph_max > 0 &&
                         live_count() + part_ids.size() <= one_graph_max;
  std::vector<Shard::BulkPart> parts;
  std::vector<uint32_t> part_shard;
  std::vector<size_t> counts;
  std::vector<float> all_rows;  // one_graph: every part's rows, in part order
  if (one_graph) all_rows.resize(part_ids.size() * dim);
  absl::Status status;
  // Every prepared part is installed or discarded, also when a step throws
  // (std::bad_alloc, which DBImpl reports as ResourceExhausted): a part left
  // pending would hold back the shard's merges and its Close for good.
  bool settled = false;
  absl::Cleanup discard_unsettled = [&] {
    if (settled) return;
    // Built parts are in no manifest: their files go (a shared one is gone
    // already: BuildSharedBulk builds it last).
    for (size_t j = 0; j < parts.size(); ++j) {
      shards_[part_shard[j]]->DiscardBulk(parts[j], /*keep_file=*/one_graph);
    }
  };
  auto new_stats = [&] {
    SegmentBuildStats stats;
    stats.placed = &placed;
    return stats;
  };
  auto add_stats = [&](const SegmentBuildStats& stats) {
    graph_us += static_cast<int64_t>((stats.medoid_seconds + stats.insert_seconds) * 1e6);
    write_us += static_cast<int64_t>(stats.write_seconds * 1e6);
  };
  // Shard by shard; each graph build uses every core.
  for (uint32_t s = 0; s < options_.shard_count && status.ok(); ++s) {
    const size_t first = start[s], count = start[s + 1] - start[s];
    if (count == 0) continue;
    absl::StatusOr<Shard::BulkPart> prepared = shards_[s]->PrepareBulk();
    if (!prepared.ok()) {
      status = prepared.status();
      break;
    }
    parts.push_back(std::move(prepared).value());
    part_shard.push_back(s);
    counts.push_back(count);
    Shard::BulkPart& part = parts.back();
    timing.Lap();
    std::vector<float> own_rows(one_graph ? 0 : count * dim);
    float* rows = one_graph ? all_rows.data() + first * dim : own_rows.data();
    for (size_t i = 0; i < count; ++i) {
      std::copy_n(part_rows[first + i], dim, rows + i * dim);
    }
    copy_us += timing.Lap();
    if (!one_graph) {
      SegmentBuildStats stats = new_stats();
      status = shards_[s]->BuildBulk(
          &part, std::span<const uint64_t>(part_ids.data() + first, count), rows, &stats,
          extras_of(first, count));
      add_stats(stats);
    }
  }
  if (one_graph && status.ok()) {
    std::vector<Shard*> shards;
    for (uint32_t s : part_shard) shards.push_back(shards_[s].get());
    SegmentBuildStats stats = new_stats();
    // A shard without rows has no part, so the parts' ids, in part order,
    // are part_ids as it is.
    status = Shard::BuildSharedBulk(shards, parts, counts, part_ids, all_rows.data(), dir_,
                                    &stats, part_extras);
    add_stats(stats);
  }
  if (!status.ok()) return status;  // discard_unsettled discards the parts
  std::vector<ShardEdit> edits;
  std::vector<std::string> added;
  for (size_t j = 0; j < parts.size(); ++j) {
    ShardEdit edit;
    edit.shard = part_shard[j];
    edit.add.push_back(parts[j].meta);
    edits.push_back(std::move(edit));
    if (j == 0 || !one_graph) added.push_back(parts[j].path);
  }
  timing.Lap();
  // A shared segment: no merge may see it named by some shards and not yet
  // installed in others (it would take it for unnamed and remove the file),
  // so every shard's merges wait until all have it.
  if (one_graph) {
    for (auto& shard : shards_) shard->LockMerges();
  }
  absl::Cleanup unlock_merges = [&] {
    if (!one_graph) return;
    for (size_t s = shards_.size(); s-- > 0;) shards_[s]->UnlockMerges();
  };
  status = PublishSegments(fs_, manifest_, name_, incarnation_, edits, added);
  if (!status.ok()) {
    // PublishSegments removed the files, or kept them when in doubt.
    settled = true;
    for (size_t j = 0; j < parts.size(); ++j) {
      shards_[part_shard[j]]->DiscardBulk(parts[j], /*keep_file=*/true);
    }
    return status;
  }
  settled = true;
  for (size_t j = 0; j < parts.size(); ++j) shards_[part_shard[j]]->InstallBulk(parts[j]);
  std::move(unlock_merges).Invoke();
  // Older segments join the one graph (or, past the limit, the shards
  // merge their own).
  UpdateFoldMode();
  progress.Finish();
  const int64_t publish_us = timing.Lap();
  timing.Line(name_, total, parts.size(), partition_us, copy_us, graph_us, write_us,
              publish_us, timing.Total());
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

absl::Status Collection::ForEachShard(absl::Status (Shard::*call)()) {
  absl::Status first;
  for (auto& shard : shards_) {
    absl::Status s = ((*shard).*call)();
    if (first.ok()) first = std::move(s);
  }
  return first;
}

absl::Status Collection::Flush() { return ForEachShard(&Shard::Flush); }

absl::Status Collection::Compact(const std::function<void(uint32_t)>& compacted) {
  UpdateFoldMode();
  if (!folds_.load(std::memory_order_acquire)) {
    absl::Status first;
    for (auto& shard : shards_) {
      absl::Status s = shard->Compact();
      if (first.ok()) first = std::move(s);
      if (compacted) compacted(1);
    }
    return first;
  }
  // One graph: every shard's memtables into segments, then all of those
  // into one.
  SHOAL_RETURN_IF_ERROR(Flush());
  absl::Status s = FoldShards(/*ratio=*/0);
  if (compacted) compacted(options_.shard_count);
  return s;
}

absl::Status Collection::WaitForCompact() {
  // The shards first: their flushes queue folds (after_flush). A fold
  // queues no shard work.
  SHOAL_RETURN_IF_ERROR(ForEachShard(&Shard::WaitForBackgroundWork));
  MutexLock lock(&fold_mu_);
  while (fold_scheduled_ || fold_running_) fold_done_.Wait(&fold_mu_);
  return fold_status_;
}

absl::Status Collection::SyncWal() { return ForEachShard(&Shard::SyncWal); }

Collection::~Collection() {
  // Also when Open failed part way, or the DB drops it without Close: the
  // shards' background work calls back into the collection (after_flush,
  // release_shared), so every shard is closed before shards_ goes.
  StopFolds();
  for (auto& shard : shards_) {
    if (shard != nullptr) (void)shard->Close();
  }
}

absl::Status Collection::Close() {
  StopFolds();
  absl::Status first = ForEachShard(&Shard::Close);
  if (commit_log_ != nullptr && !commit_log_closed_) {
    commit_log_closed_ = true;
    absl::Status s = commit_log_->Close();
    if (first.ok()) first = s;
    // The shard logs are durable: the commit log holds nothing they lack.
    // After a failure it stays, for the next Open to replay.
    if (first.ok()) {
      first = wal::RemoveCommitLogFiles(fs_, CommitLogDir(),
                                        std::numeric_limits<uint64_t>::max());
    }
  }
  return first;
}

CollectionReport Collection::Report() const {
  CollectionReport report;
  report.name = name_;
  report.options = options_;
  for (const auto& shard : shards_) report.shards.push_back(shard->Report());
  return report;
}

size_t Collection::live_count() const {
  size_t n = 0;
  for (const auto& shard : shards_) n += shard->live_count();
  return n;
}

}  // namespace shoal

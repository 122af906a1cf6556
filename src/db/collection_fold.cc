// Copyright 2026 The shoal Authors.
//
// One graph while a collection is small (CompactionOptions::
// one_graph_max_vectors; docs/architecture.md, "One graph while small"):
// the shared segments' files, the mode, and the background fold across
// shards (Shard::FoldAcross).

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "db/collection.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {

std::string Collection::SharedSegmentPath(uint64_t number) const {
  return JoinPath(dir_, SegmentFileName(number));
}

absl::Status Collection::OpenSharedSegments(const Context& context,
                                            const std::vector<ShardMeta>& shards) {
  absl::flat_hash_set<uint64_t> named;
  for (const ShardMeta& shard : shards) {
    for (const SegmentMeta& meta : shard.segments) {
      if (!meta.shared || !named.insert(meta.number).second) continue;
      if (context.open_segments != nullptr) {
        const auto it = context.open_segments->find(meta.number);
        if (it != context.open_segments->end()) {
          shared_at_open_[meta.number] = it->second;
          continue;
        }
      }
      SHOAL_ASSIGN_OR_RETURN(
          shared_at_open_[meta.number],
          Segment::Open(fs_, SharedSegmentPath(meta.number), options_.dim, options_.metric,
                        {context.db_options.segment_storage,
                         context.db_options.node_cache_bytes, context.memory_budget,
                         context.pool, context.pool}));
    }
  }
  if (context.db_options.read_only) return absl::OkStatus();  // a reader removes nothing
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
  for (const std::string& name : names) {
    uint64_t number;
    const bool segment = ParseSegmentFileName(name, &number);
    if ((segment && !named.contains(number)) || IsTempFileName(name)) {
      SHOAL_RETURN_IF_ERROR(fs_->RemoveFile(JoinPath(dir_, name)));
    }
  }
  return absl::OkStatus();
}

bool Collection::Small() const {
  const uint64_t limit = compaction_.one_graph_max_vectors;
  return shards_.size() > 1 && limit > 0 && live_count() <= limit;
}

void Collection::UpdateFoldMode() {
  // Flushes during recovery wait for the end of Open, which calls this.
  if (!open_.load(std::memory_order_acquire)) return;
  const bool small = Small();
  const bool was = folds_.exchange(small, std::memory_order_acq_rel);
  if (was && !small) {
    // Grown past one graph: each shard merges its own again.
    for (auto& shard : shards_) shard->ScheduleCompaction();
  }
  if (small) MaybeScheduleFold();
}

void Collection::MaybeScheduleFold() {
  if (compactor_ == nullptr || !compaction_.automatic) return;
  MutexLock lock(&fold_mu_);
  if (fold_scheduled_ || folds_stopped_) return;
  fold_scheduled_ = true;
  compactor_->Schedule([this] { RunFold(); });
}

void Collection::RunFold() {
  {
    MutexLock lock(&fold_mu_);
    fold_scheduled_ = false;
    if (folds_stopped_) {
      fold_done_.SignalAll();
      return;
    }
    fold_running_ = true;
  }
  absl::Status s;
  if (folds_.load(std::memory_order_acquire)) {
    // The quiescent ratio once no shard holds unflushed writes, as a
    // shard's own background fold (CompactionOptions).
    bool quiescent = true;
    for (auto& shard : shards_) quiescent = quiescent && shard->Quiescent();
    try {
      s = FoldShards(quiescent ? compaction_.quiescent_fold_ratio : compaction_.fold_ratio);
    } catch (const std::bad_alloc&) {
      s = absl::ResourceExhaustedError("out of memory while folding the shards' segments");
    }
  }
  MutexLock lock(&fold_mu_);
  fold_running_ = false;
  // A failed fold changed nothing; the next flush tries again.
  fold_status_ = s;
  fold_done_.SignalAll();
}

absl::Status Collection::FoldShards(double ratio, Shard* flushing, bool* flushed) {
  std::vector<Shard*> shards;
  for (auto& shard : shards_) shards.push_back(shard.get());
  return Shard::FoldAcross(shards, dir_, ratio, flushing, flushed);
}

void Collection::ReleaseShared(uint64_t number) {
  // Once closing (or not open yet), the file stays for the next Open.
  if (!open_.load(std::memory_order_acquire)) return;
  for (const auto& shard : shards_) {
    if (shard != nullptr && shard->NamesSegment(number)) return;
  }
  // Readers holding it keep their mapping (or descriptor).
  RemoveObsoleteFile(fs_, file_deleter_, SharedSegmentPath(number));
}

void Collection::StopFolds() {
  // The shards' callbacks do nothing from now on.
  open_.store(false, std::memory_order_release);
  MutexLock lock(&fold_mu_);
  folds_stopped_ = true;
  // A queued fold runs (the worker holds it) and returns at once.
  while (fold_scheduled_ || fold_running_) fold_done_.Wait(&fold_mu_);
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// Shard segments: flushes, bulk loads and compaction, and the one way a
// segment is published (WriteSegment, then PublishSegments).

#include "shard/shard.h"

#include <algorithm>
#include <chrono>
#include <new>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {

absl::Status PublishSegments(FileSystem* fs, ManifestEditor* manifest,
                             const std::string& collection, uint64_t incarnation,
                             std::span<const ShardEdit> edits,
                             std::span<const std::string> added) {
  absl::Status s = manifest->Apply(collection, incarnation, edits);
  // In doubt, MANIFEST may name the files: they stay.
  if (!s.ok() && !ManifestWriteInDoubt(s)) {
    for (const std::string& path : added) (void)fs->RemoveFile(path);
  }
  return s;
}

SegmentContents Shard::Contents(std::span<const uint64_t> ids,
                                std::span<const uint64_t> sequences, const float* vectors,
                                std::span<const uint64_t> tombstone_ids,
                                std::span<const uint64_t> tombstone_sequences,
                                std::span<const std::string_view> extras) const {
  SegmentContents contents;
  contents.dim = dim();
  contents.metric = metric();
  contents.ids = ids;
  contents.sequences = sequences;
  contents.vectors = vectors;
  contents.tombstone_ids = tombstone_ids;
  contents.tombstone_sequences = tombstone_sequences;
  contents.extras = extras;
  return contents;
}

absl::StatusOr<std::shared_ptr<Segment>> Shard::WriteSegment(uint64_t number,
                                                             const SegmentContents& contents,
                                                             SegmentBuildStats* stats,
                                                             GraphBuild how) {
  return WriteSegmentAt(SegmentPath(number), contents, stats, how);
}

absl::StatusOr<std::shared_ptr<Segment>> Shard::WriteSegmentAt(const std::string& path,
                                                               const SegmentContents& contents,
                                                               SegmentBuildStats* stats,
                                                               GraphBuild how) {
  SegmentBuildOptions build;
  build.graph = options_.collection.graph;
  build.code = options_.collection.code;
  if (how == GraphBuild::kQuick) {
    build.graph.build_list_size = std::max<uint32_t>(1, build.graph.build_list_size / 2);
  }
  SHOAL_RETURN_IF_ERROR(BuildSegment(fs_, options_.pool, path, contents, build, stats));
  absl::StatusOr<std::shared_ptr<Segment>> segment = OpenSegment(path);
  if (!segment.ok()) (void)fs_->RemoveFile(path);
  return segment;
}

bool Shard::QuickFlushLocked(uint64_t vectors) const {
  if (options_.compactor == nullptr || !options_.db.compaction.automatic) return false;
  // The fold extends the largest segment's graph when it was fully built
  // (MergeReusesGraph); a flush at least that large becomes the base itself.
  // A shared segment is a fold's base only while the collection folds.
  const bool folds = CollectionFolds();
  for (const SegmentSource& s : sources_.segments()) {
    if ((!s.meta.shared || folds) && s.meta.vectors > vectors &&
        MergeReusesGraph(*s.segment, options_.collection.graph)) {
      return true;
    }
  }
  return false;
}

void Shard::RunInBackground(BackgroundWorker* worker, absl::Status (Shard::*work)()) {
  pending_tasks_.fetch_add(1);
  worker->Schedule([this, work] {
    (void)(this->*work)();  // a failure is recorded by `work` (flush_status_, ...)
    // The last touch of `this`: Close waits for the count to reach zero.
    pending_tasks_.fetch_sub(1);
  });
}

void Shard::ScheduleFlush() {
  if (options_.flusher == nullptr) return;
  RunInBackground(options_.flusher, &Shard::RunFlushes);
}

absl::Status Shard::RunFlushes() {
  {
    MutexLock lock(&mu_);
    while (flush_running_) flushed_.Wait(&mu_);
    flush_running_ = true;
    flush_retry_scheduled_ = false;
  }
  absl::Status s;
  bool flushed = false;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (sources_.frozen().empty() || closing_) break;
    }
    try {
      s = FlushOldest();
    } catch (const std::bad_alloc&) {
      s = absl::ResourceExhaustedError("out of memory while flushing a memtable");
    }
    if (!s.ok()) break;
    flushed = true;
  }
  // Before flush_running_ drops: Close waits for it, so the collection is
  // still there.
  if (flushed && options_.after_flush) options_.after_flush();
  MutexLock lock(&mu_);
  flush_running_ = false;
  flush_status_ = s;
  if (s.ok()) {
    flush_backoff_ = kMinFlushBackoff;
  } else {
    flush_retry_at_ = std::chrono::steady_clock::now() + flush_backoff_;
    flush_backoff_ = std::min(flush_backoff_ * 2, kMaxFlushBackoff);
  }
  flushed_.SignalAll();
  return s;
}

void Shard::FlushedLocked(const FrozenSource& f) {
  sources_.RemoveOldestFrozen();
  flushed_sequence_ = std::max(flushed_sequence_, f.max_sequence);
  dead_check_due_ = true;
  MaybeScheduleCompactionLocked();
  flushed_.SignalAll();
}

std::vector<SegmentSource> Shard::FlushFoldInputsLocked(const FrozenSource& f) const {
  if (options_.compactor == nullptr || !options_.db.compaction.automatic ||
      CollectionFolds()) {
    return {};
  }
  // A bulk part in flight has a sequence below f's (it froze the memtable
  // before f, or f itself): the merged segment would rank f above the
  // inputs and so above the bulk segment, whose data is newer than the
  // inputs'. The fold waits for the background then.
  if (!pending_bulk_.empty()) return {};
  // Quiescent as PickCompactionLocked means it, once f is flushed.
  const bool quiescent = active_->empty() && sources_.frozen().size() == 1;
  const CompactionOptions& c = options_.db.compaction;
  return sources_.FoldInputs(CompactionLimitLocked(),
                             quiescent ? c.quiescent_fold_ratio : c.fold_ratio,
                             f.mem->live_count() + f.mem->tombstone_count());
}

absl::Status Shard::FlushOldest() {
  if (options_.fold_flush && options_.compactor != nullptr &&
      options_.db.compaction.automatic && CollectionFolds()) {
    bool bulk_in_flight;
    {
      MutexLock lock(&mu_);
      if (sources_.frozen().empty()) return absl::OkStatus();
      bulk_in_flight = !pending_bulk_.empty();
    }
    // Into the collection's one graph (a bulk part in flight ranks below
    // the memtable: then a plain flush, below).
    if (!bulk_in_flight) {
      SHOAL_ASSIGN_OR_RETURN(const bool folded, options_.fold_flush(this));
      if (folded) return absl::OkStatus();
    }
  }
  // A fold at flush time needs compact_mu_ (one merge at a time); when a
  // merge holds it, this is a plain flush and the fold comes after.
  if (compact_mu_.TryLock()) {
    absl::Cleanup unlock = [&] { compact_mu_.Unlock(); };  // also when a merge throws
    std::vector<SegmentSource> fold;
    FrozenSource f;
    bool keep_tombstones = true;
    {
      MutexLock lock(&mu_);
      if (!sources_.frozen().empty()) {
        f = sources_.frozen().front();
        fold = FlushFoldInputsLocked(f);
        if (!fold.empty()) keep_tombstones = !sources_.IsOldestSegment(fold.front().meta.number);
      }
    }
    if (!fold.empty()) return MergeSegments(fold, keep_tombstones, nullptr, &f);
  }
  timing::Scope timing("flush",
                       "collection,shard,vectors,tombstones,collect_us,medoid_us,insert_us,"
                       "write_us,open_us,publish_us,total_us,distance_computations");
  FrozenSource f;
  bool quick = false;
  {
    MutexLock lock(&mu_);
    if (sources_.frozen().empty()) return absl::OkStatus();
    f = sources_.frozen().front();
    quick = QuickFlushLocked(f.mem->live_count());
  }
  // The frozen memtable is immutable: read it without the lock.
  std::vector<uint64_t> ids, tombstones;
  std::vector<float> rows;
  std::vector<std::string_view> extras;  // views into f.mem, which f holds
  const bool with_records = f.mem->has_extras();
  rows.reserve(f.mem->live_count() * dim());
  f.mem->ForEachRecord(
      [&](uint64_t id, const float* v, std::string_view e) {
        ids.push_back(id);
        rows.insert(rows.end(), v, v + dim());
        if (with_records) extras.push_back(e);
      },
      [&](uint64_t id) { tombstones.push_back(id); });
  const std::vector<uint64_t> sequences(ids.size(), f.max_sequence);
  const std::vector<uint64_t> tombstone_sequences(tombstones.size(), f.max_sequence);
  const int64_t collect_us = timing.Lap();

  SegmentMeta meta{options_.manifest->NewFileNumber(), f.min_sequence, f.max_sequence,
                   ids.size(), tombstones.size()};
  SegmentBuildStats build;
  SHOAL_ASSIGN_OR_RETURN(
      std::shared_ptr<Segment> segment,
      WriteSegment(meta.number,
                   Contents(ids, sequences, rows.data(), tombstones, tombstone_sequences,
                            extras),
                   &build, quick ? GraphBuild::kQuick : GraphBuild::kFull));
  const int64_t built_us = timing.Lap();
  ShardEdit edit;
  edit.shard = options_.index;
  edit.add.push_back(meta);
  edit.flushed_sequence = f.max_sequence;
  const std::string path = SegmentPath(meta.number);
  SHOAL_RETURN_IF_ERROR(PublishSegments(fs_, options_.manifest, options_.collection_name,
                                        options_.collection_incarnation, {&edit, 1},
                                        {&path, 1}));
  {
    MutexLock lock(&mu_);
    sources_.AddSegment({std::move(segment), meta});
    FlushedLocked(f);
  }
  RemoveLogFilesUpTo(f.last_wal_number);
  auto us = [](double seconds) { return static_cast<int64_t>(seconds * 1e6); };
  timing.Line(options_.collection_name, options_.index, ids.size(), tombstones.size(),
              collect_us, us(build.medoid_seconds), us(build.insert_seconds),
              us(build.write_seconds),
              built_us - us(build.medoid_seconds + build.insert_seconds +
                            build.write_seconds),
              timing.Lap(), timing.Total(), build.distance_computations);
  return absl::OkStatus();
}

void Shard::RemoveLogFilesUpTo(uint64_t number) {
  // Best effort: a file that stays behind is skipped by recovery (its records
  // are at or below flushed_sequence) and removed by a later flush.
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDir(dir_);
  if (!names.ok()) return;
  uint64_t current;
  {
    // The writer's file number changes on rotation, under mu_.
    ReaderMutexLock lock(&mu_);
    current = wal_->current_file_number();
  }
  for (const std::string& name : *names) {
    uint64_t n;
    if (ParseWalFileName(name, &n) && n <= number && n < current) {
      RemoveObsoleteFile(fs_, options_.file_deleter, JoinPath(dir_, name));
    }
  }
}

absl::Status Shard::Flush() {
  {
    MutexLock lock(&mu_);
    if (closed_) return ClosedError();
    SHOAL_RETURN_IF_ERROR(FreezeLocked());
  }
  SHOAL_RETURN_IF_ERROR(RunFlushes());
  MutexLock lock(&mu_);
  // RunFlushes stops early only when closing; otherwise what is frozen now
  // was frozen by a concurrent writer after the memtables of this call went.
  if (closing_ && !sources_.frozen().empty()) {
    return ClosedError();
  }
  return absl::OkStatus();
}

absl::StatusOr<Shard::BulkPart> Shard::PrepareBulk() {
  BulkPart part;
  uint64_t barrier_lsn;
  {
    MutexLock lock(&mu_);
    if (closed_) return ClosedError();
    SHOAL_RETURN_IF_ERROR(FreezeLocked());
    part.sequence = next_sequence_;
    // In the commit log too: a later write acknowledged through it takes a
    // later sequence number, and recovery must find every one between.
    SHOAL_ASSIGN_OR_RETURN(barrier_lsn,
                           AppendRecord(wal::RecordType::kBarrier, 1, 0, 0, [](char*) {}));
    next_sequence_ += 1;
    active_min_sequence_ = next_sequence_;
    part.number = options_.manifest->NewFileNumber();
    // In flight from the moment it has its sequence (see Compact).
    pending_bulk_.insert(part.sequence);
  }
  // The barrier must be durable before the segment is (its manifest edit is
  // synced): recovery needs it to rank the records before it as older than
  // the bulk segment. Without it, a machine crash under kNever/kInterval kept
  // the segment but lost the barrier, and older log records won over the
  // bulk-loaded vectors.
  // With a commit log, the barrier is durable there (the writes acknowledged
  // after it through the commit log need it, to leave no hole), and in this
  // log too: a recovery that found the segment but not its barrier here
  // would rank the records before the barrier above the segment.
  absl::Status synced = options_.commit_log != nullptr
                            ? options_.commit_log->SyncTo(barrier_lsn)
                            : absl::OkStatus();
  // (barrier_lsn is the commit log's position then; this log's is before
  // its end now.)
  if (synced.ok()) {
    synced = wal_->SyncTo(options_.commit_log != nullptr ? wal_->end_lsn() : barrier_lsn);
  }
  if (!synced.ok()) {
    DiscardBulk(part, /*keep_file=*/true);  // no file yet
    return synced;
  }
  return part;
}

absl::Status Shard::BuildBulk(BulkPart* part, std::span<const uint64_t> ids,
                              const float* vectors, SegmentBuildStats* stats,
                              std::span<const std::string_view> extras) {
  const std::vector<uint64_t> sequences(ids.size(), part->sequence);
  SHOAL_ASSIGN_OR_RETURN(
      part->segment,
      WriteSegment(part->number, Contents(ids, sequences, vectors, {}, {}, extras), stats));
  part->path = SegmentPath(part->number);
  part->meta = SegmentMeta{part->number, part->sequence, part->sequence, ids.size(), 0};
  return absl::OkStatus();
}

absl::Status Shard::AdoptBulk(BulkPart* part, const std::string& path, uint64_t vectors,
                              std::shared_ptr<Segment> shared) {
  const bool is_shared = shared != nullptr;
  if (is_shared) {
    part->segment = std::move(shared);
  } else {
    SHOAL_ASSIGN_OR_RETURN(part->segment, OpenSegment(path));
  }
  part->path = path;
  part->meta = SegmentMeta{part->number, part->sequence, part->sequence, vectors, 0,
                           is_shared};
  return absl::OkStatus();
}

void Shard::ReleaseSegmentFile(const SegmentMeta& meta) {
  if (!meta.shared) {
    RemoveObsoleteFile(fs_, options_.file_deleter, SegmentPath(meta.number));
  } else if (options_.release_shared) {
    options_.release_shared(meta.number);
  }
}

void Shard::DiscardBulk(const BulkPart& part, bool keep_file) {
  {
    MutexLock lock(&mu_);
    auto it = pending_bulk_.find(part.sequence);
    if (it != pending_bulk_.end()) pending_bulk_.erase(it);
  }
  if (!keep_file) (void)fs_->RemoveFile(SegmentPath(part.number));
}

void Shard::InstallBulk(const BulkPart& part) {
  MutexLock lock(&mu_);
  auto pending = pending_bulk_.find(part.sequence);
  if (pending != pending_bulk_.end()) pending_bulk_.erase(pending);
  sources_.AddSegment({part.segment, part.meta});
  dead_check_due_ = true;
  MaybeScheduleCompactionLocked();
}

}  // namespace shoal

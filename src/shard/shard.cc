// Copyright 2026 The shoal Authors.
//
// Shard: construction, open, close and statistics.

#include "shard/shard.h"

#include <algorithm>
#include <chrono>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {

Shard::Shard(FileSystem* fs, std::string dir, const ShardOptions& options)
    : fs_(fs), dir_(std::move(dir)), options_(options) {
  active_ = NewMemTable();
  flushed_sequence_ = options.meta.flushed_sequence;
}

Shard::~Shard() { (void)Close(); }

std::unique_ptr<MemTable> Shard::NewMemTable() const {
  return std::make_unique<MemTable>(dim(), options_.db.arena_block_bytes,
                                    options_.db.preallocate, options_.db.memtable_bytes,
                                    options_.prefaulter);
}

std::string Shard::SegmentPath(uint64_t number) const {
  return JoinPath(dir_, SegmentFileName(number));
}

absl::StatusOr<std::unique_ptr<Shard>> Shard::Open(FileSystem* fs, const std::string& dir,
                                                   const ShardOptions& options) {
  std::unique_ptr<Shard> shard(new Shard(fs, dir, options));
  if (options.db.read_only) {
    // Writes nothing: no directory made, no file removed, no log opened.
    SHOAL_RETURN_IF_ERROR(shard->OpenSegments());
    SHOAL_RETURN_IF_ERROR(shard->FollowLog());
    return shard;
  }
  SHOAL_RETURN_IF_ERROR(fs->CreateDir(dir));
  SHOAL_RETURN_IF_ERROR(shard->OpenSegments());
  SHOAL_RETURN_IF_ERROR(shard->Recover());
  return shard;
}

size_t Shard::live_count() const {
  ReaderMutexLock lock(&mu_);
  size_t n = active_->live_count();
  for (const FrozenSource& f : sources_.frozen()) n += f.mem->live_count();
  for (const SegmentSource& s : sources_.segments()) n += s.meta.vectors;
  return n;  // an upper bound once versions overlap across sources
}

ShardReport Shard::Report() const {
  ShardReport report;
  report.index = options_.index;
  absl::flat_hash_set<uint64_t> seen;
  auto visit = [&](uint64_t id, bool live) {
    if (seen.insert(id).second && live) ++report.live_vectors;
  };
  SourceSnapshot older;
  {
    ReaderMutexLock lock(&mu_);
    report.memtable_bytes = active_->DataBytes();
    report.deleted = active_->tombstone_count();
    for (const FrozenSource& f : sources_.frozen()) {
      report.memtable_bytes += f.mem->DataBytes();
      report.deleted += f.mem->tombstone_count();
    }
    report.frozen_memtables = sources_.frozen().size();
    report.segments = sources_.segments().size();
    for (const SegmentSource& s : sources_.segments()) {
      report.segment_vectors += s.meta.vectors;
      report.deleted += s.meta.tombstones;
      if (s.meta.shared) report.shared_segments.push_back(s.meta.number);
      if (!s.meta.shared || options_.index == 0) {
        const Segment::RecordBytes b = s.segment->record_bytes();
        report.segment_label_bytes += b.labels;
        report.segment_attribute_bytes += b.attributes;
        report.segment_payload_bytes += b.payloads;
      }
    }
    // Live vectors: the ids whose newest entry, newest source first, is a
    // vector. The active memtable takes writes: read it under the lock.
    active_->ForEach([&](uint64_t id, const float*) { visit(id, true); },
                     [&](uint64_t id) { visit(id, false); });
    report.stored_vectors += active_->live_count();
    older = sources_.Snapshot();
  }
  for (const SourceSnapshot::Source& source : older.sources()) {
    if (source.mem != nullptr) {
      source.mem->ForEach([&](uint64_t id, const float*) { visit(id, true); },
                          [&](uint64_t id) { visit(id, false); });
      report.stored_vectors += source.mem->live_count();
    } else if (source.shared) {
      // This shard's entries only.
      source.segment->ForEachEntry([&](uint64_t id, uint64_t, bool live) {
        if (ShardOf(id, options_.collection.shard_count) != options_.index) return;
        visit(id, live);
        if (live) ++report.stored_vectors;
      });
    } else {
      source.segment->ForEachEntry([&](uint64_t id, uint64_t, bool live) { visit(id, live); });
      report.stored_vectors += source.segment->vector_count();
    }
  }
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDir(dir_);
  if (names.ok()) {
    for (const std::string& name : *names) {
      uint64_t number;
      if (!ParseWalFileName(name, &number)) continue;
      report.wal_files += 1;
      absl::StatusOr<uint64_t> size = fs_->FileSize(JoinPath(dir_, name));
      if (size.ok()) report.wal_bytes += *size;
    }
  }
  return report;
}

absl::Status Shard::SyncWal() { return wal_->SyncTo(wal_->end_lsn()); }

absl::Status Shard::ClosedError() const {
  return absl::FailedPreconditionError(absl::StrCat(
      "collection '", options_.collection_name, "' shard ", options_.index, " is closed"));
}

absl::Status Shard::Close() {
  {
    MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    closing_ = true;
    // Queued flush tasks hold `this`: wait for them. A flush in progress
    // finishes; the frozen memtables left are in the log and come back on
    // Open. A bulk part in flight is published (or refused) and installed
    // or discarded, its file with it.
    while (pending_tasks_.load() > 0 || flush_running_ || !pending_bulk_.empty()) {
      flushed_.WaitFor(&mu_, std::chrono::milliseconds(1));
    }
  }
  // A merge in progress holds compact_mu_ (which ranks before mu_): it
  // finishes; later ones see closing_ and write nothing.
  { MutexLock merging(&compact_mu_); }
  MutexLock lock(&mu_);
  if (wal_ == nullptr) return absl::OkStatus();
  return wal_->Close(/*sync=*/true);
}

}  // namespace shoal

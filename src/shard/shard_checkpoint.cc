// Copyright 2026 The shoal Authors.
//
// A shard's part of a checkpoint (db/checkpoint.cc): the cut, noted under
// every shard's lock at once, and the sync a direct-I/O log needs before its
// file is copied.

#include "shard/shard.h"

#include "absl/cleanup/cleanup.h"

namespace shoal {

std::vector<Shard::CheckpointView> Shard::TakeCheckpointViews(
    std::span<const Shard* const> shards) {
  std::vector<CheckpointView> views(shards.size());
  // Every lock at once, shared: writers append under the exclusive lock, so
  // each log's offset is a record boundary, and a batch over several shards
  // (which holds all of its shards' locks) is on every side of the cut or
  // none. Only a few fields are noted: writers wait microseconds.
  for (const Shard* s : shards) s->mu_.ReaderLock();
  absl::Cleanup unlock = [&] {
    for (const Shard* s : shards) s->mu_.ReaderUnlock();
  };
  for (size_t j = 0; j < shards.size(); ++j) {
    const Shard& shard = *shards[j];
    CheckpointView& v = views[j];
    if (shard.closed_ || shard.wal_ == nullptr) {
      v.closed = true;
      continue;
    }
    v.flushed_sequence = shard.flushed_sequence_;
    v.segments.reserve(shard.sources_.segments().size());
    for (const SegmentSource& s : shard.sources_.segments()) v.segments.push_back(s.meta);
    v.log_number = shard.wal_->current_file_number();
    v.log_offset = shard.wal_->current_offset();
    v.log_lsn = shard.wal_->end_lsn();
    v.log_direct = shard.wal_->direct();
  }
  return views;
}

absl::Status Shard::SyncWalTo(uint64_t lsn) const { return wal_->SyncTo(lsn); }

}  // namespace shoal

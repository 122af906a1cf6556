// Copyright 2026 The shoal Authors.
//
// A reader's shard (Options::read_only): its segments as the manifest
// named them, and its log followed while the writer process appends to it
// (wal/log_tail.h). Nothing here writes a file.

#include "shard/shard.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {

absl::StatusOr<std::shared_ptr<Segment>> Shard::OpenOrReuseSegment(
    const SegmentMeta& meta) const {
  if (options_.open_segments != nullptr) {
    const auto it = options_.open_segments->find(meta.number);
    if (it != options_.open_segments->end()) return it->second;
  }
  return OpenSegment(SegmentPath(meta.number));
}

void Shard::CollectSegments(
    absl::flat_hash_map<uint64_t, std::shared_ptr<Segment>>* out) const {
  ReaderMutexLock lock(&mu_);
  for (const SegmentSource& s : sources_.segments()) (*out)[s.meta.number] = s.segment;
}

absl::Status Shard::FollowLog() {
  MutexLock tail(&tail_mu_);
  uint64_t after_segments = 0;
  {
    MutexLock lock(&mu_);
    if (tail_ == nullptr) {
      tail_ = std::make_unique<wal::LogTail>(fs_, dir_, options_.index, dim());
      next_sequence_ = flushed_sequence_ + 1;
      active_min_sequence_ = next_sequence_;
    }
    // As ReplayLog: the first record may follow the newest bulk segment
    // (the log was cut below its barrier by a salvage).
    const uint64_t newest = sources_.MaxSegmentSequence();
    after_segments = newest > flushed_sequence_ ? newest + 1 : 0;
  }
  absl::Status s = tail_->Poll([&](const wal::RecordView& r, uint64_t file) -> absl::Status {
    MutexLock lock(&mu_);
    if (r.sequence + r.count - 1 <= flushed_sequence_) return absl::OkStatus();  // in a segment
    if (tail_first_ && r.sequence == after_segments) {
      next_sequence_ = active_min_sequence_ = r.sequence;
    }
    if (r.sequence != next_sequence_) {
      return absl::AbortedError(absl::StrCat(
          "collection '", options_.collection_name, "' shard ", options_.index,
          ": the log's next record (file ", file, ", offset ", r.offset, ") holds sequences ",
          r.sequence, "..", r.sequence + r.count - 1, ", expected ", next_sequence_,
          " (flushed to ", flushed_sequence_, ")",
          ": the writer flushed the records between and removed their log file since the "
          "manifest was read"));
    }
    tail_first_ = false;
    return ApplyRecord(r, file);
  });
  // A shard directory that is gone: the collection was dropped (NotFound,
  // the caller reads the manifest again).
  SHOAL_RETURN_IF_ERROR(s);
  MutexLock lock(&mu_);
  // Sequences taken by bulk loads whose barrier records were flushed away.
  next_sequence_ = std::max(next_sequence_, sources_.MaxSegmentSequence() + 1);
  if (active_->empty()) active_min_sequence_ = next_sequence_;
  return absl::OkStatus();
}

}  // namespace shoal

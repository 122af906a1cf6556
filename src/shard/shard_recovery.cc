// Copyright 2026 The shoal Authors.
//
// Shard recovery: segments named by the manifest, the log replayed (with
// salvage), and the records of the collection's commit log.

#include "shard/shard.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "util/coding.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {

absl::Status Shard::OpenSegments() {
  MutexLock lock(&mu_);
  for (const SegmentMeta& meta : options_.meta.segments) {
    if (meta.shared) {
      // Opened once by the collection, for all the shards that name it.
      std::shared_ptr<Segment> shared;
      if (options_.shared_segments != nullptr) {
        const auto it = options_.shared_segments->find(meta.number);
        if (it != options_.shared_segments->end()) shared = it->second;
      }
      if (shared == nullptr) {
        return absl::InternalError(absl::StrCat("shared segment ", meta.number, " not opened"));
      }
      sources_.AddSegment({std::move(shared), meta});
      continue;
    }
    SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Segment> segment, OpenOrReuseSegment(meta));
    sources_.AddSegment({std::move(segment), meta});
  }
  if (options_.db.read_only) return absl::OkStatus();  // a reader removes nothing
  // Files no manifest entry names: segments of a flush or bulk load that
  // crashed before its manifest edit, and temporary files.
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
  for (const std::string& name : names) {
    uint64_t number;
    const bool segment = ParseSegmentFileName(name, &number);
    const bool referenced =
        segment && std::any_of(options_.meta.segments.begin(), options_.meta.segments.end(),
                               [&](const SegmentMeta& m) { return m.number == number; });
    if ((segment && !referenced) || IsTempFileName(name)) {
      SHOAL_RETURN_IF_ERROR(fs_->RemoveFile(JoinPath(dir_, name)));
    }
  }
  return absl::OkStatus();
}

absl::Status Shard::ApplyRecord(const wal::RecordView& r, uint64_t file_number) {
  const size_t row_bytes = size_t{dim()} * sizeof(float);
  recovery_.records += 1;
  recovery_.ops += r.count;
  next_sequence_ = r.sequence + r.count;
  switch (r.type) {
    case wal::RecordType::kPut: {
      active_->Reserve(r.count);
      std::vector<float> row(dim());  // the log's floats may be unaligned
      for (uint32_t i = 0; i < r.count; ++i) {
        std::memcpy(row.data(), r.vectors + i * row_bytes, row_bytes);
        active_->Put(DecodeFixed64(r.ids + size_t{i} * 8), row.data());
      }
      break;
    }
    case wal::RecordType::kPutRecords: {
      active_->Reserve(r.count);
      std::vector<float> row(dim());
      std::string_view rest = r.extras;  // checked by the reader
      for (uint32_t i = 0; i < r.count; ++i) {
        std::memcpy(row.data(), r.vectors + i * row_bytes, row_bytes);
        record::ExtrasView extras;
        size_t size = 0;
        absl::Status s = record::Parse(rest, &extras, &size);
        if (!s.ok()) return absl::InternalError(absl::StrCat("unchecked extras: ", s.message()));
        // A record without parts keeps nothing in the memtable.
        active_->Put(DecodeFixed64(r.ids + size_t{i} * 8), row.data(),
                     extras.empty() ? std::string_view() : rest.substr(0, size));
        rest.remove_prefix(size);
      }
      break;
    }
    case wal::RecordType::kDelete:
      for (uint32_t i = 0; i < r.count; ++i) {
        active_->Delete(DecodeFixed64(r.ids + size_t{i} * 8));
      }
      break;
    case wal::RecordType::kBarrier:
      // A bulk load took this sequence: what came before is older than its
      // segment, what follows newer. Its records are in earlier files, since
      // a bulk load moves the log to a new file first.
      if (!active_->empty()) PushActiveLocked(r.sequence - 1, file_number - 1);
      active_min_sequence_ = r.sequence + 1;
      break;
    case wal::RecordType::kShardRecord:
      // Commit logs only: ReadWalFile refuses one in a shard's log.
      return absl::InternalError("a commit log record in a shard's log");
  }
  return absl::OkStatus();
}

absl::Status Shard::ReplayLog(const std::vector<uint64_t>& numbers, Damage* damage,
                              uint64_t* resume_number, size_t* resume_offset) {
  // Records up to flushed_sequence_ are in segments; the first one after it
  // must follow it exactly (a bulk load's barrier record takes its sequence,
  // so there is no other gap), or follow the newest bulk segment's: a
  // salvage (or a crash under older builds) can cut the log below a bulk
  // segment's barrier, after which the log goes on from the segment.
  next_sequence_ = flushed_sequence_ + 1;
  active_min_sequence_ = next_sequence_;
  const uint64_t newest_segment = sources_.MaxSegmentSequence();
  const uint64_t after_segments = newest_segment > flushed_sequence_ ? newest_segment + 1 : 0;
  bool first = true;
  std::optional<Damage> torn;  // an earlier file whose tail was torn
  // Tails to drop, once every file has been read: a tail that a later file
  // shows to be damage must stay for the DataLossError (and the next Open).
  std::vector<std::pair<std::string, size_t>> cuts;
  for (size_t i = 0; i < numbers.size(); ++i) {
    const std::string path = JoinPath(dir_, WalFileName(numbers[i]));
    SHOAL_ASSIGN_OR_RETURN(std::string contents, fs_->ReadFile(path));
    std::optional<Damage> gap;
    absl::StatusOr<wal::ReadResult> read = wal::ReadWalFile(
        contents, path, options_.index, numbers[i], dim(),
        [&](const wal::RecordView& r) -> absl::Status {
          if (r.sequence + r.count - 1 <= flushed_sequence_) return absl::OkStatus();
          if (torn.has_value() && r.sequence != next_sequence_) {
            // An earlier file lost its tail, yet this one holds records that
            // do not continue where it ends: a hole in the log. (When they do
            // continue, the torn bytes were stale: written after the end a
            // recovery truncated to, without that truncation surviving.)
            *damage = *torn;
            return absl::CancelledError();
          }
          if (first && !torn.has_value() && r.sequence == after_segments) {
            next_sequence_ = active_min_sequence_ = r.sequence;
          }
          first = false;
          if (r.sequence != next_sequence_) {
            gap = Damage{i, r.offset,
                         absl::StrCat("write-ahead log ", path, ": record at offset ",
                                      r.offset, " has sequence ", r.sequence,
                                      ", expected ", next_sequence_)};
            return absl::CancelledError();
          }
          return ApplyRecord(r, numbers[i]);
        });
    if (gap.has_value()) {
      *damage = *gap;
      return absl::OkStatus();
    }
    if (!damage->message.empty()) return absl::OkStatus();
    SHOAL_RETURN_IF_ERROR(read.status());  // damaged file header, unknown version
    const wal::ReadResult& result = *read;
    if (result.corrupted) {
      *damage = Damage{i, result.corrupt_offset,
                       absl::StrCat("write-ahead log ", path, " is damaged at offset ",
                                    result.corrupt_offset,
                                    ": a record there fails its checks, yet valid "
                                    "records follow it")};
      return absl::OkStatus();
    }
    if (result.torn_tail && !torn.has_value()) {
      torn = Damage{i, result.valid_end,
                    absl::StrCat("write-ahead log ", path, " is damaged at offset ",
                                 result.valid_end, ", yet later log files hold records")};
    }
    if (result.valid_end < contents.size()) {
      cuts.emplace_back(path, result.valid_end);
      recovery_.torn_tail_dropped |= result.torn_tail;
    }
    *resume_number = numbers[i];
    *resume_offset = result.valid_end;
    if (result.version != 0 && result.version < wal::kFormatVersion) {
      // A file of an older version takes no record of the newer types: the
      // writer starts the next file (its header says the new version).
      *resume_number = numbers[i] + 1;
      *resume_offset = 0;
    }
  }
  // Drop the torn tails (and the reserved zeros), so that new records never
  // sit before stale bytes.
  for (const auto& [path, length] : cuts) SHOAL_RETURN_IF_ERROR(fs_->Truncate(path, length));
  return absl::OkStatus();
}

absl::Status Shard::Recover() {
  MutexLock lock(&mu_);
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
  std::vector<uint64_t> numbers;
  for (const std::string& name : names) {
    uint64_t number;
    if (ParseWalFileName(name, &number)) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());

  uint64_t resume_number = numbers.empty() ? 1 : numbers.back() + 1;
  size_t resume_offset = 0;  // 0: create the file
  Damage damage;
  SHOAL_RETURN_IF_ERROR(ReplayLog(numbers, &damage, &resume_number, &resume_offset));
  if (!damage.message.empty()) {
    if (!options_.db.salvage_corrupt_wal) {
      return absl::DataLossError(absl::StrCat(
          damage.message,
          " (Options::salvage_corrupt_wal keeps the records before the damage)"));
    }
    // Salvage: cut the log at the damage, set later files aside, and replay
    // the clean prefix from scratch.
    const std::string path = JoinPath(dir_, WalFileName(numbers[damage.file]));
    SHOAL_RETURN_IF_ERROR(fs_->Truncate(path, damage.offset));
    for (size_t j = damage.file + 1; j < numbers.size(); ++j) {
      const std::string later = JoinPath(dir_, WalFileName(numbers[j]));
      SHOAL_RETURN_IF_ERROR(fs_->Rename(later, later + std::string(kDroppedSuffix)));
    }
    SHOAL_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    numbers.resize(damage.file + 1);
    active_ = NewMemTable();
    sources_.ClearFrozen();
    recovery_ = RecoveryStats{};
    recovery_.salvaged = true;
    Damage again;
    SHOAL_RETURN_IF_ERROR(ReplayLog(numbers, &again, &resume_number, &resume_offset));
    if (!again.message.empty()) return absl::DataLossError(again.message);
  }
  // Sequences taken by bulk loads whose barrier records were flushed away.
  next_sequence_ = std::max(next_sequence_, sources_.MaxSegmentSequence() + 1);
  if (active_->empty()) active_min_sequence_ = next_sequence_;

  wal::WalWriterOptions wal_options;
  wal_options.shard = options_.index;
  wal_options.file_bytes = options_.db.wal_file_bytes;
  wal_options.populate = options_.db.preallocate;
  // With a commit log, writes wait for its syncs, not this log's, which is
  // then mapped (so a process that dies leaves every record in it) and
  // synced only by checkpoints, rotations and Close: its pages may be
  // dirtied ahead of the writer, to spare the writer (holding the shard's
  // and the commit log's locks) a page fault every few records.
  const bool synced_per_write =
      options_.db.fsync == FsyncPolicy::kAlways && options_.commit_log == nullptr;
  wal_options.direct_io = synced_per_write && options_.db.direct_io_log;
  wal_options.group = synced_per_write ? options_.group_commit : nullptr;
  wal_options.dirty_ahead = options_.commit_log != nullptr;
  wal_options.prefaulter = options_.prefaulter;
  wal_options.keep_view = true;  // the memtable reads its rows there (LoggedRowsLocked)
  SHOAL_ASSIGN_OR_RETURN(wal_, wal::WalWriter::Open(fs_, dir_, wal_options,
                                                    resume_number, resume_offset));
  if (recovery_.torn_tail_dropped || recovery_.salvaged) {
    // Make the truncation durable before new records land past it.
    SHOAL_RETURN_IF_ERROR(wal_->SyncFile());
  }
  MaybeFreezeLocked();
  if (!sources_.frozen().empty()) ScheduleFlush();
  MaybeScheduleCompactionLocked();
  return absl::OkStatus();
}

absl::Status Shard::ApplyCommitted(const wal::RecordView& r) {
  MutexLock lock(&mu_);
  if (r.sequence < next_sequence_) {
    if (r.sequence + r.count <= next_sequence_) return absl::OkStatus();  // the log has it
  } else if (r.sequence == next_sequence_) {
    SHOAL_ASSIGN_OR_RETURN(char* payload, wal_->BeginRecord(r.payload_length));
    std::memcpy(payload, r.ids, r.payload_length);
    wal_->FinishRecord(r.type, r.sequence, r.count, r.dim);
    const size_t frozen = sources_.frozen().size();
    SHOAL_RETURN_IF_ERROR(ApplyRecord(r, wal_->current_file_number()));
    recovery_.from_commit_log += 1;
    // A barrier (a bulk load's) froze the memtable: its flush, as
    // FreezeLocked schedules one. Until 2026-11-25 none was, and the frozen
    // memtable waited for the next freeze: WaitForCompact after such a
    // recovery never returned (crash_loop's power loop, about once in 500
    // cycles, once it began to call it).
    if (sources_.frozen().size() > frozen) ScheduleFlush();
    MaybeFreezeLocked();
    return absl::OkStatus();
  }
  if (options_.db.salvage_corrupt_wal) {
    // The log was cut at damage (salvage): the records of the commit log
    // past the cut cannot follow what is left. Dropped, like the log's.
    recovery_.salvaged = true;
    return absl::OkStatus();
  }
  return absl::DataLossError(absl::StrCat(
      "collection ", options_.collection_name, " shard ", options_.index,
      ": the commit log's record at offset ", r.offset, " holds sequences ", r.sequence, "..",
      r.sequence + r.count - 1, ", but the shard's log ends at ", next_sequence_ - 1,
      ": the records between are lost"));
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.

#include "wal/commit_log.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "util/coding.h"
#include "version/filename.h"
#include "util/status_macros.h"

namespace shoal::wal {
namespace {

absl::StatusOr<std::vector<uint64_t>> ListCommitLogFiles(FileSystem* fs,
                                                         const std::string& dir) {
  std::vector<uint64_t> numbers;
  if (!fs->Exists(dir)) return numbers;
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  for (const std::string& name : names) {
    uint64_t number;
    if (ParseWalFileName(name, &number)) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ReplayCommitLog(
    FileSystem* fs, const std::string& dir, uint32_t dim, bool salvage,
    const std::function<absl::Status(uint32_t shard, const RecordView& record)>& on_record) {
  SHOAL_ASSIGN_OR_RETURN(std::vector<uint64_t> numbers, ListCommitLogFiles(fs, dir));
  // A file whose tail was torn: no later file may hold records, since a
  // rotation syncs the old file before the new one takes any.
  std::optional<std::string> torn;
  for (uint64_t number : numbers) {
    const std::string path = JoinPath(dir, WalFileName(number));
    SHOAL_ASSIGN_OR_RETURN(std::string contents, fs->ReadFile(path));
    std::optional<std::string> damage;
    absl::StatusOr<ReadResult> read = ReadWalFile(
        contents, path, kCommitLogShard, number, dim,
        [&](const RecordView& r) -> absl::Status {
          if (torn.has_value()) {
            damage = *torn;
            return absl::CancelledError();
          }
          uint32_t shard;
          RecordView inner;
          absl::Status s = DecodeShardRecord(r, dim, &shard, &inner);
          if (!s.ok()) return absl::DataLossError(absl::StrCat(path, ": ", s.message()));
          return on_record(shard, inner);
        });
    if (!damage.has_value()) {
      SHOAL_RETURN_IF_ERROR(read.status());
      if (read->corrupted) {
        damage = absl::StrCat("commit log ", path, " is damaged at offset ",
                              read->corrupt_offset,
                              ": a record there fails its checks, yet valid records follow it");
      } else if (read->torn_tail && !torn.has_value()) {
        torn = absl::StrCat("commit log ", path, " is damaged at offset ", read->valid_end,
                            ", yet later commit log files hold records");
      }
    }
    if (damage.has_value()) {
      if (salvage) break;  // keep what came before the damage
      return absl::DataLossError(absl::StrCat(
          *damage, " (Options::salvage_corrupt_wal keeps the records before the damage)"));
    }
  }
  return numbers;
}

absl::Status RemoveCommitLogFiles(FileSystem* fs, const std::string& dir, uint64_t below) {
  SHOAL_ASSIGN_OR_RETURN(std::vector<uint64_t> numbers, ListCommitLogFiles(fs, dir));
  bool removed = false;
  for (uint64_t number : numbers) {
    if (number >= below) break;
    SHOAL_RETURN_IF_ERROR(fs->RemoveFile(JoinPath(dir, WalFileName(number))));
    removed = true;
  }
  // Durable, or a file could come back after a crash: harmless (its records
  // are in the shard logs, replay skips them) but it would be replayed.
  if (removed) SHOAL_RETURN_IF_ERROR(fs->SyncDir(dir));
  return absl::OkStatus();
}

absl::Status CommitLog::Start(uint64_t number) {
  WalWriterOptions writer;
  writer.shard = kCommitLogShard;
  writer.file_bytes = options_.file_bytes;
  writer.direct_io = options_.direct_io;
  writer.prefaulter = options_.prefaulter;
  MutexLock lock(&mu_);
  SHOAL_ASSIGN_OR_RETURN(writer_, WalWriter::Open(fs_, dir_, writer, number, 0));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> CommitLog::Append(uint32_t shard, size_t record_bytes,
                                           absl::FunctionRef<std::string_view()> finish) {
  const ShardRecord record{shard, record_bytes, finish};
  return AppendAll({&record, 1});
}

absl::StatusOr<uint64_t> CommitLog::AppendAll(std::span<const ShardRecord> records) {
  MutexLock lock(&mu_);
  const uint64_t file = writer_->current_file_number();
  absl::Status status;
  if (records.size() > 1) {
    size_t bytes = 0;
    for (const ShardRecord& r : records) {
      bytes += AlignRecord(kRecordHeaderSize + kShardRecordPrefix + r.record_bytes);
    }
    status = writer_->ReserveRoom(bytes, records.size());
  }
  uint64_t lsn = 0;
  for (size_t i = 0; i < records.size() && status.ok(); ++i) {
    const ShardRecord& r = records[i];
    // A begun record that is never finished takes no room: the next one
    // starts at the same offset.
    absl::StatusOr<char*> begun = writer_->BeginRecord(kShardRecordPrefix + r.record_bytes);
    if (!begun.ok()) {
      status = begun.status();
      break;
    }
    char* const payload = *begun;
    const std::string_view record = r.finish();
    // Finished as begun: AlignRecord(header + payload) bytes.
    assert(record.size() == r.record_bytes);
    EncodeFixed32(payload, r.shard);
    EncodeFixed32(payload + 4, 0);
    std::memcpy(payload + kShardRecordPrefix, record.data(), record.size());
    lsn = writer_->FinishRecord(RecordType::kShardRecord, 0, 1, 0);
  }
  // Also when the new file then had no room for the record.
  if (writer_->current_file_number() != file) {
    checkpoint_due_.store(true, std::memory_order_release);
  }
  SHOAL_RETURN_IF_ERROR(status);
  return lsn;
}

uint64_t CommitLog::current_file_number() const {
  MutexLock lock(&mu_);
  return writer_->current_file_number();
}

absl::Status CommitLog::MaybeCheckpoint() {
  if (!checkpoint_due_.load(std::memory_order_acquire)) return absl::OkStatus();
  MutexLock lock(&checkpoint_mu_);
  if (closed_ || !checkpoint_due_.exchange(false, std::memory_order_acq_rel)) {
    return absl::OkStatus();
  }
  // Every record in an earlier file went to its shard's log before it came
  // here, so before this: the sync covers it.
  const uint64_t current = current_file_number();
  SHOAL_RETURN_IF_ERROR(options_.sync_shard_logs());
  return RemoveCommitLogFiles(fs_, dir_, current);
}

absl::Status CommitLog::Close() {
  {
    MutexLock checkpointing(&checkpoint_mu_);
    closed_ = true;
  }
  MutexLock lock(&mu_);
  if (writer_ == nullptr) return absl::OkStatus();  // never started
  return writer_->Close(/*sync=*/false);
}

}  // namespace shoal::wal

// Copyright 2026 The shoal Authors.
//
// A kAlways collection's commit log (Options::collection_commit_log): a copy
// of every record (put, delete, bulk-load barrier) the collection's shards
// append to their own logs, in <collection dir>/commit/ (kShardRecord records in
// files whose header names shard kCommitLogShard). Its point is the sync:
// the writers of all the shards share one group commit, one write + one
// fdatasync, where syncing each shard's log takes one of each per shard.
//
// The shard logs stay complete (a record goes to its shard's log first, then
// here, both under the shard's mutex), but are synced only at their own
// rotations, at Close, and by checkpoints. A file of the commit log may go
// once every record in it is durable in its shard's log: when the log moves
// to a new file, MaybeCheckpoint syncs every shard log and removes the older
// files. After a crash, ReplayCommitLog hands what the files hold to the
// shards, which append the records their logs lost (docs/format.md).
//
// Thread-safe. Append is called with the shard's mutex held, so each shard's
// records are here in the order of its sequence numbers.

#ifndef SHOAL_SRC_WAL_COMMIT_LOG_H_
#define SHOAL_SRC_WAL_COMMIT_LOG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/background_worker.h"
#include "util/file_system.h"
#include "util/mutex.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace shoal::wal {


struct CommitLogOptions {
  size_t file_bytes = 64 << 20;  // capacity of a new file
  bool direct_io = true;         // WalWriterOptions::direct_io
  // WalWriterOptions::prefaulter: log space is zero-filled and faulted in
  // there, ahead of the writers, instead of under the log's mutex. May be
  // null; must outlive the log.
  BackgroundWorker* prefaulter = nullptr;
  // Makes every record appended so far to every shard's log durable.
  // REQUIRED; called by MaybeCheckpoint.
  std::function<absl::Status()> sync_shard_logs;
};

// Reads the commit log files in `dir` (none when it does not exist), oldest
// first, and hands every shard record to `on_record` (shard index, record
// checked against `dim`), stopping at its first error. A torn tail is
// dropped. Damage before the tail is DataLossError naming the file and
// offset; with `salvage` the read stops there instead. Returns the numbers
// of the files found: the caller makes the shard logs durable, then removes
// them (RemoveCommitLogFiles).
[[nodiscard]] absl::StatusOr<std::vector<uint64_t>> ReplayCommitLog(
    FileSystem* fs, const std::string& dir, uint32_t dim, bool salvage,
    const std::function<absl::Status(uint32_t shard, const RecordView& record)>& on_record);

// Removes the commit log files of `dir` numbered below `below`, and makes
// that durable.
[[nodiscard]] absl::Status RemoveCommitLogFiles(FileSystem* fs, const std::string& dir,
                                                uint64_t below);

class CommitLog {
 public:
  // A log in `dir`, which takes no call but Start until Start succeeded.
  CommitLog(FileSystem* fs, std::string dir, CommitLogOptions options)
      : fs_(fs), dir_(std::move(dir)), options_(std::move(options)) {}

  // Starts file `number` in `dir` (which must exist and hold no file
  // numbered at or above it). Call once.
  [[nodiscard]] absl::Status Start(uint64_t number);

  // Appends a copy of the record `finish` finishes in shard `shard`'s log
  // (begun there, room reserved, payload stored). Room for it here
  // (`record_bytes`: the shard record's size, header and padding included)
  // is reserved first: on a full disk this returns ResourceExhaustedError
  // without calling `finish`, and the shard's record stays unfinished (it
  // takes no room; WalWriter::BeginRecord). Else `finish` finishes the
  // record and returns its bytes (WalWriter::last_record). Returns the
  // position SyncTo takes. A failed sync of this log is sticky.
  [[nodiscard]] absl::StatusOr<uint64_t> Append(uint32_t shard, size_t record_bytes,
                                                absl::FunctionRef<std::string_view()> finish);
  // One shard record of AppendAll, as Append's arguments.
  struct ShardRecord {
    uint32_t shard;
    size_t record_bytes;
    absl::FunctionRef<std::string_view()> finish;
  };
  // Appends several shard records (one PutBatch over several shards), in
  // order. Room for all of them is reserved first: on a full disk no
  // `finish` is called. After that only a sticky failure (a failed sync) can
  // stop it part way; the records whose `finish` ran are then in their shard
  // logs and here. Returns the position SyncTo takes for all of them.
  [[nodiscard]] absl::StatusOr<uint64_t> AppendAll(std::span<const ShardRecord> records);

  // Returns once every record up to `lsn` is durable (group commit).
  [[nodiscard]] absl::Status SyncTo(uint64_t lsn) { return writer_->SyncTo(lsn); }
  // Bracket a write call that will wait in SyncTo (WalWriter::WriterEnter).
  void WriterEnter() { writer_->WriterEnter(); }
  void WriterExit() { writer_->WriterExit(); }

  // When the log moved to a new file since the last checkpoint: makes the
  // shard logs durable (CommitLogOptions::sync_shard_logs), then removes the
  // files before the current one. An error leaves the files for the next
  // checkpoint (a failed shard log sync is sticky in that log).
  [[nodiscard]] absl::Status MaybeCheckpoint();

  // Closes the current file, unsynced: call once the shard logs are durable
  // (then every file may be removed). Waits for a running checkpoint; later
  // ones do nothing.
  [[nodiscard]] absl::Status Close();

 private:
  uint64_t current_file_number() const;

  FileSystem* const fs_;
  const std::string dir_;
  const CommitLogOptions options_;
  // Serializes appends (WalWriter::BeginRecord/FinishRecord).
  mutable Mutex mu_;
  std::unique_ptr<WalWriter> writer_;
  std::atomic<bool> checkpoint_due_{false};
  Mutex checkpoint_mu_;  // one checkpoint at a time; Close waits for it
  // Set by Close: a checkpoint after it could remove the files of a log
  // started later in the same directory (a collection dropped and created
  // again, a database closed and opened again).
  bool closed_ ABSL_GUARDED_BY(checkpoint_mu_) = false;
};

}  // namespace shoal::wal

#endif  // SHOAL_SRC_WAL_COMMIT_LOG_H_

// Copyright 2026 The shoal Authors.
//
// One shard of a collection: its write-ahead log and its memtable. Every
// write is appended to the log and applied to the memtable under the shard's
// mutex, so the log order is the apply order; searches and gets share the
// mutex in reader mode. Writers on different shards never touch the same
// lock. With FsyncPolicy::kAlways a writer waits for the log sync after
// releasing the mutex, so concurrent writers share one fdatasync.
//
// Thread-safe.

#ifndef SHOAL_SRC_SHARD_SHARD_H_
#define SHOAL_SRC_SHARD_SHARD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/mutex.h"
#include "memtable/memtable.h"
#include "shoal/options.h"
#include "util/background_worker.h"
#include "util/file_system.h"
#include "util/top_k.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace shoal {

struct ShardOptions {
  uint32_t index = 0;  // this shard's number within its collection
  uint32_t dim = 0;
  Metric metric = Metric::kL2;
  FsyncPolicy fsync = FsyncPolicy::kNever;
  bool salvage_corrupt_wal = false;
  size_t wal_file_bytes = 64 << 20;
  size_t arena_block_bytes = 4 << 20;
  size_t memtable_bytes = 64 << 20;
  bool preallocate = false;
  // Faults in log space and arena blocks ahead of writers; may be null.
  BackgroundWorker* prefaulter = nullptr;
};

// What recovery found, for logs and tests.
struct RecoveryStats {
  uint64_t records = 0;
  uint64_t ops = 0;
  bool torn_tail_dropped = false;
  bool salvaged = false;  // corruption skipped under salvage_corrupt_wal
};

class Shard {
 public:
  // Opens the shard stored in `dir` (created when absent) and replays its log.
  // DataLossError when the log is damaged before its tail, unless
  // options.salvage_corrupt_wal.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Shard>> Open(
      FileSystem* fs, const std::string& dir, const ShardOptions& options);
  ~Shard();

  // Upserts ids[i] -> rows[i] (dim floats each, already validated and, for
  // kCosine, normalized). In order: a repeated id's last row wins.
  [[nodiscard]] absl::Status Put(std::span<const uint64_t> ids,
                                 std::span<const float* const> rows);
  [[nodiscard]] absl::Status Delete(std::span<const uint64_t> ids);

  // Copies the live vector of `id` into *out. NotFound when absent/deleted.
  [[nodiscard]] absl::Status Get(uint64_t id, std::vector<float>* out) const;
  // Offers this shard's live vectors to `top`.
  void Search(const float* query, TopK* top) const;

  // Makes everything appended so far durable.
  [[nodiscard]] absl::Status SyncWal();
  // Syncs, trims and closes the log. Later writes return FailedPrecondition.
  [[nodiscard]] absl::Status Close();

  const RecoveryStats& recovery_stats() const { return recovery_; }
  size_t live_count() const;

 private:
  Shard(FileSystem* fs, std::string dir, const ShardOptions& options);
  // Where the log is damaged: the valid prefix ends at `offset` of file
  // `numbers[file]`.
  struct Damage {
    size_t file = 0;
    size_t offset = 0;
    std::string message;
  };
  absl::Status Recover();
  // Replays the log files `numbers` (sorted) into the memtable. Sets *damage
  // and stops when the log is damaged before its tail. On success leaves the
  // writer's resume point in *resume_number / *resume_offset.
  absl::Status ReplayLog(const std::vector<uint64_t>& numbers, Damage* damage,
                         uint64_t* resume_number, size_t* resume_offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ApplyRecord(const wal::RecordView& r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends one record and applies it. REQUIRES: mu_ held.
  absl::StatusOr<uint64_t> AppendPut(std::span<const uint64_t> ids,
                                     std::span<const float* const> rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AfterAppend(uint64_t lsn);
  class SyncingWriter;

  FileSystem* const fs_;
  const std::string dir_;
  const ShardOptions options_;
  RecoveryStats recovery_;

  mutable Mutex mu_;
  std::unique_ptr<wal::WalWriter> wal_;  // set by Open; closed by Close
  std::unique_ptr<MemTable> memtable_ ABSL_GUARDED_BY(mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace shoal

#endif  // SHOAL_SRC_SHARD_SHARD_H_

// Copyright 2026 The shoal Authors.
//
// What a shard is opened with (ShardOptions) and what its recovery found
// (RecoveryStats); the shard itself is shard/shard.h.

#ifndef SHOAL_SRC_SHARD_SHARD_OPTIONS_H_
#define SHOAL_SRC_SHARD_SHARD_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "segment/segment.h"
#include "shoal/options.h"
#include "util/background_worker.h"
#include "util/memory_budget.h"
#include "util/thread_pool.h"
#include "version/manifest.h"
#include "version/file_deleter.h"
#include "version/manifest_editor.h"
#include "wal/commit_log.h"
#include "wal/wal_writer.h"

namespace shoal {

class Shard;

// What a shard is opened with: its database's and its collection's options
// as they are (no field copied), who it is, and what it shares with the
// other shards of its database (pointers not owned; they outlive it).
struct ShardOptions {
  Options db;                      // fsync, logs, memtables, salvage
  CollectionOptions collection;    // dim, metric, graph (shard_count resolved)
  std::string collection_name;
  uint64_t collection_incarnation = 0;  // for ManifestEditor::Apply
  uint32_t index = 0;              // this shard's number within its collection
  ShardMeta meta;                  // this shard's entry in the manifest

  // Shared by the collection's shards (group commit); may be null.
  wal::GroupCommitCounters* group_commit = nullptr;
  // kAlways with Options::collection_commit_log: the collection's commit log,
  // opened after the shards (no write comes before). Every record goes
  // to it too, and a write waits for its sync instead of this
  // shard's log's, which is then mapped (commit_log.h). May be null.
  wal::CommitLog* commit_log = nullptr;
  // Faults in log space and arena blocks ahead of writers; may be null.
  BackgroundWorker* prefaulter = nullptr;
  // Runs flushes; may be null (then only Flush() builds segments, inline).
  BackgroundWorker* flusher = nullptr;
  // Runs background compactions (Options::compaction); may be null (then
  // only Compact() merges).
  BackgroundWorker* compactor = nullptr;
  ThreadPool* pool = nullptr;           // threads for graph builds
  ManifestEditor* manifest = nullptr;   // REQUIRED
  // Removes obsolete log files and segments, held off while a checkpoint
  // copies them (version/file_deleter.h); may be null (removed at once).
  FileDeleter* file_deleter = nullptr;
  // Options::memory_budget_bytes, shared by the DB's segments; may be null.
  std::shared_ptr<MemoryBudget> memory_budget;

  // ---- Shared segments (SegmentMeta::shared: one graph for several shards) ----
  // Where they live: the collection's directory.
  std::string shared_dir;
  // The shared segments meta names, opened once by the collection (by
  // number). May be null when meta names none.
  const absl::flat_hash_map<uint64_t, std::shared_ptr<Segment>>* shared_segments = nullptr;
  // Whether the collection merges the shards' segments itself now (one
  // graph while it is small, FoldAcross): the shard then merges none of its
  // own (no background compaction, no fold at flush time). May be empty
  // (never).
  std::function<bool()> collection_folds;
  // Called after flushes published segments (not under any shard lock). May
  // be empty.
  std::function<void()> after_flush;
  // While collection_folds(): flushes the shard's oldest frozen memtable by
  // a fold across the shards (FoldAcross with it as `flushing`), so that
  // its vectors go into the collection's graph once instead of a graph of
  // their own first. Returns whether it did (false: the shard flushes it
  // itself, e.g. while the collection opens). May be empty (never).
  std::function<absl::StatusOr<bool>(Shard*)> fold_flush;
  // Called once this shard's manifest entry no longer names shared segment
  // `number`: the collection removes the file when no shard names it. May
  // be empty.
  std::function<void(uint64_t)> release_shared;
};

// What recovery found, for logs and tests.
struct RecoveryStats {
  uint64_t records = 0;
  uint64_t ops = 0;
  bool torn_tail_dropped = false;
  bool salvaged = false;  // corruption skipped under salvage_corrupt_wal
  uint64_t from_commit_log = 0;  // records the log lacked, appended by ApplyCommitted
};

}  // namespace shoal

#endif  // SHOAL_SRC_SHARD_SHARD_OPTIONS_H_

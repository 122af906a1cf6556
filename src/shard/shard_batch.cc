// Copyright 2026 The shoal Authors.
//
// Shard::PutAcross: one PutBatch over several shards, all of it or none.
//
// The steps, each over every part before the next begins:
//   1. admit: back-pressure waited out shard by shard (no other shard's lock
//      held: the flusher is shared, and a flush of one shard may queue
//      behind another's), then every shard locked in index order (so
//      batches never deadlock) and checked again without waiting;
//   2. begin: each part's record begun in its shard's log (room reserved,
//      payload stored), the shards in parallel; a failure here leaves every
//      log as it was, since a record begun and not finished takes no room;
//   3. finish: with a commit log, room for all the copies reserved there
//      first (CommitLog::AppendAll), then each shard's record finished and
//      copied; without, each record finished;
//   4. apply: the finished parts go into their memtables; unlock;
//   5. sync, under kAlways: one sync of the commit log, or each shard's log.

#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "shard/shard.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

// Below this many floats the copies run on the calling thread: handing work
// to the pool costs more than it saves. The parts handed to the pool are
// written through the log files (Shard::BeginPuts); on the calling thread
// they are stored through the mappings, whose pages the prefaulter thread
// zero-fills meanwhile on another core. (1M x 128-d on /dev/shm, 2 shards,
// cold rows: PutBatch(10000) 0.28-0.30 s written through on the pool,
// 0.33-0.35 s stored on the calling thread; PutBatch(1000) 0.26-0.28 s
// stored on the calling thread, 0.34-0.38 s on the pool.)
constexpr size_t kParallelFloats = 1 << 16;

}  // namespace

absl::Status Shard::PutAcross(std::span<const BatchPart> parts, ThreadPool* pool) {
  if (parts.empty()) return absl::OkStatus();
  const ShardOptions& options = parts.front().shard->options_;
  const size_t dim = options.collection.dim;
  // Parts whose records have no parts beyond their vectors are plain puts.
  std::vector<BatchPart> plain;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].extras.empty() && NoneHasParts(parts[i].extras)) {
      if (plain.empty()) plain.assign(parts.begin(), parts.end());
      plain[i].extras = {};
    }
  }
  if (!plain.empty()) parts = plain;
  size_t floats = 0;
  bool one_record_each = true;
  for (const BatchPart& p : parts) {
    if (!p.extras.empty() && p.extras.size() != p.ids.size()) {
      return absl::InvalidArgumentError("a batch part's ids and extras differ in length");
    }
    floats += p.ids.size() * dim;
    size_t extras_bytes;
    one_record_each &= p.extras.empty()
                           ? p.ids.size() <= RowsPerRecord(dim)
                           : RecordsPerRecord(p.extras, dim, &extras_bytes) == p.ids.size();
  }
  if (!one_record_each) {
    // Parts over kMaxRecordPayload (their extras counted) take several
    // records each: written part by part (docs/guarantees.md names this
    // exception).
    for (const BatchPart& p : parts) {
      SHOAL_RETURN_IF_ERROR(p.shard->Put(p.ids, p.rows, p.extras));
    }
    return absl::OkStatus();
  }
  if (floats < kParallelFloats) pool = nullptr;
  auto for_each_part = [&](const std::function<void(size_t)>& fn) {
    if (pool != nullptr) {
      pool->ParallelFor(parts.size(), fn);
    } else {
      for (size_t i = 0; i < parts.size(); ++i) fn(i);
    }
  };

  // 1. Admit.
  wal::CommitLog* const commit = options.commit_log;
  std::vector<std::optional<SyncingWriter>> syncing(parts.size());
  auto unlock_all = [&] {
    for (const BatchPart& p : parts) p.shard->mu_.Unlock();
  };
  while (true) {
    for (const BatchPart& p : parts) {
      MutexLock lock(&p.shard->mu_);
      SHOAL_RETURN_IF_ERROR(p.shard->AdmitLocked(/*may_wait=*/true));
    }
    for (const BatchPart& p : parts) p.shard->mu_.Lock();
    bool must_wait = false;
    absl::Status admitted;
    for (const BatchPart& p : parts) {
      if (admitted.ok() && !must_wait) admitted = p.shard->AdmitLocked(false, &must_wait);
    }
    if (admitted.ok() && !must_wait) break;
    unlock_all();
    SHOAL_RETURN_IF_ERROR(admitted);
  }
  // Every shard is locked from here until the parts are applied (also when
  // an allocation throws on the way).
  bool locked = true;
  absl::Cleanup unlock_on_exit = [&] {
    if (locked) unlock_all();
  };
  // Counted for the group commit from here (as in Put): one writer of the
  // commit log, or of each shard's log.
  for (size_t i = 0; i < parts.size(); ++i) {
    if (commit == nullptr || i == 0) syncing[i].emplace(parts[i].shard);
  }

  // 2. Begin, each shard's log on its own (in parallel: a record's room is
  // reserved, and its payload stored, at memory speed).
  std::vector<absl::Status> begun(parts.size());
  for_each_part([&](size_t i) {
    const BatchPart& p = parts[i];
    begun[i] = p.shard->BeginPuts(p.ids, p.rows, p.extras, /*write_through=*/pool != nullptr);
  });
  for (absl::Status& s : begun) SHOAL_RETURN_IF_ERROR(std::move(s));

  // 3. Finish.
  std::vector<uint64_t> lsns(parts.size(), 0);
  std::vector<bool> finished(parts.size(), false);
  std::vector<const float*> logged(parts.size(), nullptr);
  auto finish = [&](size_t i) {
    Shard* shard = parts[i].shard;
    lsns[i] = shard->wal_->FinishRecord(PutsType(parts[i].extras), shard->next_sequence_,
                                        static_cast<uint32_t>(parts[i].ids.size()),
                                        static_cast<uint32_t>(dim));
    logged[i] = shard->LoggedRowsLocked(parts[i].ids.size());
    finished[i] = true;
  };
  absl::Status status;
  uint64_t commit_lsn = 0;
  if (commit != nullptr) {
    // The callables the records refer to outlive AppendAll.
    std::vector<std::function<std::string_view()>> finishers;
    finishers.reserve(parts.size());
    std::vector<wal::CommitLog::ShardRecord> records;
    records.reserve(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      finishers.push_back([&, i] {
        finish(i);
        return parts[i].shard->wal_->last_record();
      });
      records.push_back({parts[i].shard->options_.index,
                         wal::AlignRecord(wal::kRecordHeaderSize +
                                          PutsPayloadSize(parts[i].ids.size(), dim,
                                                          parts[i].extras)),
                         finishers.back()});
    }
    absl::StatusOr<uint64_t> appended = commit->AppendAll(records);
    if (appended.ok()) {
      commit_lsn = *appended;
    } else {
      status = appended.status();
    }
  } else {
    for (size_t i = 0; i < parts.size(); ++i) finish(i);
  }

  // 4. Apply what was finished: the memtables hold what the logs hold.
  for_each_part([&](size_t i) {
    if (finished[i]) {
      parts[i].shard->ApplyPutsLocked(parts[i].ids, parts[i].rows, parts[i].extras, logged[i]);
    }
  });
  for (const BatchPart& p : parts) p.shard->MaybeFreezeLocked();
  unlock_all();
  locked = false;
  SHOAL_RETURN_IF_ERROR(status);

  // 5. Sync.
  if (options.db.fsync != FsyncPolicy::kAlways) return absl::OkStatus();
  if (commit != nullptr) return parts.front().shard->AfterAppend(commit_lsn, &syncing.front());
  std::vector<absl::Status> synced(parts.size());
  for_each_part([&](size_t i) { synced[i] = parts[i].shard->AfterAppend(lsns[i], &syncing[i]); });
  for (absl::Status& s : synced) SHOAL_RETURN_IF_ERROR(std::move(s));
  return absl::OkStatus();
}

}  // namespace shoal

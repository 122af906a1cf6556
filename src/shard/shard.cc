// Copyright 2026 The shoal Authors.

#include "shard/shard.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/debug_timing.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

// Writers wait while this many memtables wait to be flushed: memory stays
// bounded when writes outpace graph builds.
constexpr size_t kMaxFrozen = 2;

bool ParseSegmentFileName(std::string_view name, uint64_t* number) {
  constexpr std::string_view kPrefix = "seg-", kSuffix = ".vamana";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix) ||
      name.size() <= kPrefix.size() + kSuffix.size()) {
    return false;
  }
  uint64_t n = 0;
  for (char c : name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size())) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *number = n;
  return true;
}

}  // namespace

// The sources a reader looks at, newest first, besides the active memtable.
struct Shard::Snapshot {
  std::shared_ptr<const MemTable> active;
  struct Source {
    std::shared_ptr<const MemTable> mem;  // a frozen memtable, or
    std::shared_ptr<Segment> segment;     // a segment
    uint64_t max_sequence;
  };
  std::vector<Source> older;  // newest first
};

Shard::Shard(FileSystem* fs, std::string dir, const ShardOptions& options)
    : fs_(fs), dir_(std::move(dir)), options_(options) {
  active_ = NewMemTable();
  flushed_sequence_ = options.meta.flushed_sequence;
}

Shard::~Shard() { (void)Close(); }

std::unique_ptr<MemTable> Shard::NewMemTable() const {
  return std::make_unique<MemTable>(options_.dim, options_.arena_block_bytes,
                                    options_.preallocate, options_.memtable_bytes,
                                    options_.prefaulter);
}

std::string Shard::SegmentPath(uint64_t number) const {
  return JoinPath(dir_, absl::StrFormat("seg-%06d.vamana", number));
}

absl::StatusOr<std::unique_ptr<Shard>> Shard::Open(FileSystem* fs, const std::string& dir,
                                                   const ShardOptions& options) {
  SHOAL_RETURN_IF_ERROR(fs->CreateDir(dir));
  std::unique_ptr<Shard> shard(new Shard(fs, dir, options));
  SHOAL_RETURN_IF_ERROR(shard->OpenSegments());
  SHOAL_RETURN_IF_ERROR(shard->Recover());
  return shard;
}

absl::Status Shard::OpenSegments() {
  MutexLock lock(&mu_);
  for (const SegmentMeta& meta : options_.meta.segments) {
    SHOAL_ASSIGN_OR_RETURN(
        std::shared_ptr<Segment> segment,
        Segment::Open(fs_, SegmentPath(meta.number), options_.dim, options_.metric));
    segments_.push_back({std::move(segment), meta});
  }
  std::sort(segments_.begin(), segments_.end(), [](const auto& a, const auto& b) {
    return a.meta.max_sequence < b.meta.max_sequence;
  });
  // Files no manifest entry names: segments of a flush or bulk load that
  // crashed before its manifest edit, and temporary files.
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
  for (const std::string& name : names) {
    uint64_t number;
    const bool segment = ParseSegmentFileName(name, &number);
    const bool referenced =
        segment && std::any_of(options_.meta.segments.begin(), options_.meta.segments.end(),
                               [&](const SegmentMeta& m) { return m.number == number; });
    if ((segment && !referenced) || name.ends_with(".tmp")) {
      SHOAL_RETURN_IF_ERROR(fs_->RemoveFile(JoinPath(dir_, name)));
    }
  }
  return absl::OkStatus();
}

absl::Status Shard::ApplyRecord(const wal::RecordView& r, uint64_t file_number) {
  const size_t row_bytes = size_t{options_.dim} * sizeof(float);
  recovery_.records += 1;
  recovery_.ops += r.count;
  next_sequence_ = r.sequence + r.count;
  switch (r.type) {
    case wal::RecordType::kPut: {
      active_->Reserve(r.count);
      std::vector<float> row(options_.dim);  // the log's floats may be unaligned
      for (uint32_t i = 0; i < r.count; ++i) {
        std::memcpy(row.data(), r.vectors + i * row_bytes, row_bytes);
        active_->Put(DecodeFixed64(r.ids + size_t{i} * 8), row.data());
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
      if (!active_->empty()) {
        frozen_.push_back({std::shared_ptr<const MemTable>(std::move(active_)),
                           active_min_sequence_, r.sequence - 1, file_number - 1});
        active_ = NewMemTable();
      }
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
  uint64_t after_segments = 0;
  for (const SegmentSource& s : segments_) {
    if (s.meta.max_sequence > flushed_sequence_) {
      after_segments = std::max(after_segments, s.meta.max_sequence + 1);
    }
  }
  bool first = true;
  std::optional<Damage> torn;  // an earlier file whose tail was torn
  // Tails to drop, once every file has been read: a tail that a later file
  // shows to be damage must stay for the DataLossError (and the next Open).
  std::vector<std::pair<std::string, size_t>> cuts;
  for (size_t i = 0; i < numbers.size(); ++i) {
    const std::string path = JoinPath(dir_, wal::WalFileName(numbers[i]));
    SHOAL_ASSIGN_OR_RETURN(std::string contents, fs_->ReadFile(path));
    std::optional<Damage> gap;
    absl::StatusOr<wal::ReadResult> read = wal::ReadWalFile(
        contents, path, options_.index, numbers[i], options_.dim,
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
    if (wal::ParseWalFileName(name, &number)) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());

  uint64_t resume_number = numbers.empty() ? 1 : numbers.back() + 1;
  size_t resume_offset = 0;  // 0: create the file
  Damage damage;
  SHOAL_RETURN_IF_ERROR(ReplayLog(numbers, &damage, &resume_number, &resume_offset));
  if (!damage.message.empty()) {
    if (!options_.salvage_corrupt_wal) {
      return absl::DataLossError(absl::StrCat(
          damage.message,
          " (Options::salvage_corrupt_wal keeps the records before the damage)"));
    }
    // Salvage: cut the log at the damage, set later files aside, and replay
    // the clean prefix from scratch.
    const std::string path = JoinPath(dir_, wal::WalFileName(numbers[damage.file]));
    SHOAL_RETURN_IF_ERROR(fs_->Truncate(path, damage.offset));
    for (size_t j = damage.file + 1; j < numbers.size(); ++j) {
      const std::string later = JoinPath(dir_, wal::WalFileName(numbers[j]));
      SHOAL_RETURN_IF_ERROR(fs_->Rename(later, later + ".dropped"));
    }
    SHOAL_RETURN_IF_ERROR(fs_->SyncDir(dir_));
    numbers.resize(damage.file + 1);
    active_ = NewMemTable();
    frozen_.clear();
    recovery_ = RecoveryStats{};
    recovery_.salvaged = true;
    Damage again;
    SHOAL_RETURN_IF_ERROR(ReplayLog(numbers, &again, &resume_number, &resume_offset));
    if (!again.message.empty()) return absl::DataLossError(again.message);
  }
  // Sequences taken by bulk loads whose barrier records were flushed away.
  for (const SegmentSource& s : segments_) {
    next_sequence_ = std::max(next_sequence_, s.meta.max_sequence + 1);
  }
  if (active_->empty()) active_min_sequence_ = next_sequence_;

  wal::WalWriterOptions wal_options;
  wal_options.shard = options_.index;
  wal_options.file_bytes = options_.wal_file_bytes;
  wal_options.populate = options_.preallocate;
  // With a commit log, writes wait for its syncs, not this log's, which is
  // then mapped (so a process that dies leaves every record in it) and
  // synced only by checkpoints, rotations and Close: its pages may be
  // dirtied ahead of the writer, to spare the writer (holding the shard's
  // and the commit log's locks) a page fault every few records.
  const bool synced_per_write =
      options_.fsync == FsyncPolicy::kAlways && options_.commit_log == nullptr;
  wal_options.direct_io = synced_per_write && options_.direct_io_log;
  wal_options.group = synced_per_write ? options_.group_commit : nullptr;
  wal_options.dirty_ahead = options_.commit_log != nullptr;
  wal_options.prefaulter = options_.prefaulter;
  SHOAL_ASSIGN_OR_RETURN(wal_, wal::WalWriter::Open(fs_, dir_, wal_options,
                                                    resume_number, resume_offset));
  if (recovery_.torn_tail_dropped || recovery_.salvaged) {
    // Make the truncation durable before new records land past it.
    SHOAL_RETURN_IF_ERROR(wal_->SyncFile());
  }
  MaybeFreezeLocked();
  if (!frozen_.empty()) ScheduleFlush();
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
    SHOAL_RETURN_IF_ERROR(ApplyRecord(r, wal_->current_file_number()));
    recovery_.from_commit_log += 1;
    MaybeFreezeLocked();
    return absl::OkStatus();
  }
  if (options_.salvage_corrupt_wal) {
    // The log was cut at damage (salvage): the records of the commit log
    // past the cut cannot follow what is left. Dropped, like the log's.
    recovery_.salvaged = true;
    return absl::OkStatus();
  }
  return absl::DataLossError(absl::StrCat(
      "collection ", options_.collection, " shard ", options_.index,
      ": the commit log's record at offset ", r.offset, " holds sequences ", r.sequence, "..",
      r.sequence + r.count - 1, ", but the shard's log ends at ", next_sequence_ - 1,
      ": the records between are lost"));
}

absl::StatusOr<uint64_t> Shard::AppendRecord(wal::RecordType type, uint32_t count,
                                             uint32_t dim, size_t payload_length,
                                             absl::FunctionRef<void(char*)> fill) {
  // A rotation of this log (and its sync) and the copy of the payload
  // happen here, outside the commit log's mutex, which every writer of the
  // collection takes.
  SHOAL_ASSIGN_OR_RETURN(char* payload, wal_->BeginRecord(payload_length));
  fill(payload);
  if (options_.commit_log == nullptr) {
    return wal_->FinishRecord(type, next_sequence_, count, dim);
  }
  // A record begun but not finished takes no room: when the commit log
  // fails, the next record starts at the same offset.
  uint64_t lsn = 0;
  return options_.commit_log->Append(
      options_.index, wal::AlignRecord(wal::kRecordHeaderSize + payload_length), [&] {
        lsn = wal_->FinishRecord(type, next_sequence_, count, dim);
        return wal_->last_record();
      });
}

absl::StatusOr<uint64_t> Shard::AppendPut(std::span<const uint64_t> ids,
                                          std::span<const float* const> rows,
                                          PutTiming* timing) {
  const size_t dim = options_.dim;
  const size_t row_bytes = dim * sizeof(float);
  const size_t per_record = RowsPerRecord(dim);
  uint64_t lsn = 0;
  for (size_t first = 0; first < ids.size(); first += per_record) {
    const size_t n = std::min(per_record, ids.size() - first);
    const int64_t t0 = timing != nullptr ? timing::NowMicros() : 0;
    SHOAL_ASSIGN_OR_RETURN(
        lsn, AppendRecord(wal::RecordType::kPut, static_cast<uint32_t>(n), options_.dim,
                          wal::PutPayloadSize(n, dim), [&](char* payload) {
                            std::memcpy(payload, ids.data() + first, n * sizeof(uint64_t));
                            char* out = payload + n * sizeof(uint64_t);
                            for (size_t i = 0; i < n; ++i) {
                              std::memcpy(out + i * row_bytes, rows[first + i], row_bytes);
                            }
                          }));
    next_sequence_ += n;
    const int64_t t1 = timing != nullptr ? timing::NowMicros() : 0;
    if (n > 1) active_->Reserve(n);
    for (size_t i = 0; i < n; ++i) active_->Put(ids[first + i], rows[first + i]);
    if (timing != nullptr) {
      timing->wal_us += t1 - t0;
      timing->memtable_us += timing::NowMicros() - t1;
    }
  }
  return lsn;
}

absl::Status Shard::AfterAppend(uint64_t lsn, std::optional<SyncingWriter>* syncing) {
  if (options_.fsync != FsyncPolicy::kAlways) return absl::OkStatus();
  if (options_.commit_log == nullptr) return wal_->SyncTo(lsn);
  SHOAL_RETURN_IF_ERROR(options_.commit_log->SyncTo(lsn));
  // No longer a writer the commit log's gathers wait for, while this one
  // may sync every shard log.
  syncing->reset();
  // This write is durable whatever the checkpoint does: a failure leaves the
  // commit log's files for the next one, and a failed sync of a shard's log
  // fails that shard's later writes (WalWriter::BeginRecord).
  (void)options_.commit_log->MaybeCheckpoint();
  return absl::OkStatus();
}

absl::Status Shard::Put(std::span<const uint64_t> ids, std::span<const float* const> rows,
                        int64_t route_us) {
  std::optional<SyncingWriter> syncing;
  PutTiming put_timing;
  PutTiming* timed = timing::kEnabled ? &put_timing : nullptr;
  const int64_t start = timed != nullptr ? timing::NowMicros() : 0;
  uint64_t lsn;
  {
    MutexLock lock(&mu_);
    SHOAL_RETURN_IF_ERROR(AdmitLocked(/*may_wait=*/true));
    // Counted for the group commit only from here: a writer held back above
    // for a flush (a graph build) would make every gather wait it out.
    syncing.emplace(this);
    SHOAL_ASSIGN_OR_RETURN(lsn, AppendPut(ids, rows, timed));
    MaybeFreezeLocked();
  }
  if (timed == nullptr) return AfterAppend(lsn, &syncing);
  const int64_t before_sync = timing::NowMicros();
  absl::Status s = AfterAppend(lsn, &syncing);
  const int64_t end = timing::NowMicros();
  timing::Emit("put", "collection,shard,vectors,route_us,wal_us,memtable_us,sync_us,total_us",
               absl::StrCat(options_.collection, ",", options_.index, ",", ids.size(), ",",
                            route_us, ",", put_timing.wal_us, ",", put_timing.memtable_us, ",",
                            end - before_sync, ",", end - start + route_us));
  return s;
}

absl::Status Shard::AdmitLocked(bool may_wait, bool* must_wait) {
  while (true) {
    if (closed_) return absl::FailedPreconditionError("database is closed");
    if (frozen_.size() < kMaxFrozen) return absl::OkStatus();
    // Without a flusher only Flush() builds segments: nothing to wait for.
    if (options_.flusher == nullptr) return flush_status_;
    if (!flush_status_.ok() && !flush_running_ && !flush_retry_scheduled_) {
      // The last flush failed (a full disk, an I/O error).
      if (std::chrono::steady_clock::now() < flush_retry_at_) return flush_status_;
      flush_retry_scheduled_ = true;
      ScheduleFlush();
    }
    if (!may_wait) {
      *must_wait = true;
      return absl::OkStatus();
    }
    flushed_.Wait(&mu_);
  }
}

absl::Status Shard::Delete(std::span<const uint64_t> ids) {
  std::optional<SyncingWriter> syncing(this);
  uint64_t lsn;
  {
    MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("database is closed");
    SHOAL_ASSIGN_OR_RETURN(
        lsn, AppendRecord(wal::RecordType::kDelete, static_cast<uint32_t>(ids.size()), 0,
                          ids.size() * sizeof(uint64_t), [&](char* payload) {
                            std::memcpy(payload, ids.data(), ids.size() * sizeof(uint64_t));
                          }));
    next_sequence_ += ids.size();
    for (uint64_t id : ids) active_->Delete(id);
    MaybeFreezeLocked();
  }
  return AfterAppend(lsn, &syncing);
}

void Shard::MaybeFreezeLocked() {
  if (active_->DataBytes() < options_.memtable_bytes) return;
  // A failure leaves the memtable active (and growing); the next write tries
  // again, and Flush() reports it.
  absl::Status s = FreezeLocked();
  if (!s.ok() && flush_status_.ok()) flush_status_ = s;
}

absl::Status Shard::FreezeLocked() {
  if (active_->empty()) return absl::OkStatus();
  const int64_t start = timing::kEnabled ? timing::NowMicros() : 0;
  SHOAL_ASSIGN_OR_RETURN(uint64_t last_file, wal_->Rotate());
  frozen_.push_back({std::shared_ptr<const MemTable>(std::move(active_)), active_min_sequence_,
                     next_sequence_ - 1, last_file});
  active_ = NewMemTable();
  active_min_sequence_ = next_sequence_;
  ScheduleFlush();
  if (timing::kEnabled) {
    timing::Emit("freeze", "collection,shard,frozen_memtables,total_us",
                 absl::StrCat(options_.collection, ",", options_.index, ",", frozen_.size(), ",",
                              timing::NowMicros() - start));
  }
  return absl::OkStatus();
}

void Shard::ScheduleFlush() {
  if (options_.flusher == nullptr) return;
  pending_tasks_.fetch_add(1);
  options_.flusher->Schedule([this] {
    (void)RunFlushes();
    // The last touch of `this`: Close waits for the count to reach zero.
    pending_tasks_.fetch_sub(1);
  });
}

absl::Status Shard::RunFlushes() {
  {
    MutexLock lock(&mu_);
    while (flush_running_) flushed_.Wait(&mu_);
    flush_running_ = true;
    flush_retry_scheduled_ = false;
  }
  absl::Status s;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (frozen_.empty() || closing_) break;
    }
    try {
      s = FlushOldest();
    } catch (const std::bad_alloc&) {
      s = absl::ResourceExhaustedError("out of memory while flushing a memtable");
    }
    if (!s.ok()) break;
  }
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

absl::Status Shard::FlushOldest() {
  const int64_t start = timing::NowMicros();
  Frozen f;
  {
    MutexLock lock(&mu_);
    if (frozen_.empty()) return absl::OkStatus();
    f = frozen_.front();
  }
  // The frozen memtable is immutable: read it without the lock.
  std::vector<uint64_t> ids, tombstones;
  std::vector<float> rows;
  rows.reserve(f.mem->live_count() * options_.dim);
  f.mem->ForEach(
      [&](uint64_t id, const float* v) {
        ids.push_back(id);
        rows.insert(rows.end(), v, v + options_.dim);
      },
      [&](uint64_t id) { tombstones.push_back(id); });
  const std::vector<uint64_t> sequences(ids.size(), f.max_sequence);
  const std::vector<uint64_t> tombstone_sequences(tombstones.size(), f.max_sequence);
  SegmentContents contents;
  contents.dim = options_.dim;
  contents.metric = options_.metric;
  contents.ids = ids;
  contents.sequences = sequences;
  contents.vectors = rows.data();
  contents.tombstone_ids = tombstones;
  contents.tombstone_sequences = tombstone_sequences;
  SegmentBuildOptions build;
  build.graph = options_.graph;

  const uint64_t number = options_.manifest->NewFileNumber();
  const std::string path = SegmentPath(number);
  const int64_t collected = timing::NowMicros();
  SegmentBuildStats build_stats;
  SHOAL_RETURN_IF_ERROR(BuildSegment(fs_, options_.pool, path, contents, build, &build_stats));
  absl::StatusOr<std::shared_ptr<Segment>> segment =
      Segment::Open(fs_, path, options_.dim, options_.metric);
  const int64_t built = timing::NowMicros();
  SegmentMeta meta{number, f.min_sequence, f.max_sequence, ids.size(), tombstones.size()};
  ShardEdit edit;
  edit.shard = options_.index;
  edit.add.push_back(meta);
  edit.flushed_sequence = f.max_sequence;
  absl::Status s = segment.status();
  if (s.ok()) {
    s = options_.manifest->Apply(options_.collection, options_.collection_incarnation,
                                 {&edit, 1});
  }
  if (!s.ok()) {
    // In doubt, MANIFEST may name the file: it stays.
    if (!ManifestWriteInDoubt(s)) (void)fs_->RemoveFile(path);
    return s;
  }
  {
    MutexLock lock(&mu_);
    frozen_.pop_front();
    SegmentSource source{std::move(segment).value(), meta};
    auto at = std::upper_bound(segments_.begin(), segments_.end(), meta.max_sequence,
                               [](uint64_t seq, const SegmentSource& x) {
                                 return seq < x.meta.max_sequence;
                               });
    segments_.insert(at, std::move(source));
    flushed_sequence_ = std::max(flushed_sequence_, f.max_sequence);
    flushed_.SignalAll();
  }
  RemoveLogFilesUpTo(f.last_wal_number);
  if (timing::kEnabled) {
    const int64_t end = timing::NowMicros();
    timing::Emit("flush",
                 "collection,shard,vectors,tombstones,collect_us,medoid_us,pass1_us,pass2_us,"
                 "write_us,open_us,publish_us,total_us,distance_computations",
                 absl::StrCat(options_.collection, ",", options_.index, ",", ids.size(), ",",
                              tombstones.size(), ",", collected - start, ",",
                              static_cast<int64_t>(build_stats.medoid_seconds * 1e6), ",",
                              static_cast<int64_t>(build_stats.pass1_seconds * 1e6), ",",
                              static_cast<int64_t>(build_stats.pass2_seconds * 1e6), ",",
                              static_cast<int64_t>(build_stats.write_seconds * 1e6), ",",
                              built - collected -
                                  static_cast<int64_t>((build_stats.medoid_seconds +
                                                        build_stats.pass1_seconds +
                                                        build_stats.pass2_seconds +
                                                        build_stats.write_seconds) * 1e6),
                              ",", end - built, ",", end - start, ",",
                              build_stats.distance_computations));
  }
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
    if (wal::ParseWalFileName(name, &n) && n <= number && n < current) {
      (void)fs_->RemoveFile(JoinPath(dir_, name));
    }
  }
}

absl::Status Shard::Flush() {
  {
    MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("database is closed");
    SHOAL_RETURN_IF_ERROR(FreezeLocked());
  }
  SHOAL_RETURN_IF_ERROR(RunFlushes());
  MutexLock lock(&mu_);
  // RunFlushes stops early only when closing; otherwise what is frozen now
  // was frozen by a concurrent writer after the memtables of this call went.
  if (closing_ && !frozen_.empty()) {
    return absl::FailedPreconditionError("database is closing");
  }
  return absl::OkStatus();
}

absl::StatusOr<Shard::BulkPart> Shard::PrepareBulk() {
  BulkPart part;
  uint64_t barrier_lsn;
  {
    MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("database is closed");
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
                              const float* vectors) {
  const std::vector<uint64_t> sequences(ids.size(), part->sequence);
  SegmentContents contents;
  contents.dim = options_.dim;
  contents.metric = options_.metric;
  contents.ids = ids;
  contents.sequences = sequences;
  contents.vectors = vectors;
  SegmentBuildOptions build;
  build.graph = options_.graph;
  const std::string path = SegmentPath(part->number);
  SHOAL_RETURN_IF_ERROR(BuildSegment(fs_, options_.pool, path, contents, build));
  absl::StatusOr<std::shared_ptr<Segment>> segment =
      Segment::Open(fs_, path, options_.dim, options_.metric);
  if (!segment.ok()) {
    (void)fs_->RemoveFile(path);
    return segment.status();
  }
  part->segment = std::move(segment).value();
  part->meta = SegmentMeta{part->number, part->sequence, part->sequence, ids.size(), 0};
  return absl::OkStatus();
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
  auto at = std::upper_bound(segments_.begin(), segments_.end(), part.meta.max_sequence,
                             [](uint64_t seq, const SegmentSource& x) {
                               return seq < x.meta.max_sequence;
                             });
  segments_.insert(at, SegmentSource{part.segment, part.meta});
}

absl::Status Shard::Compact() {
  MutexLock compacting(&compact_mu_);
  SHOAL_RETURN_IF_ERROR(Flush());
  std::vector<SegmentSource> inputs;
  {
    ReaderMutexLock lock(&mu_);
    // Only segments older than every source that is not one yet (a bulk
    // part in flight, a frozen memtable a bulk load froze after Flush()
    // above): the merged segment's range spans its inputs, so it must not
    // reach past data that ranks above some of them.
    uint64_t limit = active_min_sequence_;
    if (!pending_bulk_.empty()) limit = std::min(limit, *pending_bulk_.begin());
    for (const Frozen& f : frozen_) limit = std::min(limit, f.min_sequence);
    for (const SegmentSource& x : segments_) {
      if (x.meta.max_sequence >= limit) break;
      inputs.push_back(x);
    }
  }
  uint64_t tombstones = 0;
  for (const SegmentSource& s : inputs) tombstones += s.meta.tombstones;
  if (inputs.empty() || (inputs.size() == 1 && tombstones == 0)) return absl::OkStatus();

  // Newest first: the first source that names an id decides it. Tombstones
  // only hide older data, and nothing older than these segments remains, so
  // the output has none.
  absl::flat_hash_set<uint64_t> seen;
  std::vector<uint64_t> ids, sequences;
  std::vector<float> rows;
  for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
    std::vector<uint64_t> hidden_here;
    it->segment->ForEachTombstone([&](uint64_t id, uint64_t) { hidden_here.push_back(id); });
    SHOAL_RETURN_IF_ERROR(it->segment->ForEachVector(
        [&](uint64_t id, uint64_t sequence, const float* v) {
          if (!seen.insert(id).second) return;
          ids.push_back(id);
          sequences.push_back(sequence);
          rows.insert(rows.end(), v, v + options_.dim);
        }));
    seen.insert(hidden_here.begin(), hidden_here.end());
  }
  SegmentMeta meta;
  meta.number = options_.manifest->NewFileNumber();
  meta.min_sequence = inputs.front().meta.min_sequence;
  meta.max_sequence = inputs.front().meta.max_sequence;
  for (const SegmentSource& s : inputs) {
    meta.min_sequence = std::min(meta.min_sequence, s.meta.min_sequence);
    meta.max_sequence = std::max(meta.max_sequence, s.meta.max_sequence);
  }
  meta.vectors = ids.size();
  SegmentContents contents;
  contents.dim = options_.dim;
  contents.metric = options_.metric;
  contents.ids = ids;
  contents.sequences = sequences;
  contents.vectors = rows.data();
  SegmentBuildOptions build;
  build.graph = options_.graph;
  const std::string path = SegmentPath(meta.number);
  SHOAL_RETURN_IF_ERROR(BuildSegment(fs_, options_.pool, path, contents, build));
  absl::StatusOr<std::shared_ptr<Segment>> segment =
      Segment::Open(fs_, path, options_.dim, options_.metric);
  ShardEdit edit;
  edit.shard = options_.index;
  edit.add.push_back(meta);
  for (const SegmentSource& s : inputs) edit.remove.push_back(s.meta.number);
  absl::Status s = segment.status();
  if (s.ok()) {
    s = options_.manifest->Apply(options_.collection, options_.collection_incarnation,
                                 {&edit, 1});
  }
  if (!s.ok()) {
    // In doubt, MANIFEST may name the file: it stays.
    if (!ManifestWriteInDoubt(s)) (void)fs_->RemoveFile(path);
    return s;
  }
  {
    MutexLock lock(&mu_);
    std::erase_if(segments_, [&](const SegmentSource& x) {
      return std::find(edit.remove.begin(), edit.remove.end(), x.meta.number) !=
             edit.remove.end();
    });
    auto at = std::upper_bound(segments_.begin(), segments_.end(), meta.max_sequence,
                               [](uint64_t seq, const SegmentSource& x) {
                                 return seq < x.meta.max_sequence;
                               });
    segments_.insert(at, SegmentSource{std::move(segment).value(), meta});
  }
  // Readers holding the old segments keep their mappings; the files go now.
  for (uint64_t number : edit.remove) (void)fs_->RemoveFile(SegmentPath(number));
  return absl::OkStatus();
}

absl::Status Shard::Get(uint64_t id, std::vector<float>* out) const {
  std::vector<Snapshot::Source> older;
  {
    ReaderMutexLock lock(&mu_);
    const float* v = nullptr;
    switch (active_->Get(id, &v)) {
      case MemTable::Lookup::kFound:
        out->assign(v, v + options_.dim);
        return absl::OkStatus();
      case MemTable::Lookup::kDeleted:
        return absl::NotFoundError(absl::StrCat("id ", id, " not found"));
      case MemTable::Lookup::kAbsent:
        break;
    }
    for (auto it = frozen_.rbegin(); it != frozen_.rend(); ++it) {
      older.push_back({it->mem, nullptr, it->max_sequence});
    }
    for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) {
      older.push_back({nullptr, it->segment, it->meta.max_sequence});
    }
  }
  std::stable_sort(older.begin(), older.end(), [](const auto& a, const auto& b) {
    return a.max_sequence > b.max_sequence;
  });
  for (const Snapshot::Source& source : older) {
    if (source.mem != nullptr) {
      const float* v = nullptr;
      const MemTable::Lookup found = source.mem->Get(id, &v);
      if (found == MemTable::Lookup::kFound) {
        out->assign(v, v + options_.dim);
        return absl::OkStatus();
      }
      if (found == MemTable::Lookup::kDeleted) break;
    } else {
      uint64_t sequence;
      const float* v = nullptr;
      SHOAL_ASSIGN_OR_RETURN(Segment::Lookup found, source.segment->Find(id, &sequence, &v));
      if (found == Segment::Lookup::kLive) {
        out->assign(v, v + options_.dim);
        return absl::OkStatus();
      }
      if (found == Segment::Lookup::kDeleted) break;
    }
  }
  return absl::NotFoundError(absl::StrCat("id ", id, " not found"));
}

absl::Status Shard::Search(const float* query, const SearchOptions& options,
                           TopK* top) const {
  const bool timed = timing::kEnabled;
  int64_t t = timed ? timing::NowMicros() : 0;
  std::string sources;  // with timing: "kind:us:hops:distances:sectors;..."
  Snapshot snap;
  {
    ReaderMutexLock lock(&mu_);
    // The active memtable is the newest source: nothing hides its vectors.
    active_->Search(options_.metric, query, top);
    if (timed) {
      const int64_t now = timing::NowMicros();
      absl::StrAppend(&sources, "memtable:", now - t, ":0:", active_->live_count(), ":0");
      t = now;
    }
    snap.active = active_;
    for (const Frozen& f : frozen_) snap.older.push_back({f.mem, nullptr, f.max_sequence});
    for (const SegmentSource& s : segments_) {
      snap.older.push_back({nullptr, s.segment, s.meta.max_sequence});
    }
  }
  auto emit = [&] {
    if (!timed) return;
    timing::Emit("search", "collection,shard,k,list_size,sources(kind:us:hops:distances:sectors)",
                 absl::StrCat(options_.collection, ",", options_.index, ",", options.k, ",",
                              options.list_size, ",", sources));
  };
  if (snap.older.empty()) {
    emit();
    return absl::OkStatus();
  }
  std::sort(snap.older.begin(), snap.older.end(), [](const auto& a, const auto& b) {
    return a.max_sequence > b.max_sequence;
  });
  // An id offered by older source i is hidden when the active memtable or a
  // source newer than i holds it (as a vector or a tombstone).
  auto held_by_newer = [&](uint64_t id, size_t i) -> absl::StatusOr<bool> {
    const float* v;
    {
      ReaderMutexLock lock(&mu_);
      if (snap.active->Get(id, &v) != MemTable::Lookup::kAbsent) return true;
    }
    for (size_t j = 0; j < i; ++j) {
      const Snapshot::Source& newer = snap.older[j];
      if (newer.mem != nullptr) {
        if (newer.mem->Get(id, &v) != MemTable::Lookup::kAbsent) return true;
      } else {
        uint64_t sequence;
        SHOAL_ASSIGN_OR_RETURN(Segment::Lookup found, newer.segment->Find(id, &sequence, &v));
        if (found != Segment::Lookup::kAbsent) return true;
      }
    }
    return false;
  };
  absl::Status lookup_status;
  for (size_t i = 0; i < snap.older.size(); ++i) {
    const Snapshot::Source& source = snap.older[i];
    if (source.mem != nullptr) {
      const std::function<bool(uint64_t)> visible = [&](uint64_t id) {
        absl::StatusOr<bool> held = held_by_newer(id, i);
        if (!held.ok() && lookup_status.ok()) lookup_status = held.status();
        return held.ok() && !*held;
      };
      source.mem->Search(options_.metric, query, top, &visible);
      if (timed) {
        const int64_t now = timing::NowMicros();
        absl::StrAppend(&sources, ";frozen:", now - t, ":0:", source.mem->live_count(), ":0");
        t = now;
      }
    } else {
      SegmentSearchStats stats;
      SHOAL_RETURN_IF_ERROR(source.segment->Search(
          query, options,
          [&](uint64_t id, uint64_t) {
            absl::StatusOr<bool> held = held_by_newer(id, i);
            if (!held.ok() && lookup_status.ok()) lookup_status = held.status();
            return held.ok() && !*held;
          },
          top, timed ? &stats : nullptr));
      if (timed) {
        const int64_t now = timing::NowMicros();
        absl::StrAppend(&sources, ";segment:", now - t, ":", stats.hops, ":",
                        stats.distance_computations, ":", stats.sectors_touched);
        t = now;
      }
    }
    SHOAL_RETURN_IF_ERROR(lookup_status);
  }
  emit();
  return absl::OkStatus();
}

size_t Shard::live_count() const {
  ReaderMutexLock lock(&mu_);
  size_t n = active_->live_count();
  for (const Frozen& f : frozen_) n += f.mem->live_count();
  for (const SegmentSource& s : segments_) n += s.meta.vectors;
  return n;  // an upper bound once versions overlap across sources
}

ShardReport Shard::Report() const {
  ShardReport report;
  report.index = options_.index;
  {
    ReaderMutexLock lock(&mu_);
    report.memtable_bytes = active_->DataBytes();
    report.deleted = active_->tombstone_count();
    for (const Frozen& f : frozen_) {
      report.memtable_bytes += f.mem->DataBytes();
      report.deleted += f.mem->tombstone_count();
    }
    report.frozen_memtables = frozen_.size();
    report.segments = segments_.size();
    for (const SegmentSource& s : segments_) {
      report.segment_vectors += s.meta.vectors;
      report.deleted += s.meta.tombstones;
    }
  }
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDir(dir_);
  if (names.ok()) {
    for (const std::string& name : *names) {
      uint64_t number;
      if (!wal::ParseWalFileName(name, &number)) continue;
      report.wal_files += 1;
      absl::StatusOr<uint64_t> size = fs_->FileSize(JoinPath(dir_, name));
      if (size.ok()) report.wal_bytes += *size;
    }
  }
  return report;
}

absl::Status Shard::SyncWal() { return wal_->SyncTo(wal_->end_lsn()); }

absl::Status Shard::Close() {
  MutexLock lock(&mu_);
  if (closed_) return absl::OkStatus();
  closed_ = true;
  closing_ = true;
  // Queued flush tasks hold `this`: wait for them. A flush in progress
  // finishes; the frozen memtables left are in the log and come back on Open.
  while (pending_tasks_.load() > 0 || flush_running_) {
    flushed_.WaitFor(&mu_, std::chrono::milliseconds(1));
  }
  if (wal_ == nullptr) return absl::OkStatus();
  return wal_->Close(/*sync=*/true);
}

}  // namespace shoal

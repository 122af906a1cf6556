// Copyright 2026 The shoal Authors.
//
// One shard of a collection: its write-ahead log, its active memtable and
// its other sources (frozen memtables and segments, version/source_set.h).
//
// Writes: appended to the log and applied to the active memtable under the
// shard mutex (log order = apply order). A memtable that passes
// memtable_bytes is frozen (the log moves to a new file, so the frozen data is
// exactly in the files before it) and a background flush builds a segment,
// records it in the manifest, then deletes the log files it replaces.
// With kAlways a writer waits for the log sync after releasing the mutex, so
// concurrent writers share one fdatasync.
//
// The class's work is spread over files by job: shard.cc (open, close,
// statistics), shard_recovery.cc (log replay, salvage, the commit log's
// records), shard_write.cc (puts, deletes, back-pressure, freezing),
// shard_batch.cc (a batch over several shards), shard_flush.cc (flushes,
// bulk loads, compaction: every way a segment is published) and
// shard_read.cc (Get, Search), shard_checkpoint.cc (a checkpoint's cut),
// shard_reader.cc (a reader process's shard: Options::read_only).
//
// Thread-safe.

#ifndef SHOAL_SRC_SHARD_SHARD_H_
#define SHOAL_SRC_SHARD_SHARD_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "filter/compiled_filter.h"
#include "memtable/memtable.h"
#include "segment/segment.h"
#include "shard/shard_options.h"
#include "shard/shard_report.h"
#include "record/record_format.h"
#include "shoal/options.h"
#include "util/background_worker.h"
#include "util/debug_timing.h"
#include "util/file_system.h"
#include "util/memory_budget.h"
#include "util/mutex.h"
#include "util/thread_pool.h"
#include "util/top_k.h"
#include "version/manifest_editor.h"
#include "version/source_set.h"
#include "wal/commit_log.h"
#include "wal/log_tail.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace shoal {

// Whether a merge extends its largest input's graph (inserting the other
// inputs' vectors) rather than building the result's graph from scratch.
bool MergeReusesGraph(const Segment& largest, const GraphOptions& graph);

class Shard {
 public:
  // Opens the shard stored in `dir` (created when absent): opens the segments
  // of options.meta, removes files no manifest entry names, and replays the
  // log. DataLossError when the log is damaged before its tail (unless
  // options.salvage_corrupt_wal) or a segment is damaged.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Shard>> Open(
      FileSystem* fs, const std::string& dir, const ShardOptions& options);
  ~Shard();

  // Upserts ids[i] -> rows[i] (dim floats each, already validated and, for
  // kCosine, normalized). In order: a repeated id's last row wins.
  // `route_us` is the caller's time for validation and routing, reported
  // with SHOAL_DEBUG_TIMING.
  [[nodiscard]] absl::Status Put(std::span<const uint64_t> ids,
                                 std::span<const float* const> rows, int64_t route_us = 0) {
    return Put(ids, rows, {}, route_us);
  }
  // As Put, with each row's record parts (`extras`, one per id, checked and
  // canonical: record::NormalizeRecord; an empty span: none has any). The
  // parts go into the same log record as the vectors.
  [[nodiscard]] absl::Status Put(std::span<const uint64_t> ids,
                                 std::span<const float* const> rows,
                                 std::span<const record::Extras> extras, int64_t route_us = 0);
  [[nodiscard]] absl::Status Delete(std::span<const uint64_t> ids);

  // One shard's part of a batch over several shards (PutAcross).
  struct BatchPart {
    Shard* shard;
    std::span<const uint64_t> ids;
    std::span<const float* const> rows;  // as for Put
    std::span<const record::Extras> extras;  // as for Put (empty: none)
  };
  // Puts a batch over several shards of one collection (distinct, in
  // increasing index order): either every part is stored or, when the call
  // returns an error, none is. Every shard is checked first (closed, writes
  // held back by a flush that failed) and room for every part's record is
  // reserved, in each shard's log and in the commit log, before any record
  // is finished. Only a sticky I/O failure met after that (a log sync that
  // failed) can leave some parts stored, as it can any write. A part too
  // large for one log record (over 256 MiB) is written by Put instead, part
  // by part, each atomic on its own shard. `pool` (may be null) spreads the
  // copies and memtable inserts over its threads.
  [[nodiscard]] static absl::Status PutAcross(std::span<const BatchPart> parts,
                                              ThreadPool* pool)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;  // locks every part's shard

  // Copies the newest live vector of `id` into *out. NotFound when absent or
  // deleted.
  [[nodiscard]] absl::Status Get(uint64_t id, std::vector<float>* out) const;
  // The newest live record of `id`: out->id and the parts `parts`
  // (RecordParts) names. NotFound when absent or deleted.
  [[nodiscard]] absl::Status GetRecord(uint64_t id, uint32_t parts, RecordData* out) const;
  // GetRecord for each of `ids` (this shard's), under one look at the
  // sources: out[i] is ids[i]'s record, or nullopt when absent or deleted.
  [[nodiscard]] absl::Status GetRecords(std::span<const uint64_t> ids, uint32_t parts,
                                        std::optional<RecordData>* out) const;
  // What a search reads, taken at one moment: the active memtable and the
  // other sources, newest first.
  struct View {
    std::shared_ptr<const MemTable> active;
    SourceSnapshot older;
  };
  View TakeView() const;
  // What an export (DB::Export, db/record_export.h) reads of the shard, at
  // one moment: the active memtable's rows and tombstones as they were then
  // (where the rows are, not copies: a memtable never moves a row it holds,
  // MemTable::ForEachRecord), and the other sources.
  struct ExportView {
    struct Row {
      uint64_t id;
      const float* vector;
      std::string_view extras;  // encoded (record/record_format.h); empty: none
    };
    std::shared_ptr<const MemTable> active;  // keeps `rows` readable
    std::vector<Row> rows;
    std::vector<uint64_t> tombstones;
    SourceSnapshot older;
  };
  // Every shard's ExportView (out[j] is shards[j]'s) at one moment: every
  // shard's lock is held, shared, in index order (as PutAcross takes them)
  // while the views are taken, so a batch over several shards is in all of
  // them or in none. `shards` in increasing index order.
  static std::vector<ExportView> TakeExportViews(std::span<const Shard* const> shards)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;  // locks every shard
  // What a checkpoint (db/checkpoint.cc) copies of the shard, noted at one
  // moment: its segments and flushed sequence as its sources held them
  // (which the MANIFEST file may be ahead of: a flush publishes before it
  // installs), and where its log ended.
  struct CheckpointView {
    bool closed = false;  // the shard was closed: nothing else is set
    uint64_t flushed_sequence = 0;
    std::vector<SegmentMeta> segments;  // oldest first
    uint64_t log_number = 0;            // the log's current file
    size_t log_offset = 0;              // the end of its last record
    uint64_t log_lsn = 0;               // the log's end position (SyncWalTo)
    bool log_direct = false;            // records are in memory until synced
  };
  // Every shard's CheckpointView (out[j] is shards[j]'s) at one moment:
  // every lock is held, shared, at once, taken in the order of `shards`
  // (the caller's: collections by name, then shards by index, an order no
  // other path contradicts), so a batch over several shards is in all the
  // views or in none.
  static std::vector<CheckpointView> TakeCheckpointViews(std::span<const Shard* const> shards)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;  // locks every shard
  // Makes the log durable up to `lsn` (a CheckpointView's log_lsn), so that
  // a direct-I/O log's file holds every record before it.
  [[nodiscard]] absl::Status SyncWalTo(uint64_t lsn) const;
  // The shard's directory (its log files and own segments).
  const std::string& dir() const { return dir_; }
  // Offers this shard's newest live vectors to `top`: exact over memtables,
  // beam search over segments. options.filter, when set, is compiled here
  // (InvalidArgument as filter.h says).
  [[nodiscard]] absl::Status Search(const float* query, const SearchOptions& options,
                                    TopK* top) const;
  // The same over `view`; with `skip_shared`, its shared segments are left
  // to SearchShared (which walks each once for all its shards). `filter`
  // (may be null: none) is options.filter compiled; options.filter itself
  // is not looked at.
  [[nodiscard]] absl::Status Search(const View& view, const float* query,
                                    const SearchOptions& options, TopK* top,
                                    bool skip_shared,
                                    const filter::CompiledFilter* filter = nullptr) const;
  // Offers to `top` the newest live vectors of shared segment `segment`,
  // walked once: each entry is its shard's (ShardOf over shards.size()),
  // and counts when that shard's view (views[s]) holds the segment and
  // nothing newer there names the id. shards[s] took views[s]. `filter`
  // as for Search.
  [[nodiscard]] static absl::Status SearchShared(std::span<const Shard* const> shards,
                                                 std::span<const View> views,
                                                 const Segment* segment, const float* query,
                                                 const SearchOptions& options, TopK* top,
                                                 const filter::CompiledFilter* filter = nullptr);

  // Recovery, after Open: the record `r` of the collection's commit log (a
  // put, delete or barrier of this shard). Skipped when the log already holds it;
  // appended to the log and applied when it is the next one; when records
  // between the log's end and it are missing, DataLossError, or under
  // salvage_corrupt_wal dropped (as salvage drops the log's records after
  // the damage).
  [[nodiscard]] absl::Status ApplyCommitted(const wal::RecordView& r);

  // Freezes the active memtable (when not empty) and returns once every
  // frozen memtable is a segment recorded in the manifest.
  [[nodiscard]] absl::Status Flush();

  // Bulk load, in three steps so that a collection can publish every shard's
  // part in one manifest edit. Prepare freezes the active memtable and takes
  // a sequence number (a barrier record in the log) that is newer than
  // everything before and older than everything after; Build writes the
  // segment (vectors are row-major, normalized, ids unique); Install makes
  // it searchable after the edit is durable.
  struct BulkPart {
    uint64_t sequence = 0;
    uint64_t number = 0;   // segment file number
    std::shared_ptr<Segment> segment;
    std::string path;      // of the segment file, once built
    SegmentMeta meta;
  };
  [[nodiscard]] absl::StatusOr<BulkPart> PrepareBulk();
  // Builds and writes the part's segment; adds where its time went to
  // *stats (may be null).
  // `extras`: each row's record parts, encoded (record/record_format.h;
  // empty: none has any).
  [[nodiscard]] absl::Status BuildBulk(BulkPart* part, std::span<const uint64_t> ids,
                                       const float* vectors, SegmentBuildStats* stats = nullptr,
                                       std::span<const std::string_view> extras = {});
  void InstallBulk(const BulkPart& part);
  // Ingest (DB::IngestSegments): where a prepared part's own segment file
  // goes (SegmentFileName(part.number) in this shard's directory).
  std::string BulkPartPath(const BulkPart& part) const { return SegmentPath(part.number); }
  // Makes `part` the file the caller placed at `path`, holding `vectors`
  // entries of this shard that take the part's sequence: opened as this
  // shard opens its segments, or `shared` (already open; a file in the
  // collection's directory holding several shards' entries). The file's
  // own entry sequences are not read for ranking: the part's is.
  [[nodiscard]] absl::Status AdoptBulk(BulkPart* part, const std::string& path, uint64_t vectors,
                                       std::shared_ptr<Segment> shared = nullptr);
  // Opens a segment file as this shard opens its own (Options::segment_storage).
  absl::StatusOr<std::shared_ptr<Segment>> OpenSegmentFile(const std::string& path) const {
    return OpenSegment(path);
  }
  // BuildBulk for the parts of several shards of one collection (parts[j]
  // is shards[j]'s, each prepared) as one shared segment, file
  // SegmentFileName(parts[0].number) in `dir` (the collection's): part j's
  // rows are counts[j] rows of `ids`/`vectors`, after those of the parts
  // before it, and carry its sequence. Every part then holds the segment,
  // with its own meta (shared) and the one path.
  [[nodiscard]] static absl::Status BuildSharedBulk(std::span<Shard* const> shards,
                                                    std::span<BulkPart> parts,
                                                    std::span<const size_t> counts,
                                                    std::span<const uint64_t> ids,
                                                    const float* vectors, const std::string& dir,
                                                    SegmentBuildStats* stats = nullptr,
                                                    std::span<const std::string_view> extras = {});

  // One graph for a small collection: merges the segments of every shard of
  // `shards` (all of one collection's, in index order) that a compaction
  // may take (each shard's oldest, below what is not a segment yet) into
  // one shared segment in `dir` (the collection's), which replaces them
  // all in one manifest edit. Each shard's entries keep their sequences;
  // tombstones go (the inputs start at each shard's oldest segment). The
  // largest input's graph is extended when it loses no node
  // (MergeReusesGraph), else the graph is built afresh. Takes every shard's
  // compaction lock, in index order. Does nothing when the inputs are
  // already one shared segment, or a shard is closing, or when the data
  // newer than the largest input (its vectors; the others' vectors and
  // tombstones, and the memtable's) is below `ratio` times it (the fold
  // rule, CompactionOptions::fold_ratio; 0: always). `flushing` (may be
  // null): a shard of `shards` whose flush this is: its oldest frozen
  // memtable joins as its newest input and is flushed by the fold (unless a
  // bulk part is in flight there, a shard is closing, or a merge holds a
  // shard's compaction lock: a flush does not wait; then it stays, for a
  // flush of its own). *flushed (may be null): whether it was flushed.
  [[nodiscard]] static absl::Status FoldAcross(std::span<Shard* const> shards,
                                               const std::string& dir, double ratio,
                                               Shard* flushing = nullptr,
                                               bool* flushed = nullptr)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;  // locks every shard
  // Forgets a part that will not be installed and removes its segment file,
  // unless `keep_file` (a manifest write in doubt may name it).
  void DiscardBulk(const BulkPart& part, bool keep_file = false);

  // Flushes, then merges segments into one, dropping overwritten and deleted
  // vectors. Only the oldest segments, those older than every memtable and
  // every bulk part still being built, are merged: the merged segment ranks
  // by its newest input, so it must rank below all of those, as its data does.
  [[nodiscard]] absl::Status Compact();
  // Holds off every merge of the shard (its compaction lock) until
  // UnlockMerges. A collection holds all its shards' (in index order) while
  // it publishes and installs a shared bulk segment.
  void LockMerges() ABSL_NO_THREAD_SAFETY_ANALYSIS { compact_mu_.Lock(); }
  void UnlockMerges() ABSL_NO_THREAD_SAFETY_ANALYSIS { compact_mu_.Unlock(); }

  // Queues a background compaction when the policy has one due (after the
  // collection stopped merging the shards' segments itself).
  void ScheduleCompaction();
  // Whether the shard's sources hold segment `number` now.
  bool NamesSegment(uint64_t number) const;
  // Whether it holds no unflushed writes (nor a bulk part in flight).
  bool Quiescent() const;

  // Returns once no flush or compaction of this shard is queued or running
  // (and no frozen memtable waits), or with the error of the last one when
  // it failed and nothing retries it.
  [[nodiscard]] absl::Status WaitForBackgroundWork();

  // Makes everything appended so far durable.
  [[nodiscard]] absl::Status SyncWal();
  // Waits for background work, for bulk parts in flight (prepared, not yet
  // installed or discarded) and for a merge in progress (a caller's
  // Compact, a fold across shards), so that no file of the shard is written
  // after it returns (DropCollection then removes the directory); syncs and
  // closes the log. Later writes, flushes, bulk loads and compactions return
  // ClosedError().
  [[nodiscard]] absl::Status Close();

  // ---- A reader's shard (Options::read_only; shard_reader.cc) ----
  // Open (read-only) replays the log files through a LogTail, which writes
  // nothing; FollowLog applies the records appended since. AbortedError
  // when a record is missing between the last one applied (or the flushed
  // sequence) and the next one found (the writer flushed them and removed
  // their log file since the manifest was read): the caller opens the
  // collection again from a fresh manifest. NotFoundError when a file went
  // away before it was opened (the same). Apply under the shard's lock;
  // reads of the files do not hold it.
  [[nodiscard]] absl::Status FollowLog();
  // Adds this shard's segments (by file number) to *out.
  void CollectSegments(absl::flat_hash_map<uint64_t, std::shared_ptr<Segment>>* out) const;

  const RecoveryStats& recovery_stats() const { return recovery_; }
  size_t live_count() const;

  // Statistics for the inspection tools.
  ShardReport Report() const;

 private:
  // A shard's part of a batch larger than this is split into several records
  // (the record length field is 32 bits; smaller records also bound how much
  // a torn write can drop).
  static constexpr size_t kMaxRecordPayload = size_t{256} << 20;
  static size_t RowsPerRecord(size_t dim) {
    return std::max<size_t>(1, kMaxRecordPayload / (sizeof(uint64_t) + dim * sizeof(float)));
  }
  // How many of the first records of `extras` (at least one) one kPutRecords
  // record takes: as many as keep its payload within kMaxRecordPayload.
  // Sets *extras_bytes to their extras' encoded bytes.
  static size_t RecordsPerRecord(std::span<const record::Extras> extras, size_t dim,
                                 size_t* extras_bytes);
  // The payload of the put record of `count` rows with `extras` (none:
  // kPut; else kPutRecords, each row's extras after the rows).
  static size_t PutsPayloadSize(size_t count, size_t dim,
                                std::span<const record::Extras> extras);
  // Whether no record of `extras` has any part: then they are written as
  // plain puts (kPut), which keep every fast path of vectors.
  static bool NoneHasParts(std::span<const record::Extras> extras);
  static wal::RecordType PutsType(std::span<const record::Extras> extras) {
    return extras.empty() ? wal::RecordType::kPut : wal::RecordType::kPutRecords;
  }
  // Writers wait while this many memtables wait to be flushed: memory stays
  // bounded when writes outpace graph builds.
  static constexpr size_t kMaxFrozen = 2;
  static constexpr std::chrono::milliseconds kMinFlushBackoff{10};
  static constexpr std::chrono::milliseconds kMaxFlushBackoff{1000};

  // Counts a kAlways write call for the group commit of the log it waits
  // for (WalWriter::WriterEnter): the commit log's when there is one.
  class SyncingWriter {
   public:
    explicit SyncingWriter(Shard* shard)
        : commit_(shard->options_.db.fsync == FsyncPolicy::kAlways
                      ? shard->options_.commit_log
                      : nullptr),
          wal_(shard->options_.db.fsync == FsyncPolicy::kAlways && commit_ == nullptr
                   ? shard->wal_.get()
                   : nullptr) {
      if (commit_ != nullptr) commit_->WriterEnter();
      if (wal_ != nullptr) wal_->WriterEnter();
    }
    SyncingWriter(const SyncingWriter&) = delete;
    SyncingWriter& operator=(const SyncingWriter&) = delete;
    ~SyncingWriter() {
      if (commit_ != nullptr) commit_->WriterExit();
      if (wal_ != nullptr) wal_->WriterExit();
    }

   private:
    wal::CommitLog* const commit_;
    wal::WalWriter* const wal_;
  };
  // Where the log is damaged: the valid prefix ends at `offset` of file
  // `numbers[file]`.
  struct Damage {
    size_t file = 0;
    size_t offset = 0;
    std::string message;
  };

  Shard(FileSystem* fs, std::string dir, const ShardOptions& options);
  // FailedPrecondition naming the shard: it was closed, by DB::Close or by
  // DropCollection (the DB reports a call that raced with a drop as
  // NotFound, db/db_impl.cc).
  absl::Status ClosedError() const;
  uint32_t dim() const { return options_.collection.dim; }
  Metric metric() const { return options_.collection.metric; }
  std::unique_ptr<MemTable> NewMemTable() const;
  std::string SegmentPath(uint64_t number) const;
  // Opens segment `path` as Options::segment_storage says.
  absl::StatusOr<std::shared_ptr<Segment>> OpenSegment(const std::string& path) const {
    return Segment::Open(fs_, path, dim(), metric(),
                         {options_.db.segment_storage, options_.db.node_cache_bytes,
                          options_.memory_budget, options_.pool, options_.pool});
  }

  // ---- shard_compact.cc, shard_flush.cc ----
  // Whether the collection merges this shard's segments (collection_folds).
  bool CollectionFolds() const;
  // Removes the file of a segment this shard's manifest entry no longer
  // names: its own at once, a shared one through release_shared.
  void ReleaseSegmentFile(const SegmentMeta& meta);

  // ---- shard_read.cc ----
  // Whether `id`, offered by source `i` of `view`, is its newest version:
  // neither the active memtable nor a source newer than i names it. A
  // lookup that fails returns false and sets *status (when still OK).
  // Without `check_active` the active memtable is not asked: for a search
  // that found it empty when it searched it, and so answers as of then
  // (a write since is not seen by either, so never half seen).
  bool VisibleAt(const View& view, uint64_t id, size_t i, absl::Status* status,
                 bool check_active = true) const;

  // ---- shard_recovery.cc ----
  absl::Status OpenSegments();
  absl::Status Recover();
  absl::Status ReplayLog(const std::vector<uint64_t>& numbers, Damage* damage,
                         uint64_t* resume_number, size_t* resume_offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ApplyRecord(const wal::RecordView& r, uint64_t file_number)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- shard_reader.cc ----
  // A segment of meta: the one already open (ShardOptions::open_segments),
  // else its file opened.
  absl::StatusOr<std::shared_ptr<Segment>> OpenOrReuseSegment(const SegmentMeta& meta) const;

  // ---- shard_write.cc ----
  // Appends a record of `payload_length` bytes, written by `fill`, to the
  // log and, with a commit log, to it. Returns the position AfterAppend
  // syncs to.
  absl::StatusOr<uint64_t> AppendRecord(wal::RecordType type, uint32_t count, uint32_t dim,
                                        size_t payload_length,
                                        absl::FunctionRef<void(char*)> fill)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The commit-log half of AppendRecord, for a record begun in this
  // shard's log (BeginRecord and its payload stored, or BeginPuts).
  absl::StatusOr<uint64_t> FinishAppend(wal::RecordType type, uint32_t count, uint32_t dim,
                                        size_t payload_length) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Begins the put record of `ids` (at most RowsPerRecord) in the log, its
  // payload stored. With `write_through` and at least kWriteThroughBytes,
  // written through the file from the caller's rows (no zero-fill of fresh
  // log pages: for a writer that does not leave a core to the prefaulter);
  // else copied through the mapping (a system call costs more than a small
  // copy, and the prefaulter zero-fills the pages ahead on another core).
  // With `extras` (one per id; empty: none) the record is a kPutRecords,
  // always copied through the mapping.
  absl::Status BeginPuts(std::span<const uint64_t> ids, std::span<const float* const> rows,
                         std::span<const record::Extras> extras, bool write_through)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static constexpr size_t kWriteThroughBytes = size_t{64} << 10;
  // Appends the puts (one record per RowsPerRecord rows) and applies them.
  // With timing, adds the microseconds spent in the log and the memtable to
  // *wal_us and *memtable_us.
  // With `extras` (one per id), kPutRecords records, as many rows each as
  // RecordsPerRecord allows.
  absl::StatusOr<uint64_t> AppendPut(std::span<const uint64_t> ids,
                                     std::span<const float* const> rows,
                                     std::span<const record::Extras> extras,
                                     timing::Scope* timing, int64_t* wal_us,
                                     int64_t* memtable_us) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A put record's payload (wal_format.h): the ids, then the rows, then
  // (kPutRecords) each row's extras.
  void EncodePuts(std::span<const uint64_t> ids, std::span<const float* const> rows,
                  std::span<const record::Extras> extras, char* payload) const;
  // Applies puts whose record was finished: they take the next sequence
  // numbers and go into the active memtable.
  // With `logged` (LoggedRowsLocked), the memtable reads the rows there, in
  // the log, instead of copying `rows`.
  // With `extras` (the record was a kPutRecords), each row's extras go in
  // too: read in the log beside the rows there, else copied from the record
  // just finished (WalWriter::last_record).
  void ApplyPutsLocked(std::span<const uint64_t> ids, std::span<const float* const> rows,
                       std::span<const record::Extras> extras, const float* logged)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ApplyPutsLocked's memtable inserts for a kPutRecords record.
  void ApplyRecordsLocked(std::span<const uint64_t> ids, std::span<const float* const> rows,
                          std::span<const record::Extras> extras, const float* logged)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The rows of the put record of `count` vectors finished last, where its
  // log file's view keeps them readable (the active memtable then holds the
  // view), or null when the log keeps no view (direct I/O, a disk) or the
  // record holds fewer than kMinRowsInPlace rows: the memtable copies them.
  // On tmpfs the rows of batches are then in RAM once, not twice.
  const float* LoggedRowsLocked(size_t count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records of fewer rows are copied into the memtable's arena.
  static constexpr size_t kMinRowsInPlace = 16;
  // Back-pressure before a write: while flushes are behind (kMaxFrozen
  // frozen memtables wait), waits for them, unless !may_wait: then sets
  // *must_wait and returns OK. A failed flush is retried from here once its
  // back-off has passed, so that writing resumes by itself once there is
  // room again; until then (and when the retry fails too) the flush's error
  // is returned. FailedPrecondition when the shard is closed.
  absl::Status AdmitLocked(bool may_wait, bool* must_wait = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether writes wait for merges: the shard holds
  // CompactionOptions::max_segments segments and a merge is queued or
  // running (it signals flushed_ when done).
  bool MergesBehindLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return (compaction_scheduled_ || compaction_running_) && !closing_ &&
           sources_.segments().size() >= options_.db.compaction.max_segments;
  }
  // Waits for the sync a kAlways write needs; then, with a commit log,
  // resets *syncing and runs a checkpoint when one is due.
  absl::Status AfterAppend(uint64_t lsn, std::optional<SyncingWriter>* syncing);
  // Freezes the active memtable when it is not empty, moving the log to a
  // new file; schedules a flush.
  absl::Status FreezeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFreezeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes the active memtable a frozen source holding sequences up to
  // `max_sequence`, whose records are in log files <= last_wal_number, and
  // starts a new one.
  void PushActiveLocked(uint64_t max_sequence, uint64_t last_wal_number)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- shard_flush.cc ----
  // Runs (this->*work)() on `worker`, counted in pending_tasks_ (which Close
  // waits out, since the task holds `this`).
  void RunInBackground(BackgroundWorker* worker, absl::Status (Shard::*work)());
  void ScheduleFlush() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Flushes frozen memtables, oldest first, until none is left (one runner
  // at a time). Records a failure in flush_status_.
  absl::Status RunFlushes();
  // Turns the oldest frozen memtable into a segment (or folds it into the
  // large one, FlushFoldInputsLocked). OK when none is left.
  absl::Status FlushOldest();
  // After the manifest edit that flushed `f` (the oldest frozen memtable):
  // drops it from the sources, schedules what may be due, wakes waiters.
  void FlushedLocked(const FrozenSource& f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How WriteSegment builds a graph.
  enum class GraphBuild {
    // One insertion pass (alpha) at the build list size. (Two passes, alpha
    // 1 first, as DiskANN builds, until 2026-11-27; vamana_builder.h says
    // why no longer.) Cheaper variants (L 64; a smaller R) lost recall on
    // some data (docs/performance-history.md, "Builds"). With contents.seed (a merge
    // extending its largest input's graph) only the new nodes are inserted,
    // as FreshDiskANN inserts; the result counts as fully built all the same.
    kFull,
    kQuick,   // one pass at half the build list size (QuickFlushLocked)
  };
  // Builds `contents` into segment file `number` and opens it. On error the
  // file is gone.
  absl::StatusOr<std::shared_ptr<Segment>> WriteSegment(uint64_t number,
                                                        const SegmentContents& contents,
                                                        SegmentBuildStats* stats = nullptr,
                                                        GraphBuild how = GraphBuild::kFull);
  // The same at `path` (a shared segment's, in the collection's directory).
  absl::StatusOr<std::shared_ptr<Segment>> WriteSegmentAt(const std::string& path,
                                                          const SegmentContents& contents,
                                                          SegmentBuildStats* stats = nullptr,
                                                          GraphBuild how = GraphBuild::kFull);
  // Whether a flush of `vectors` vectors builds a quick graph: when
  // background compaction will fold it into a larger, fully built segment
  // (inserting its vectors into that graph), its own graph only serves
  // until then. Its one pass searches with half the build list size.
  bool QuickFlushLocked(uint64_t vectors) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The segment holding `ids` (rows of dim floats) with their sequences, and
  // tombstones (ids, sequences), in this shard's shape.
  // `extras`: each row's record parts, encoded (empty: none has any).
  SegmentContents Contents(std::span<const uint64_t> ids, std::span<const uint64_t> sequences,
                           const float* vectors,
                           std::span<const uint64_t> tombstone_ids = {},
                           std::span<const uint64_t> tombstone_sequences = {},
                           std::span<const std::string_view> extras = {}) const;
  // Removes log files <= number (all flushed).
  void RemoveLogFilesUpTo(uint64_t number);

  // ---- shard_compact.cc ----
  // The oldest sequence that is not in a segment yet (the active memtable, a
  // bulk load in flight): compaction inputs rank below it.
  uint64_t CompactionLimitLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // What the policy merges next (SourceSet::PickCompaction); empty if nothing.
  std::vector<SegmentSource> PickCompactionLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Queues a background compaction when the policy has a merge due and none
  // is queued.
  void MaybeScheduleCompactionLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RunBackgroundCompaction();
  // Merges `inputs` (adjacent segments, oldest first) into one segment that
  // replaces them: newest version of each id, tombstones dropped when the
  // oldest input is the shard's oldest segment, else kept (they still hide
  // older segments' vectors). Extends the largest input's graph when it may
  // (see MergeReusesGraph), else builds afresh. REQUIRES: compact_mu_ held.
  // `newer_ids` (may be null): ids that segments newer than every input
  // hold; the inputs' entries of them are dropped (they are dead).
  // `memtable` (may be null): the oldest frozen memtable, newer than every
  // input, merged in as the newest input and flushed by the merge (a fold at
  // flush time, see FlushFoldInputsLocked).
  absl::Status MergeSegments(const std::vector<SegmentSource>& inputs, bool keep_tombstones,
                             const absl::flat_hash_set<uint64_t>* newer_ids = nullptr,
                             const FrozenSource* memtable = nullptr);
  // A fold at flush time: when the fold rule (SourceSet::FoldInputs) is due
  // with the oldest frozen memtable `f` counted among the newer data, the
  // segments it folds (oldest first), and FlushOldest merges f into them
  // directly: its vectors are inserted into the large graph once instead of
  // built into a graph of their own first and inserted later. Empty when no
  // fold is due or compaction is not automatic.
  std::vector<SegmentSource> FlushFoldInputsLocked(const FrozenSource& f) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Rewrites the segment of `segments` (the shard's, oldest first) that
  // PickConsolidation names, if any, without its dead vectors.
  // REQUIRES: compact_mu_ held.
  absl::Status ConsolidateDeadVectors(const std::vector<SegmentSource>& segments);

  FileSystem* const fs_;
  const std::string dir_;
  const ShardOptions options_;
  RecoveryStats recovery_;

  mutable Mutex mu_;
  CondVar flushed_;  // signalled when a frozen memtable is gone or flushing failed
  std::unique_ptr<wal::WalWriter> wal_;  // set by Open; closed by Close
  std::shared_ptr<MemTable> active_ ABSL_GUARDED_BY(mu_);
  uint64_t active_min_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  SourceSet sources_ ABSL_GUARDED_BY(mu_);  // frozen memtables and segments
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t flushed_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  bool flush_running_ ABSL_GUARDED_BY(mu_) = false;  // one flush at a time
  absl::Status flush_status_ ABSL_GUARDED_BY(mu_);   // last background failure
  // After a failed flush, writers held back retry it from this time on
  // (AdmitLocked); the back-off doubles with each failure, up to a second.
  std::chrono::steady_clock::time_point flush_retry_at_ ABSL_GUARDED_BY(mu_);
  std::chrono::milliseconds flush_backoff_ ABSL_GUARDED_BY(mu_){kMinFlushBackoff};
  bool flush_retry_scheduled_ ABSL_GUARDED_BY(mu_) = false;
  bool compaction_scheduled_ ABSL_GUARDED_BY(mu_) = false;
  bool compaction_running_ ABSL_GUARDED_BY(mu_) = false;
  // A flush or bulk load added a segment since the last consolidation check
  // (or the shard was opened): its entries may have made older ones dead.
  bool dead_check_due_ ABSL_GUARDED_BY(mu_) = true;
  absl::Status compaction_status_ ABSL_GUARDED_BY(mu_);  // last background merge
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;  // background flushes stop
  std::atomic<int> pending_tasks_{0};  // tasks queued on the flusher and compactor
  // Sequences of bulk parts prepared but not yet installed or discarded.
  std::multiset<uint64_t> pending_bulk_ ABSL_GUARDED_BY(mu_);
  Mutex compact_mu_;  // one compaction at a time
  // A reader's log (Options::read_only): where it has read up to, and
  // whether a record has been applied yet (the first may follow a bulk
  // segment, as in ReplayLog). Taken before mu_.
  Mutex tail_mu_;
  std::unique_ptr<wal::LogTail> tail_ ABSL_GUARDED_BY(tail_mu_);
  bool tail_first_ ABSL_GUARDED_BY(tail_mu_) = true;
};

// Records `edits` (one per shard of `collection`, each adding the segment
// files in `added`, paths) in the manifest in one durable write: the one way
// segments are published (flush, compaction, a bulk load of every shard).
// On error none of it is in effect and the added files are removed, unless
// the write is in doubt (ManifestWriteInDoubt): then either manifest may
// name them, and they stay.
[[nodiscard]] absl::Status PublishSegments(FileSystem* fs, ManifestEditor* manifest,
                                           const std::string& collection,
                                           uint64_t incarnation,
                                           std::span<const ShardEdit> edits,
                                           std::span<const std::string> added);

}  // namespace shoal

#endif  // SHOAL_SRC_SHARD_SHARD_H_

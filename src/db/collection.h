// Copyright 2026 The shoal Authors.
//
// One named collection: its shards, routing by id, validation of input, and
// the fan-out and merge of searches. Thread-safe. One class in three files:
// collection.cc (open, writes, bulk loads, flush/compact/close),
// collection_search.cc (the searches' fan-out and merge) and
// collection_fold.cc (the fold of shared segments across shards).

#ifndef SHOAL_SRC_DB_COLLECTION_H_
#define SHOAL_SRC_DB_COLLECTION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/inspect.h"
#include "record/record_format.h"
#include "version/manifest.h"
#include "version/manifest_editor.h"
#include "shard/shard.h"
#include "shoal/db.h"
#include "util/background_worker.h"
#include "util/debug_timing.h"
#include "util/file_system.h"
#include "util/memory_budget.h"
#include "util/mutex.h"
#include "util/thread_pool.h"
#include "util/top_k.h"
#include "wal/commit_log.h"

namespace shoal {

class Collection {
 public:
  // What a collection uses of its DB. Pointers are not owned and outlive it.
  struct Context {
    FileSystem* fs = nullptr;
    ThreadPool* pool = nullptr;
    BackgroundWorker* prefaulter = nullptr;
    BackgroundWorker* flusher = nullptr;
    BackgroundWorker* compactor = nullptr;
    ManifestEditor* manifest = nullptr;
    FileDeleter* file_deleter = nullptr;  // may be null: obsolete files go at once
    std::shared_ptr<MemoryBudget> memory_budget;  // may be null
    Options db_options;
    uint64_t incarnation = 0;  // for ManifestEditor::Apply
  };

  // Opens (creating when absent) the collection stored in `dir`, recovering
  // every shard in parallel. `shards` is its manifest entry per shard (empty
  // for a new collection). REQUIRES: options validated, shard_count resolved.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Collection>> Open(
      const Context& context, const std::string& dir, std::string name,
      const CollectionOptions& options, const std::vector<ShardMeta>& shards);

  const std::string& name() const { return name_; }
  const CollectionOptions& options() const { return options_; }
  const std::string& dir() const { return dir_; }
  // The shards in index order (a checkpoint's cut locks them).
  std::vector<const Shard*> shards() const {
    std::vector<const Shard*> out;
    for (const auto& s : shards_) out.push_back(s.get());
    return out;
  }

  [[nodiscard]] absl::Status Put(uint64_t id, std::span<const float> vector);
  [[nodiscard]] absl::Status PutBatch(std::span<const uint64_t> ids,
                                      std::span<const float> vectors);
  [[nodiscard]] absl::Status Delete(uint64_t id);
  [[nodiscard]] absl::StatusOr<std::vector<float>> Get(uint64_t id) const;
  [[nodiscard]] absl::StatusOr<std::vector<Neighbor>> Search(
      std::span<const float> query, const SearchOptions& options) const;
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<Neighbor>>> SearchBatch(
      std::span<const float> queries, const SearchOptions& options) const;

  // Records (DB::Put(Record) and the rest; collection_records.cc).
  [[nodiscard]] absl::Status Put(const Record& record);
  [[nodiscard]] absl::Status PutBatch(std::span<const Record> records);
  [[nodiscard]] absl::Status BulkLoad(std::span<const Record> records,
                                      const BulkLoadOptions& options = {});
  [[nodiscard]] absl::StatusOr<RecordData> GetRecord(uint64_t id, uint32_t parts) const;
  [[nodiscard]] absl::StatusOr<std::vector<std::optional<RecordData>>> GetRecords(
      std::span<const uint64_t> ids, uint32_t parts) const;

  // An iterator over every live record at one point in time (DB::Export;
  // collection_export.cc). InvalidArgument for bad options.parts.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<RecordIterator>> Export(
      const ExportOptions& options) const;

  // Builds segments straight from the vectors, one per shard, published in
  // one manifest edit: all of the load becomes visible, or none of it.
  [[nodiscard]] absl::Status BulkLoad(std::span<const uint64_t> ids,
                                      std::span<const float> vectors,
                                      const BulkLoadOptions& options = {});
  // Segment files a SegmentWriter built, checked, placed and published in
  // one manifest edit (DB::IngestSegments; collection_ingest.cc).
  [[nodiscard]] absl::Status IngestSegments(std::span<const std::string> files,
                                            const IngestOptions& options);
  // Every shard's memtables into segments; returns when durable. Every
  // shard is tried, also after one failed (so for Compact, SyncWal, Close).
  [[nodiscard]] absl::Status Flush();
  // Every shard's segments merged into one.
  // `compacted(n)`, when set, is told of each n shards compacted.
  [[nodiscard]] absl::Status Compact(const std::function<void(uint32_t)>& compacted = {});
  // Returns once no shard has a flush or compaction queued or running.
  [[nodiscard]] absl::Status WaitForCompact();

  // Makes every shard's log durable.
  [[nodiscard]] absl::Status SyncWal();
  // Closes every shard; later writes return FailedPrecondition.
  [[nodiscard]] absl::Status Close();

  // Set (under the DB's manifest lock) once a DropCollection has taken the
  // collection out of the manifest, before it is closed: its calls may then
  // fail (NotFound from a manifest edit, FailedPrecondition once closed, an
  // I/O error once its files go). The DB reports such a failure as NotFound
  // (the collection is gone), and whole-database calls skip it.
  void set_dropped(bool dropped) { dropped_.store(dropped, std::memory_order_release); }
  bool dropped() const { return dropped_.load(std::memory_order_acquire); }

  size_t live_count() const;
  // Statistics for the inspection tools.
  CollectionReport Report() const;

  ~Collection();

 private:
  Collection(FileSystem* fs, ThreadPool* pool, std::string dir, std::string name,
             const CollectionOptions& options, ManifestEditor* manifest, uint64_t incarnation,
             bool disk_resident)
      : fs_(fs), pool_(pool), dir_(std::move(dir)), name_(std::move(name)), options_(options),
        manifest_(manifest), incarnation_(incarnation), disk_resident_(disk_resident) {}

  // The query as searched: validated, and normalized for kCosine.
  absl::Status PrepareQuery(std::span<const float> query, std::vector<float>* out) const;
  // Replays the commit log files a crash left into the shards, makes their
  // logs durable and removes the files; then starts commit_log_ (when set).
  absl::Status RecoverCommitLog(bool salvage);
  std::string CommitLogDir() const;
  // `call` on every shard, also after one failed; the first error.
  absl::Status ForEachShard(absl::Status (Shard::*call)());
  // Top-k over every shard, on this thread.
  // `filter`: options.filter compiled (null: none).
  absl::StatusOr<std::vector<Neighbor>> SearchShards(
      const float* query, const SearchOptions& options,
      const filter::CompiledFilter* filter) const;
  // options.filter compiled against the collection's attributes (null
  // without a filter); InvalidArgument as shoal/filter.h says.
  absl::StatusOr<std::unique_ptr<const filter::CompiledFilter>> CompileFilter(
      const SearchOptions& options) const;
  // Every shard's view (Shard::TakeView), and the shared segments they
  // hold, each once.
  void TakeViews(std::vector<Shard::View>* views, std::vector<const Segment*>* shared) const;
  // Offers the shared segments' newest live vectors to `top` (each walked
  // once, Shard::SearchShared).
  absl::Status SearchSharedSegments(const std::vector<Shard::View>& views,
                                    const std::vector<const Segment*>& shared,
                                    const float* query, const SearchOptions& options,
                                    const filter::CompiledFilter* filter, TopK* top) const;

  // ---- One graph while small (CompactionOptions::one_graph_max_vectors) ----
  // Opens the shared segments `shards` name, once each, into shared_at_open_,
  // and removes the shared segment files and temporaries of dir_ that none
  // names (a merge or bulk load that crashed before its manifest edit, or
  // after it, before it removed what it replaced).
  absl::Status OpenSharedSegments(const Context& context, const std::vector<ShardMeta>& shards);
  std::string SharedSegmentPath(uint64_t number) const;
  // Whether the collection is small enough for one graph now.
  bool Small() const;
  // Sets folds_ from Small(): the shards stop merging their own segments
  // while it is set, and resume when it drops; queues a fold when set.
  void UpdateFoldMode();
  void MaybeScheduleFold();
  void RunFold();
  // Shard::FoldAcross over every shard, in the collection's directory.
  absl::Status FoldShards(double ratio, Shard* flushing = nullptr, bool* flushed = nullptr);
  // Removes shared segment `number`'s file when no shard names it.
  void ReleaseShared(uint64_t number);
  // Waits for a queued or running fold; later ones are not queued.
  void StopFolds();
  // The batch with the last copy of each id, normalized for kCosine, split by
  // shard. On return part_ids/part_rows hold shard s's rows in
  // [start[s], start[s+1]).
  absl::Status Partition(std::span<const uint64_t> ids, std::span<const float> vectors,
                         bool dedupe, std::unique_ptr<float[]>* normalized,
                         std::vector<uint64_t>* part_ids,
                         std::vector<const float*>* part_rows,
                         std::vector<size_t>* start) const;

  // Records (collection_records.cc): a batch checked and split by shard,
  // as Partition splits vectors: shard s's rows are [start[s], start[s+1])
  // of ids, rows and extras (each kept row's parts, checked and canonical;
  // empty when no record has any). Rows and extras point into the
  // records, `normalized` and `stores`.
  struct PartitionedRecords {
    std::unique_ptr<float[]> normalized;         // kCosine: the rows normalized
    std::vector<record::NormalizeStore> stores;  // parts copied to be canonical
    std::vector<uint64_t> ids;
    std::vector<const float*> rows;
    std::vector<record::Extras> extras;
    std::vector<size_t> start;
  };
  absl::Status PartitionRecords(std::span<const Record> records, bool dedupe,
                                PartitionedRecords* out) const;
  // BulkLoad's work once the input is partitioned (part_extras: encoded,
  // parallel to part_ids; empty: none), `total` rows given.
  absl::Status LoadPartitioned(size_t total, std::span<const uint64_t> part_ids,
                               std::span<const float* const> part_rows,
                               std::span<const std::string_view> part_extras,
                               std::span<const size_t> start, timing::Scope* timing,
                               const BulkLoadOptions& options);

  FileSystem* const fs_;
  ThreadPool* const pool_;
  const std::string dir_;
  const std::string name_;
  const CollectionOptions options_;
  ManifestEditor* const manifest_;
  const uint64_t incarnation_;
  // Options::segment_storage is kDisk: a segment search waits on reads.
  const bool disk_resident_;
  // What the shards' log syncers know of each other, and the commit log
  // (before shards_: they outlive them).
  wal::GroupCommitCounters group_commit_;
  std::unique_ptr<wal::CommitLog> commit_log_;  // null unless kAlways + collection_commit_log
  bool commit_log_closed_ = false;
  std::atomic<bool> dropped_{false};
  // One graph while small.
  BackgroundWorker* compactor_ = nullptr;  // may be null
  FileDeleter* file_deleter_ = nullptr;    // may be null: obsolete files go at once
  CompactionOptions compaction_;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Segment>> shared_at_open_;  // Open only
  // The collection merges its shards' segments. Set while it opens: the
  // shards merge nothing of their own before the mode is known.
  std::atomic<bool> folds_{true};
  std::atomic<bool> open_{false};  // Open is done: shards_ is whole
  mutable Mutex fold_mu_;
  CondVar fold_done_;
  bool fold_scheduled_ ABSL_GUARDED_BY(fold_mu_) = false;
  bool fold_running_ ABSL_GUARDED_BY(fold_mu_) = false;
  bool folds_stopped_ ABSL_GUARDED_BY(fold_mu_) = false;
  absl::Status fold_status_ ABSL_GUARDED_BY(fold_mu_);
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_DB_COLLECTION_H_

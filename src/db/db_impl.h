// Copyright 2026 The shoal Authors.
//
// The DB implementation: the directory lock, the manifest, the collections,
// and the kInterval background syncer. Recovery of shards lives in
// shard/shard.cc, the write and search paths in db/collection.cc.

#ifndef SHOAL_SRC_DB_DB_IMPL_H_
#define SHOAL_SRC_DB_DB_IMPL_H_

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"
#include "db/collection.h"
#include "version/manifest.h"
#include "db/inspect.h"
#include "version/file_deleter.h"
#include "version/manifest_editor.h"
#include "shoal/db.h"
#include "util/background_worker.h"
#include "util/file_system.h"
#include "util/memory_budget.h"
#include "util/thread_pool.h"

namespace shoal {

class DBImpl final : public DB, private ManifestEditor {
 public:
  DBImpl(const Options& options, std::string path, FileSystem* fs);
  ~DBImpl() override;

  // Locks the directory, reads the manifest, opens every collection.
  absl::Status Open();

  using DB::BulkLoad;
  using DB::Delete;
  using DB::Get;
  using DB::Put;
  using DB::PutBatch;
  using DB::Search;
  using DB::SearchBatch;

  absl::Status CreateCollection(std::string_view name,
                                const CollectionOptions& options) override;
  absl::Status DropCollection(std::string_view name) override;
  std::vector<std::string> ListCollections() const override;
  absl::StatusOr<CollectionOptions> GetCollectionOptions(
      std::string_view name) const override;

  absl::Status Put(std::string_view collection, uint64_t id,
                   std::span<const float> vector) override;
  absl::Status PutBatch(std::string_view collection, std::span<const uint64_t> ids,
                        std::span<const float> vectors) override;
  absl::Status Delete(std::string_view collection, uint64_t id) override;
  absl::StatusOr<std::vector<float>> Get(std::string_view collection, uint64_t id) override;
  absl::StatusOr<std::vector<Neighbor>> Search(std::string_view collection,
                                               std::span<const float> query,
                                               const SearchOptions& options) override;
  absl::StatusOr<std::vector<std::vector<Neighbor>>> SearchBatch(
      std::string_view collection, std::span<const float> queries,
      const SearchOptions& options) override;
  absl::Status BulkLoad(std::string_view collection, std::span<const uint64_t> ids,
                        std::span<const float> vectors,
                        const BulkLoadOptions& options) override;
  absl::Status Put(std::string_view collection, const Record& record) override;
  absl::Status PutBatch(std::string_view collection, std::span<const Record> records) override;
  absl::Status BulkLoad(std::string_view collection, std::span<const Record> records,
                        const BulkLoadOptions& options) override;
  absl::StatusOr<RecordData> GetRecord(std::string_view collection, uint64_t id,
                                       uint32_t parts) override;
  absl::StatusOr<std::vector<std::optional<RecordData>>> GetRecords(
      std::string_view collection, std::span<const uint64_t> ids, uint32_t parts) override;
  absl::StatusOr<std::unique_ptr<RecordIterator>> Export(
      std::string_view collection, const ExportOptions& options) override;
  absl::Status IngestSegments(std::string_view collection, std::span<const std::string> files,
                              const IngestOptions& options) override;
  using DB::IngestSegments;
  using DB::Export;
  // db/checkpoint.cc.
  absl::Status Checkpoint(const std::string& dir, const CheckpointOptions& options) override;
  using DB::Checkpoint;
  using DB::GetRecord;
  using DB::GetRecords;
  // db/db_reader.cc.
  absl::Status CatchUp() override;
  absl::Status Flush() override;
  // For the inspection tools (db/inspect.h).
  std::vector<struct CollectionReport> CollectStats() const;
  using DB::Compact;
  absl::Status Compact(const ProgressFn& progress) override;
  absl::Status WaitForCompact() override;
  absl::Status Close() override;

 private:
  // Flush or Compact on every collection (Flush(), Compact()).
  absl::Status ForEachCollection(absl::Status (Collection::*call)());
  absl::StatusOr<std::shared_ptr<Collection>> Find(std::string_view name) const;
  absl::Status CreateLocked(std::string_view name, CollectionOptions options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes manifest_ to MANIFEST atomically. When the write fails after its
  // rename (ManifestWriteInDoubt), manifest_ is what MANIFEST now holds but
  // perhaps not durably: the database turns read-only (CheckWritable) and
  // the caller must keep manifest_ and delete no file.
  absl::Status WriteManifestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(manifest_mu_);
  // OK, or the error that made the database read-only until reopened.
  absl::Status CheckWritable() const;
  // `incarnation`: a number no other collection opened or created by this
  // DBImpl has (CollectionMeta::incarnation).
  Collection::Context MakeContext(uint64_t incarnation);
  std::atomic<uint64_t> next_incarnation_{1};
  // ManifestEditor:
  uint64_t NewFileNumber() override;
  absl::Status Apply(const std::string& collection, uint64_t incarnation,
                     std::span<const ShardEdit> edits) override;
  absl::Status OpenDefaultCollection() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void IntervalSyncLoop();
  // The background thread's wait between two rounds (IntervalSyncLoop,
  // CatchUpLoop): `period`, or until Close asks it to stop (then false).
  bool WaitForNextRound(std::chrono::steady_clock::duration period)
      ABSL_LOCKS_EXCLUDED(sync_thread_mu_);

  // ---- A reader (Options::read_only; db/db_reader.cc) ----
  // Open's work for a reader: no lock, no file written; the first catch-up.
  absl::Status OpenReader() ABSL_LOCKS_EXCLUDED(mu_);
  // One attempt of CatchUp: the manifest read, every collection followed or
  // opened again. AbortedError / NotFoundError: the writer changed files
  // meanwhile, try again.
  absl::Status CatchUpOnce() ABSL_EXCLUSIVE_LOCKS_REQUIRED(catch_up_mu_);
  // CatchUpOnce's work on one collection of the manifest: follows the logs
  // of `existing` (may be null) when `meta` is the entry it was opened
  // from, else opens the collection again from `meta` into *opened.
  absl::Status CatchUpCollection(CollectionMeta& meta, Collection* existing,
                                 std::shared_ptr<Collection>* opened)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(catch_up_mu_);
  // Options::catch_up_interval_ms (on sync_thread_).
  void CatchUpLoop();
  // The error every call that would change a reader's database returns.
  absl::Status ReadOnlyError() const;
  // MANIFEST as a reader reads it (whole; DataLoss when damaged).
  absl::StatusOr<Manifest> ReadManifestForReader() const;
  Mutex catch_up_mu_;  // one catch-up at a time; before mu_
  // Segments open, by number, for the next collection a catch-up opens
  // (those of the collections it replaces, and of an attempt that failed).
  absl::flat_hash_map<uint64_t, std::shared_ptr<Segment>> spare_segments_
      ABSL_GUARDED_BY(catch_up_mu_);
  std::vector<std::shared_ptr<Collection>> AllCollections() const;

  const Options options_;
  const std::string path_;
  FileSystem* const fs_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<BackgroundWorker> prefaulter_;
  std::unique_ptr<BackgroundWorker> flusher_;
  std::unique_ptr<BackgroundWorker> compactor_;  // background merges (Options::compaction)
  // Options::memory_budget_bytes (kDisk segments' codes and caches).
  const std::shared_ptr<MemoryBudget> memory_budget_ =
      MemoryBudget::Create(options_.memory_budget_bytes);
  // Removes obsolete files, held off while a checkpoint copies (before the
  // collections, which use it).
  FileDeleter file_deleter_{fs_};

  // The manifest as last written. Lock order: mu_ before manifest_mu_.
  mutable Mutex manifest_mu_;
  Manifest manifest_ ABSL_GUARDED_BY(manifest_mu_);
  std::atomic<bool> read_only_{false};
  absl::Status read_only_cause_ ABSL_GUARDED_BY(manifest_mu_);
  std::unique_ptr<FileLock> lock_;

  mutable Mutex mu_;
  // Collections by name; one being dropped stays until its files are gone,
  // marked (Collection::dropped), and is signalled on dropped_ when it goes.
  std::map<std::string, std::shared_ptr<Collection>, std::less<>> collections_
      ABSL_GUARDED_BY(mu_);
  CondVar dropped_;
  std::atomic<bool> closed_{false};

  Mutex sync_thread_mu_;
  CondVar sync_thread_wake_;
  bool stop_sync_thread_ ABSL_GUARDED_BY(sync_thread_mu_) = false;
  std::thread sync_thread_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_DB_DB_IMPL_H_

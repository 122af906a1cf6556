// Copyright 2026 The shoal Authors.

#include "db/db_impl.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "db/validate.h"
#include "util/status_macros.h"
#include "util/string_view.h"

namespace shoal {

absl::StatusOr<std::unique_ptr<DB>> OpenWithFileSystem(const Options& options,
                                                       const std::string& path,
                                                       FileSystem* fs) {
  SHOAL_RETURN_IF_ERROR(ValidateOptions(options));
  if (path.empty()) return absl::InvalidArgumentError("database path is empty");
  auto db = std::make_unique<DBImpl>(options, path, fs);
  SHOAL_RETURN_IF_ERROR(db->Open());
  return std::unique_ptr<DB>(std::move(db));
}

absl::StatusOr<std::unique_ptr<DB>> DB::Open(const Options& options,
                                             const std::string& path) {
  return OpenWithFileSystem(options, path, FileSystem::Default());
}

DBImpl::DBImpl(const Options& options, std::string path, FileSystem* fs)
    : options_(options), path_(std::move(path)), fs_(fs) {}

DBImpl::~DBImpl() { (void)Close(); }

absl::Status DBImpl::Open() {
  if (!fs_->Exists(path_)) {
    if (!options_.create_if_missing) {
      return absl::NotFoundError(absl::StrCat(
          "database ", path_, " does not exist (Options::create_if_missing is false)"));
    }
    SHOAL_RETURN_IF_ERROR(fs_->CreateDir(path_));
  }
  SHOAL_ASSIGN_OR_RETURN(lock_, fs_->LockFile(JoinPath(path_, kLockFile)));
  pool_ = std::make_unique<ThreadPool>(options_.worker_threads);
  prefaulter_ = std::make_unique<BackgroundWorker>();

  MutexLock lock(&mu_);
  const std::string manifest_path = JoinPath(path_, kManifestFile);
  if (fs_->Exists(manifest_path)) {
    if (options_.error_if_exists) {
      return absl::AlreadyExistsError(absl::StrCat(
          "database ", path_, " already exists (Options::error_if_exists is set)"));
    }
    SHOAL_ASSIGN_OR_RETURN(std::string bytes, fs_->ReadFile(manifest_path));
    SHOAL_ASSIGN_OR_RETURN(Manifest manifest, DecodeManifest(bytes, manifest_path));
    std::vector<std::shared_ptr<Collection>> opened(manifest.collections.size());
    for (size_t i = 0; i < manifest.collections.size(); ++i) {
      const CollectionMeta& meta = manifest.collections[i];
      SHOAL_ASSIGN_OR_RETURN(
          opened[i], Collection::Open(fs_, pool_.get(), prefaulter_.get(), JoinPath(path_, meta.name),
                                      meta.name, meta.options, options_));
    }
    for (auto& c : opened) collections_.emplace(c->name(), std::move(c));
  } else {
    SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(path_));
    for (const std::string& name : names) {
      if (name != kLockFile && name != absl::StrCat(AsAbsl(kManifestFile), ".tmp")) {
        return absl::FailedPreconditionError(absl::StrCat(
            "directory ", path_, " is not empty and holds no shoal database (no ",
            AsAbsl(kManifestFile), "; found '", name, "')"));
      }
    }
    SHOAL_RETURN_IF_ERROR(WriteManifestLocked());
  }
  SHOAL_RETURN_IF_ERROR(OpenDefaultCollection());

  if (options_.fsync == FsyncPolicy::kInterval) {
    sync_thread_ = std::thread([this] { IntervalSyncLoop(); });
  }
  return absl::OkStatus();
}

absl::Status DBImpl::OpenDefaultCollection() {
  const CollectionOptions& want = options_.default_collection;
  if (want.dim == 0) return absl::OkStatus();
  auto it = collections_.find(kDefaultCollection);
  if (it == collections_.end()) return CreateLocked(kDefaultCollection, want);
  const CollectionOptions& have = it->second->options();
  if (have.dim != want.dim || have.metric != want.metric ||
      (want.shard_count != 0 && want.shard_count != have.shard_count)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Options::default_collection (dim ", want.dim, ", metric ",
        static_cast<int>(want.metric), ", shards ", want.shard_count,
        ") differs from the stored default collection (dim ", have.dim, ", metric ",
        static_cast<int>(have.metric), ", shards ", have.shard_count,
        "); pass dim 0 to open it as stored"));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::WriteManifestLocked() {
  Manifest manifest;
  for (const auto& [name, c] : collections_) manifest.collections.push_back({name, c->options()});
  return WriteFileAtomic(fs_, JoinPath(path_, kManifestFile), EncodeManifest(manifest));
}

absl::StatusOr<std::shared_ptr<Collection>> DBImpl::Find(std::string_view name) const {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("database is closed");
  }
  ReaderMutexLock lock(&mu_);
  auto it = collections_.find(name);
  if (it == collections_.end()) {
    return absl::NotFoundError(absl::StrCat("collection '", AsAbsl(name), "' does not exist"));
  }
  return it->second;
}

absl::Status DBImpl::CreateCollection(std::string_view name,
                                      const CollectionOptions& options) {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  MutexLock lock(&mu_);
  return CreateLocked(name, options);
}

absl::Status DBImpl::CreateLocked(std::string_view name, CollectionOptions options) {
  SHOAL_RETURN_IF_ERROR(ValidateCollectionName(name));
  SHOAL_RETURN_IF_ERROR(ValidateCollectionOptions(options));
  if (collections_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("collection '", AsAbsl(name), "' already exists"));
  }
  if (options.shard_count == 0) {
    options.shard_count = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxShards);
  }
  const std::string dir = JoinPath(path_, name);
  // Files left by a drop that crashed before removing them belong to no one.
  SHOAL_RETURN_IF_ERROR(fs_->RemoveDirRecursive(dir));
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c,
                         Collection::Open(fs_, pool_.get(), prefaulter_.get(), dir, std::string(name),
                                          options, options_));
  collections_.emplace(std::string(name), c);
  absl::Status s = WriteManifestLocked();
  if (!s.ok()) {
    collections_.erase(collections_.find(name));
    (void)c->Close();
    (void)fs_->RemoveDirRecursive(dir);
  }
  return s;
}

absl::Status DBImpl::DropCollection(std::string_view name) {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  MutexLock lock(&mu_);
  auto it = collections_.find(name);
  if (it == collections_.end()) {
    return absl::NotFoundError(absl::StrCat("collection '", AsAbsl(name), "' does not exist"));
  }
  std::shared_ptr<Collection> c = it->second;
  collections_.erase(it);
  absl::Status s = WriteManifestLocked();
  if (!s.ok()) {
    collections_.emplace(c->name(), c);
    return s;
  }
  // The manifest no longer names it: from here a crash leaves only garbage
  // files, which the next CreateCollection of this name removes.
  (void)c->Close();
  SHOAL_RETURN_IF_ERROR(fs_->RemoveDirRecursive(c->dir()));
  return fs_->SyncDir(path_);
}

std::vector<std::string> DBImpl::ListCollections() const {
  ReaderMutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, c] : collections_) names.push_back(name);
  return names;  // std::map: already sorted
}

absl::StatusOr<CollectionOptions> DBImpl::GetCollectionOptions(std::string_view name) const {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  return c->options();
}

absl::Status DBImpl::Put(std::string_view collection, uint64_t id,
                         std::span<const float> vector) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return c->Put(id, vector);
}

absl::Status DBImpl::PutBatch(std::string_view collection, std::span<const uint64_t> ids,
                              std::span<const float> vectors) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return c->PutBatch(ids, vectors);
}

absl::Status DBImpl::Delete(std::string_view collection, uint64_t id) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return c->Delete(id);
}

absl::StatusOr<std::vector<float>> DBImpl::Get(std::string_view collection, uint64_t id) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return c->Get(id);
}

absl::StatusOr<std::vector<Neighbor>> DBImpl::Search(std::string_view collection,
                                                     std::span<const float> query,
                                                     const SearchOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return c->Search(query, options);
}

absl::StatusOr<std::vector<std::vector<Neighbor>>> DBImpl::SearchBatch(
    std::string_view collection, std::span<const float> queries,
    const SearchOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return c->SearchBatch(queries, options);
}

absl::Status DBImpl::BulkLoad(std::string_view collection, std::span<const uint64_t> ids,
                              std::span<const float> vectors) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return absl::UnimplementedError("BulkLoad needs on-disk segments, which this version lacks");
}

absl::Status DBImpl::Flush() {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  return absl::UnimplementedError("Flush needs on-disk segments, which this version lacks");
}

absl::Status DBImpl::Compact() {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  return absl::UnimplementedError("Compact needs on-disk segments, which this version lacks");
}

void DBImpl::IntervalSyncLoop() {
  const auto period = std::chrono::microseconds(options_.sync_interval_us);
  while (true) {
    {
      MutexLock lock(&sync_thread_mu_);
      const auto deadline = std::chrono::steady_clock::now() + period;
      while (!stop_sync_thread_ && std::chrono::steady_clock::now() < deadline) {
        sync_thread_wake_.WaitFor(&sync_thread_mu_, deadline - std::chrono::steady_clock::now());
      }
      if (stop_sync_thread_) return;
    }
    std::vector<std::shared_ptr<Collection>> all;
    {
      ReaderMutexLock lock(&mu_);
      for (const auto& [name, c] : collections_) all.push_back(c);
    }
    // A failed sync is sticky in the log: the next write reports it.
    for (auto& c : all) (void)c->SyncWal();
  }
}

absl::Status DBImpl::Close() {
  if (closed_.exchange(true)) return absl::OkStatus();
  if (sync_thread_.joinable()) {
    {
      MutexLock lock(&sync_thread_mu_);
      stop_sync_thread_ = true;
    }
    sync_thread_wake_.SignalAll();
    sync_thread_.join();
  }
  absl::Status first;
  {
    MutexLock lock(&mu_);
    for (auto& [name, c] : collections_) {
      absl::Status s = c->Close();
      if (first.ok()) first = s;
    }
    collections_.clear();
  }
  prefaulter_.reset();
  pool_.reset();
  lock_.reset();
  return first;
}

}  // namespace shoal

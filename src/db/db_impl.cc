// Copyright 2026 The shoal Authors.

#include "db/db_impl.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <new>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "version/manifest_editor.h"
#include "db/validate.h"
#include "util/start_thread.h"
#include "util/status_macros.h"
#include "version/filename.h"
#include "util/string_view.h"

namespace shoal {
namespace {

// The API boundary: no call throws. Sizes that come from a caller are
// bounded by the data or rejected, but memory can still run out; then the
// call returns ResourceExhaustedError (what it did before the failed
// allocation stays done, like the writes before an I/O error).
template <typename F>
auto NoThrow(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory");
  }
}

// A call on `c` that DropCollection overtook (it closed c's shards,
// refused c's manifest edits, removed c's files under the call) fails as a
// call made after the drop does: NotFound naming the collection. Bad input
// stays InvalidArgument (it is checked before anything else).
absl::Status DroppedAsNotFound(const Collection& c, absl::Status s) {
  if (s.ok() || s.code() == absl::StatusCode::kInvalidArgument || !c.dropped()) return s;
  return absl::NotFoundError(absl::StrCat("collection '", c.name(),
                                          "' was dropped during the call (", s.message(), ")"));
}
template <typename T>
absl::StatusOr<T> DroppedAsNotFound(const Collection& c, absl::StatusOr<T> r) {
  if (r.ok()) return r;
  return DroppedAsNotFound(c, std::move(r).status());
}

}  // namespace

absl::StatusOr<std::unique_ptr<DB>> DB::Open(const Options& options,
                                             const std::string& path) {
  SHOAL_RETURN_IF_ERROR(ValidateOptions(options));
  if (path.empty()) return absl::InvalidArgumentError("database path is empty");
  FileSystem* fs =
      options.file_system != nullptr ? options.file_system : FileSystem::Default();
  auto db = std::make_unique<DBImpl>(options, path, fs);
  SHOAL_RETURN_IF_ERROR(NoThrow([&] { return db->Open(); }));
  return std::unique_ptr<DB>(std::move(db));
}

DBImpl::DBImpl(const Options& options, std::string path, FileSystem* fs)
    : options_(options), path_(std::move(path)), fs_(fs) {}

DBImpl::~DBImpl() { (void)Close(); }

absl::Status DBImpl::Open() {
  if (options_.read_only) return OpenReader();
  if (!fs_->Exists(path_)) {
    if (!options_.create_if_missing) {
      return absl::NotFoundError(absl::StrCat(
          "database ", path_, " does not exist (Options::create_if_missing is false)"));
    }
    SHOAL_RETURN_IF_ERROR(fs_->CreateDir(path_));
    // The new directory's entry in its parent must be durable too.
    const std::string parent = std::filesystem::path(path_).parent_path().string();
    SHOAL_RETURN_IF_ERROR(fs_->SyncDir(parent.empty() ? "." : parent));
  }
  SHOAL_ASSIGN_OR_RETURN(lock_, fs_->LockFile(JoinPath(path_, kLockFile)));
  SHOAL_ASSIGN_OR_RETURN(pool_, ThreadPool::Create(options_.worker_threads));
  SHOAL_ASSIGN_OR_RETURN(prefaulter_, BackgroundWorker::Create());
  SHOAL_ASSIGN_OR_RETURN(flusher_, BackgroundWorker::Create());
  SHOAL_ASSIGN_OR_RETURN(compactor_, BackgroundWorker::Create());

  MutexLock lock(&mu_);
  const std::string manifest_path = JoinPath(path_, kManifestFile);
  if (fs_->Exists(manifest_path)) {
    if (options_.error_if_exists) {
      return absl::AlreadyExistsError(absl::StrCat(
          "database ", path_, " already exists (Options::error_if_exists is set)"));
    }
    SHOAL_ASSIGN_OR_RETURN(std::string bytes, fs_->ReadFile(manifest_path));
    SHOAL_ASSIGN_OR_RETURN(Manifest manifest, DecodeManifest(bytes, manifest_path));
    // A manifest write cut short (a crash before its rename) left its
    // temporary; nothing reads it.
    const std::string manifest_tmp = JoinPath(path_, TempFileName(kManifestFile));
    if (fs_->Exists(manifest_tmp)) SHOAL_RETURN_IF_ERROR(fs_->RemoveFile(manifest_tmp));
    for (CollectionMeta& meta : manifest.collections) meta.incarnation = next_incarnation_++;
    {
      MutexLock manifest_lock(&manifest_mu_);
      manifest_ = manifest;
    }
    std::vector<std::shared_ptr<Collection>> opened(manifest.collections.size());
    for (size_t i = 0; i < manifest.collections.size(); ++i) {
      const CollectionMeta& meta = manifest.collections[i];
      SHOAL_ASSIGN_OR_RETURN(opened[i],
                             Collection::Open(MakeContext(meta.incarnation),
                                              JoinPath(path_, meta.name),
                                              meta.name, meta.options, meta.shards));
    }
    for (auto& c : opened) collections_.emplace(c->name(), std::move(c));
  } else {
    SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(path_));
    for (const std::string& name : names) {
      if (name != kLockFile && name != TempFileName(kManifestFile)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "directory ", path_, " is not empty and holds no shoal database (no ",
            AsAbsl(kManifestFile), "; found '", name, "')"));
      }
    }
    MutexLock manifest_lock(&manifest_mu_);
    SHOAL_RETURN_IF_ERROR(WriteManifestLocked());
  }
  SHOAL_RETURN_IF_ERROR(OpenDefaultCollection());

  if (options_.fsync == FsyncPolicy::kInterval) {
    SHOAL_RETURN_IF_ERROR(StartThread(&sync_thread_, [this] { IntervalSyncLoop(); }));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::OpenDefaultCollection() {
  const CollectionOptions& want = options_.default_collection;
  if (want.dim == 0) return absl::OkStatus();
  auto it = collections_.find(kDefaultCollection);
  if (it == collections_.end()) {
    // A reader creates nothing: calls on it are NotFound until a writer has.
    return options_.read_only ? absl::OkStatus() : CreateLocked(kDefaultCollection, want);
  }
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
  if (!want.attributes.empty() && want.attributes != have.attributes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Options::default_collection declares attributes (", absl::StrJoin(want.attributes, ", "),
        ") other than the stored default collection's (", absl::StrJoin(have.attributes, ", "),
        "); pass none to open it as stored"));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::WriteManifestLocked() {
  if (read_only_.load(std::memory_order_acquire)) return read_only_cause_;
  bool renamed = false;
  absl::Status s =
      WriteFileAtomic(fs_, JoinPath(path_, kManifestFile), EncodeManifest(manifest_), &renamed);
  if (s.ok() || !renamed) return s;
  // The new MANIFEST is in place; whether it survives a crash is unknown, so
  // from here neither the old nor the new one may lose a file it names.
  read_only_cause_ = absl::Status(
      s.code(), absl::StrCat("database is read-only until reopened: a MANIFEST write "
                             "failed after its rename (",
                             s.message(), ")"));
  read_only_.store(true, std::memory_order_release);
  return MarkManifestWriteInDoubt(std::move(s));
}

absl::Status DBImpl::CheckWritable() const {
  if (options_.read_only) return ReadOnlyError();
  if (!read_only_.load(std::memory_order_acquire)) return absl::OkStatus();
  MutexLock lock(&manifest_mu_);
  return read_only_cause_;
}

Collection::Context DBImpl::MakeContext(uint64_t incarnation) {
  Collection::Context context;
  context.incarnation = incarnation;
  context.fs = fs_;
  context.pool = pool_.get();
  context.prefaulter = prefaulter_.get();
  context.flusher = flusher_.get();
  context.compactor = compactor_.get();
  context.manifest = this;
  context.file_deleter = &file_deleter_;
  context.memory_budget = memory_budget_;
  context.db_options = options_;
  return context;
}

uint64_t DBImpl::NewFileNumber() {
  MutexLock lock(&manifest_mu_);
  return manifest_.next_file_number++;
}

absl::Status DBImpl::Apply(const std::string& collection, uint64_t incarnation,
                           std::span<const ShardEdit> edits) {
  MutexLock lock(&manifest_mu_);
  auto it = std::find_if(manifest_.collections.begin(), manifest_.collections.end(),
                         [&](const CollectionMeta& c) {
                           return c.name == collection && c.incarnation == incarnation;
                         });
  if (it == manifest_.collections.end()) {
    return absl::NotFoundError(absl::StrCat("collection '", collection, "' was dropped"));
  }
  const Manifest before = manifest_;
  for (const ShardEdit& edit : edits) {
    ShardMeta& shard = it->shards.at(edit.shard);
    std::erase_if(shard.segments, [&](const SegmentMeta& m) {
      return std::find(edit.remove.begin(), edit.remove.end(), m.number) != edit.remove.end();
    });
    shard.segments.insert(shard.segments.end(), edit.add.begin(), edit.add.end());
    std::sort(shard.segments.begin(), shard.segments.end(),
              [](const SegmentMeta& a, const SegmentMeta& b) {
                return a.max_sequence < b.max_sequence;
              });
    shard.flushed_sequence = std::max(shard.flushed_sequence, edit.flushed_sequence);
  }
  absl::Status s = WriteManifestLocked();
  // Not durable: not in effect. In doubt: MANIFEST holds it, keep it.
  if (!s.ok() && !ManifestWriteInDoubt(s)) manifest_ = before;
  return s;
}

absl::StatusOr<std::shared_ptr<Collection>> DBImpl::Find(std::string_view name) const {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("database is closed");
  }
  ReaderMutexLock lock(&mu_);
  auto it = collections_.find(name);
  // A collection being dropped stays in collections_ until its files are
  // gone (DropCollection), unknown to every call.
  if (it == collections_.end() || it->second->dropped()) {
    return absl::NotFoundError(absl::StrCat("collection '", AsAbsl(name), "' does not exist"));
  }
  return it->second;
}

absl::Status DBImpl::CreateCollection(std::string_view name,
                                      const CollectionOptions& options) {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  MutexLock lock(&mu_);
  // A drop of the same name in progress: wait until its files are gone.
  for (auto it = collections_.find(name); it != collections_.end() && it->second->dropped();
       it = collections_.find(name)) {
    dropped_.WaitFor(&mu_, std::chrono::milliseconds(10));
  }
  return NoThrow([&] { return CreateLocked(name, options); });
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
  const uint64_t incarnation = next_incarnation_++;
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c,
                         Collection::Open(MakeContext(incarnation), dir, std::string(name),
                                          options, {}));
  absl::Status s;
  {
    MutexLock manifest_lock(&manifest_mu_);
    CollectionMeta meta{std::string(name), options, {}, incarnation};
    meta.shards.resize(options.shard_count);
    manifest_.collections.push_back(std::move(meta));
    s = WriteManifestLocked();
    if (!s.ok() && !ManifestWriteInDoubt(s)) manifest_.collections.pop_back();
  }
  if (ManifestWriteInDoubt(s)) {
    // Perhaps created: keep it and its files (writes are refused anyway).
    collections_.emplace(std::string(name), std::move(c));
    return s;
  }
  if (!s.ok()) {
    (void)c->Close();
    (void)fs_->RemoveDirRecursive(dir);
    return s;
  }
  collections_.emplace(std::string(name), std::move(c));
  return absl::OkStatus();
}

absl::Status DBImpl::DropCollection(std::string_view name) {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  std::shared_ptr<Collection> c;
  {
    MutexLock lock(&mu_);
    auto it = collections_.find(name);
    if (it == collections_.end() || it->second->dropped()) {
      return absl::NotFoundError(
          absl::StrCat("collection '", AsAbsl(name), "' does not exist"));
    }
    c = it->second;
    MutexLock manifest_lock(&manifest_mu_);
    const Manifest before = manifest_;
    std::erase_if(manifest_.collections,
                  [&](const CollectionMeta& m) { return m.name == c->name(); });
    // Before anyone can see the edit (Apply takes manifest_mu_): a flush or
    // compaction refused by it finds the collection marked.
    c->set_dropped(true);
    absl::Status s = WriteManifestLocked();
    if (ManifestWriteInDoubt(s)) {
      // Perhaps dropped: it is gone from this process, its files stay for
      // the old MANIFEST to find after a crash.
      collections_.erase(it);
      (void)c->Close();
      return s;
    }
    if (!s.ok()) {
      manifest_ = before;
      c->set_dropped(false);
      return s;
    }
  }
  // The manifest no longer names it: from here a crash leaves only garbage
  // files, which the next CreateCollection of this name removes. Closing
  // waits for the collection's running merge or bulk load, so it runs
  // without mu_: other collections' calls go on meanwhile. The entry stays,
  // marked dropped (NotFound to every call; a CreateCollection of the name
  // waits), until the files are gone. A checkpoint whose cut holds the
  // collection (taken before the drop) may be copying its files: they stay
  // until it ends (checkpoints taken after the drop leave it out).
  file_deleter_.WaitUntilNoHold();
  (void)c->Close();
  absl::Status removed = fs_->RemoveDirRecursive(c->dir());
  if (removed.ok()) removed = fs_->SyncDir(path_);
  MutexLock lock(&mu_);
  if (auto it = collections_.find(name); it != collections_.end() && it->second == c) {
    collections_.erase(it);
  }
  dropped_.SignalAll();
  return removed;
}

std::vector<std::string> DBImpl::ListCollections() const {
  ReaderMutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, c] : collections_) {
    if (!c->dropped()) names.push_back(name);
  }
  return names;  // std::map: already sorted
}

absl::StatusOr<CollectionOptions> DBImpl::GetCollectionOptions(std::string_view name) const {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  return c->options();
}

absl::Status DBImpl::Put(std::string_view collection, uint64_t id,
                         std::span<const float> vector) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->Put(id, vector); }));
}

absl::Status DBImpl::PutBatch(std::string_view collection, std::span<const uint64_t> ids,
                              std::span<const float> vectors) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->PutBatch(ids, vectors); }));
}

absl::Status DBImpl::Delete(std::string_view collection, uint64_t id) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->Delete(id); }));
}

absl::StatusOr<std::vector<float>> DBImpl::Get(std::string_view collection, uint64_t id) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->Get(id); }));
}

absl::StatusOr<std::vector<Neighbor>> DBImpl::Search(std::string_view collection,
                                                     std::span<const float> query,
                                                     const SearchOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->Search(query, options); }));
}

absl::StatusOr<std::vector<std::vector<Neighbor>>> DBImpl::SearchBatch(
    std::string_view collection, std::span<const float> queries,
    const SearchOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->SearchBatch(queries, options); }));
}

absl::Status DBImpl::Put(std::string_view collection, const Record& record) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->Put(record); }));
}

absl::Status DBImpl::PutBatch(std::string_view collection, std::span<const Record> records) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->PutBatch(records); }));
}

absl::Status DBImpl::BulkLoad(std::string_view collection, std::span<const Record> records,
                              const BulkLoadOptions& options) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->BulkLoad(records, options); }));
}

absl::StatusOr<RecordData> DBImpl::GetRecord(std::string_view collection, uint64_t id,
                                             uint32_t parts) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->GetRecord(id, parts); }));
}

absl::StatusOr<std::vector<std::optional<RecordData>>> DBImpl::GetRecords(
    std::string_view collection, std::span<const uint64_t> ids, uint32_t parts) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->GetRecords(ids, parts); }));
}

absl::StatusOr<std::unique_ptr<RecordIterator>> DBImpl::Export(
    std::string_view collection, const ExportOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->Export(options); }));
}

absl::Status DBImpl::IngestSegments(std::string_view collection,
                                    std::span<const std::string> files,
                                    const IngestOptions& options) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->IngestSegments(files, options); }));
}

absl::Status DBImpl::BulkLoad(std::string_view collection, std::span<const uint64_t> ids,
                              std::span<const float> vectors,
                              const BulkLoadOptions& options) {
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  SHOAL_ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return DroppedAsNotFound(*c, NoThrow([&] { return c->BulkLoad(ids, vectors, options); }));
}

std::vector<std::shared_ptr<Collection>> DBImpl::AllCollections() const {
  ReaderMutexLock lock(&mu_);
  std::vector<std::shared_ptr<Collection>> all;
  for (const auto& [name, c] : collections_) {
    if (!c->dropped()) all.push_back(c);
  }
  return all;
}

absl::Status DBImpl::ForEachCollection(absl::Status (Collection::*call)()) {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  // Every collection gets the call, also after another one failed; a
  // collection dropped meanwhile is skipped, whatever its call returned.
  absl::Status first;
  for (auto& c : AllCollections()) {
    absl::Status s = NoThrow([&] { return (c.get()->*call)(); });
    if (!s.ok() && !c->dropped() && first.ok()) first = std::move(s);
  }
  return first;
}

absl::Status DBImpl::Flush() { return ForEachCollection(&Collection::Flush); }

absl::Status DBImpl::Compact(const ProgressFn& progress) {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  SHOAL_RETURN_IF_ERROR(CheckWritable());
  // As ForEachCollection, counting shards for `progress`.
  const std::vector<std::shared_ptr<Collection>> all = AllCollections();
  uint64_t total = 0, done = 0;
  for (const auto& c : all) total += c->options().shard_count;
  absl::Status first;
  for (const auto& c : all) {
    absl::Status s = NoThrow([&] {
      return c->Compact([&](uint32_t shards) {
        done += shards;
        if (progress) progress(done, total);
      });
    });
    if (!s.ok() && !c->dropped() && first.ok()) first = std::move(s);
  }
  return first;
}

absl::Status DBImpl::WaitForCompact() {
  if (closed_.load()) return absl::FailedPreconditionError("database is closed");
  if (options_.read_only) return absl::OkStatus();  // a reader runs no flush or merge
  absl::Status first;
  for (auto& c : AllCollections()) {
    absl::Status s = c->WaitForCompact();
    if (!s.ok() && !c->dropped() && first.ok()) first = std::move(s);
  }
  return first;
}

std::vector<CollectionReport> DBImpl::CollectStats() const {
  std::vector<CollectionReport> out;
  for (const auto& c : AllCollections()) out.push_back(c->Report());
  return out;
}

bool DBImpl::WaitForNextRound(std::chrono::steady_clock::duration period) {
  MutexLock lock(&sync_thread_mu_);
  const auto deadline = std::chrono::steady_clock::now() + period;
  while (!stop_sync_thread_ && std::chrono::steady_clock::now() < deadline) {
    sync_thread_wake_.WaitFor(&sync_thread_mu_, deadline - std::chrono::steady_clock::now());
  }
  return !stop_sync_thread_;
}

void DBImpl::IntervalSyncLoop() {
  const auto period = std::chrono::microseconds(options_.sync_interval_us);
  while (WaitForNextRound(period)) {
    std::vector<std::shared_ptr<Collection>> all = AllCollections();
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
  compactor_.reset();
  flusher_.reset();
  prefaulter_.reset();
  pool_.reset();
  lock_.reset();
  return first;
}

}  // namespace shoal

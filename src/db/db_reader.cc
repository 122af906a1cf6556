// Copyright 2026 The shoal Authors.
//
// A reader (Options::read_only): opening a database beside its writer
// without writing a file, and catching up with what the writer did since
// (DB::CatchUp). docs/architecture.md, "Reader processes (issue 46)".
//
// What a reader relies on, none of it a lock: MANIFEST is replaced by
// rename (read whole, it is one version or the next, checksummed);
// segments are immutable once a manifest names them, and stay readable
// while open after the writer removes them (a mapping or a descriptor
// outlives the name); a log record is whole once its checksum matches
// (stored last), and records never move. What it handles by starting
// again from the manifest: a file the manifest (or the log's order) names
// that is gone before it is opened.

#include <chrono>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "db/db_impl.h"
#include "util/start_thread.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {
namespace {

// Attempts of one CatchUp before it gives up (UnavailableError), and the
// pause between two (doubling from 1 ms, at most 16 ms): a writer that
// flushes or merges keeps each attempt's window a few milliseconds wide.
constexpr int kCatchUpAttempts = 64;
constexpr int kMaxPauseMs = 16;

// Whether an attempt failed because the writer changed files under it.
bool Retryable(const absl::Status& s) {
  return absl::IsAborted(s) || absl::IsNotFound(s);
}

}  // namespace

absl::Status DBImpl::ReadOnlyError() const {
  return absl::FailedPreconditionError(absl::StrCat(
      "database ", path_,
      " is open read-only (Options::read_only): changes go through its writer"));
}

absl::Status DBImpl::OpenReader() {
  if (!fs_->Exists(path_)) {
    return absl::NotFoundError(absl::StrCat("database ", path_, " does not exist"));
  }
  if (!fs_->Exists(JoinPath(path_, kManifestFile))) {
    return absl::NotFoundError(
        absl::StrCat("directory ", path_, " holds no shoal database (no MANIFEST)"));
  }
  SHOAL_ASSIGN_OR_RETURN(pool_, ThreadPool::Create(options_.worker_threads));
  SHOAL_RETURN_IF_ERROR(CatchUp());
  {
    MutexLock lock(&mu_);
    SHOAL_RETURN_IF_ERROR(OpenDefaultCollection());
  }
  if (options_.catch_up_interval_ms > 0) {
    SHOAL_RETURN_IF_ERROR(StartThread(&sync_thread_, [this] { CatchUpLoop(); }));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::CatchUp() {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("database is closed");
  }
  if (!options_.read_only) return absl::OkStatus();  // a writer is its own present
  MutexLock lock(&catch_up_mu_);
  // Segments kept for the attempts, whatever the outcome: no segment the
  // writer removed stays open past the call for them.
  absl::Cleanup forget = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { spare_segments_.clear(); };
  absl::Status last;
  for (int attempt = 0; attempt < kCatchUpAttempts; ++attempt) {
    last = CatchUpOnce();
    if (!Retryable(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1 << std::min(attempt, 4),
                                                                   kMaxPauseMs)));
  }
  return absl::UnavailableError(
      absl::StrCat("catch-up of ", path_, ": the writer changed the files it needed ",
                   kCatchUpAttempts, " times running; call again (last: ", last.message(), ")"));
}

absl::StatusOr<Manifest> DBImpl::ReadManifestForReader() const {
  const std::string manifest_path = JoinPath(path_, kManifestFile);
  // Replaced by rename: what is read is one whole version. A manifest that
  // fails its checksum is damage (DataLoss), not a race.
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, fs_->ReadFile(manifest_path));
  return DecodeManifest(bytes, manifest_path);
}

absl::Status DBImpl::CatchUpCollection(CollectionMeta& meta, Collection* existing,
                                       std::shared_ptr<Collection>* opened) {
  if (existing != nullptr && existing->OpenedFrom(meta)) {
    // Same segments and flushed sequences: only the logs grew. Records are
    // applied in place (each one whole, in log order).
    return existing->FollowLogs();
  }
  // New, or flushed or merged since: opened again from this entry, keeping
  // the segments open already (also those of an attempt that failed).
  if (existing != nullptr) {
    for (auto& [number, segment] : existing->OpenSegments()) {
      spare_segments_.emplace(number, std::move(segment));
    }
  }
  meta.incarnation = next_incarnation_++;
  Collection::Context context = MakeContext(meta.incarnation);
  context.open_segments = &spare_segments_;
  SHOAL_ASSIGN_OR_RETURN(*opened, Collection::Open(context, JoinPath(path_, meta.name),
                                                   meta.name, meta.options, meta.shards));
  for (auto& [number, segment] : (*opened)->OpenSegments()) {
    spare_segments_.emplace(number, std::move(segment));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::CatchUpOnce() {
  SHOAL_ASSIGN_OR_RETURN(Manifest manifest, ReadManifestForReader());
  std::map<std::string, std::shared_ptr<Collection>, std::less<>> open;
  {
    ReaderMutexLock lock(&mu_);
    open = collections_;
  }
  // What the reader holds after this attempt: each collection followed or
  // opened again, or, where that failed for the writer's changes, as it
  // was (the first such failure voids the attempt, not the others' work).
  std::map<std::string, std::shared_ptr<Collection>, std::less<>> now;
  std::map<std::string, std::shared_ptr<Collection>, std::less<>> opened;
  absl::Status retry;
  auto note = [&](absl::Status s) {
    if (retry.ok()) retry = std::move(s);
  };
  for (CollectionMeta& meta : manifest.collections) {
    auto it = open.find(meta.name);
    Collection* existing = it != open.end() ? it->second.get() : nullptr;
    if (existing != nullptr) now.emplace(meta.name, it->second);
    std::shared_ptr<Collection> c;
    absl::Status s = CatchUpCollection(meta, existing, &c);
    if (!s.ok() && !Retryable(s)) return s;
    if (!s.ok()) note(std::move(s));
    if (c != nullptr) opened.emplace(meta.name, std::move(c));
  }
  // The logs were listed after the manifest was read, but a flush removes
  // the log files it replaced after its manifest edit: files the reader
  // needed may have gone before it listed them, leaving no gap to see when
  // no record follows yet. The manifest read again shows it: an entry
  // that changed meanwhile means try that collection again (from the new
  // entry). One that did not means no file it needs was removed before
  // the listing.
  SHOAL_ASSIGN_OR_RETURN(const Manifest again, ReadManifestForReader());
  absl::flat_hash_map<std::string, std::string> entries;
  for (const CollectionMeta& meta : again.collections) {
    entries.emplace(meta.name, EncodeCollectionEntry(meta));
  }
  for (const CollectionMeta& meta : manifest.collections) {
    const auto e = entries.find(meta.name);
    const bool same = e != entries.end() && e->second == EncodeCollectionEntry(meta);
    if (!same) {
      note(absl::AbortedError(absl::StrCat("collection '", meta.name,
                                           "' changed in the manifest during the catch-up")));
      continue;
    }
    const auto o = opened.find(meta.name);
    if (o != opened.end()) now[meta.name] = o->second;
  }
  {
    MutexLock lock(&mu_);
    // One swap; collections the writer dropped go (searches holding one
    // finish on it), closed below, after the lock.
    collections_.swap(now);
  }
  now.clear();
  open.clear();
  if (!retry.ok()) return retry;
  spare_segments_.clear();
  MutexLock manifest_lock(&manifest_mu_);
  manifest_ = std::move(manifest);
  return absl::OkStatus();
}

void DBImpl::CatchUpLoop() {
  const auto period = std::chrono::milliseconds(options_.catch_up_interval_ms);
  while (WaitForNextRound(period)) {
    (void)CatchUp();  // a failure leaves the state it had; the next period tries again
  }
}

}  // namespace shoal

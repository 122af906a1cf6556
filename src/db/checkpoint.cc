// Copyright 2026 The shoal Authors.
//
// DB::Checkpoint: a consistent, openable copy of the database at one moment,
// made while writers, flushes and merges go on (docs/architecture.md,
// "Checkpoints"). The steps, in order:
//   1. a staging directory `dir`.tmp with its marker;
//   2. a hold on file removals (version/file_deleter.h), then the cut: every
//      shard's segments, flushed sequence and log end, noted under every
//      shard's lock at once (Shard::TakeCheckpointViews);
//   3. segments linked or copied, log files copied up to the cut, each
//      synced, then every directory;
//   4. the staging directory renamed to `dir`, then MANIFEST (written from
//      the cut, not copied) put in place last, then the marker removed.
// Until step 4's MANIFEST nothing opens as a database.

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "db/db_impl.h"
#include "util/file_copy.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {
namespace {

// One file of the copy.
struct CopyStep {
  std::string from;
  std::string to;
  uint64_t bytes = 0;      // the whole file, or the log's prefix up to the cut
  bool immutable = false;  // a segment: may be linked
};

// What the cut found: the manifest of the copy and the files it needs.
struct CheckpointPlan {
  Manifest manifest;
  std::vector<std::string> dirs;  // relative to the copy's root, parents first
  std::vector<CopyStep> steps;
};

std::string ParentDir(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// Removes `dir` when it is a checkpoint's leftover (it holds the marker and
// no MANIFEST; or, with `empty_is_leftover`, nothing: a crash between the
// staging directory's creation and its marker); AlreadyExists when it is
// anything else.
absl::Status RemoveLeftover(FileSystem* fs, const std::string& dir, bool empty_is_leftover) {
  if (!fs->Exists(dir)) return absl::OkStatus();
  if (fs->Exists(JoinPath(dir, kCheckpointMarker)) && !fs->Exists(JoinPath(dir, kManifestFile))) {
    return fs->RemoveDirRecursive(dir);
  }
  if (empty_is_leftover) {
    absl::StatusOr<std::vector<std::string>> names = fs->ListDir(dir);
    if (names.ok() && names->empty()) return fs->RemoveDirRecursive(dir);
  }
  return absl::AlreadyExistsError(absl::StrCat("checkpoint: ", dir, " exists"));
}

// The log files of a shard (in `shard_dir`) that a copy cut at `view` needs:
// every one up to the cut's file, that one up to the cut's offset. Files at
// or below the flushed sequence that a flush has not removed yet come along;
// recovery skips their records.
absl::Status PlanLogs(FileSystem* fs, const std::string& shard_dir, const std::string& to_dir,
                      const Shard::CheckpointView& view, std::vector<CopyStep>* steps) {
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(shard_dir));
  bool found_cut_file = false;
  for (const std::string& name : names) {
    uint64_t number;
    if (!ParseWalFileName(name, &number) || number > view.log_number) continue;
    CopyStep step{JoinPath(shard_dir, name), JoinPath(to_dir, name), 0, false};
    if (number == view.log_number) {
      step.bytes = view.log_offset;
      found_cut_file = true;
    } else {
      SHOAL_ASSIGN_OR_RETURN(step.bytes, fs->FileSize(step.from));
    }
    steps->push_back(std::move(step));
  }
  if (!found_cut_file) {
    return absl::InternalError(absl::StrCat("checkpoint: log file ", WalFileName(view.log_number),
                                            " of ", shard_dir, " is missing"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DBImpl::Checkpoint(const std::string& dir, const CheckpointOptions& options) {
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("database is closed");
  }
  // A reader knows no log positions the writer will not move past; a
  // checkpoint is the writer's to make.
  if (options_.read_only) return ReadOnlyError();
  if (dir.empty()) return absl::InvalidArgumentError("checkpoint: directory is empty");
  const std::string staging = dir + std::string(kTempSuffix);
  const std::string parent = ParentDir(dir);

  // 1. The staging directory, marked as a checkpoint's from the start.
  SHOAL_RETURN_IF_ERROR(RemoveLeftover(fs_, dir, /*empty_is_leftover=*/false));
  SHOAL_RETURN_IF_ERROR(RemoveLeftover(fs_, staging, /*empty_is_leftover=*/true));
  SHOAL_RETURN_IF_ERROR(fs_->CreateDir(staging));
  bool renamed = false;
  absl::Cleanup remove_on_error = [&] {
    // The MANIFEST first (a failed sync may follow its rename): a crash in
    // the middle of the removal must not leave a directory that opens.
    if (renamed) (void)fs_->RemoveFile(JoinPath(dir, kManifestFile));
    (void)fs_->RemoveDirRecursive(renamed ? dir : staging);
  };
  SHOAL_RETURN_IF_ERROR(WriteFileAtomic(fs_, JoinPath(staging, kCheckpointMarker), ""));
  SHOAL_RETURN_IF_ERROR(fs_->SyncDir(parent));

  // 2. The hold, then the cut.
  FileDeleter::Scoped hold(&file_deleter_);
  CheckpointPlan plan;
  std::vector<std::pair<const Shard*, Shard::CheckpointView>> direct_logs;
  {
    // The collection map is fixed meanwhile (no create, no drop).
    ReaderMutexLock lock(&mu_);
    std::vector<std::shared_ptr<Collection>> collections;
    std::vector<const Shard*> shards;
    for (const auto& [name, c] : collections_) {
      if (c->dropped()) continue;
      collections.push_back(c);
      for (const Shard* s : c->shards()) shards.push_back(s);
    }
    const std::vector<Shard::CheckpointView> views = Shard::TakeCheckpointViews(shards);
    {
      MutexLock manifest_lock(&manifest_mu_);
      plan.manifest.next_file_number = manifest_.next_file_number;
      for (const std::shared_ptr<Collection>& c : collections) {
        auto it = std::find_if(manifest_.collections.begin(), manifest_.collections.end(),
                               [&](const CollectionMeta& m) { return m.name == c->name(); });
        if (it == manifest_.collections.end()) {
          return absl::InternalError(
              absl::StrCat("checkpoint: collection '", c->name(), "' is not in the manifest"));
        }
        CollectionMeta meta;
        meta.name = it->name;
        meta.options = it->options;
        plan.manifest.collections.push_back(std::move(meta));
      }
    }
    size_t v = 0;
    for (size_t i = 0; i < collections.size(); ++i) {
      const Collection& c = *collections[i];
      CollectionMeta& meta = plan.manifest.collections[i];
      const std::vector<const Shard*> cshards = c.shards();
      plan.dirs.push_back(c.name());
      std::set<uint64_t> shared;
      for (size_t j = 0; j < cshards.size(); ++j, ++v) {
        const Shard::CheckpointView& view = views[v];
        if (view.closed) return absl::FailedPreconditionError("database is closed");
        ShardMeta shard_meta;
        shard_meta.flushed_sequence = view.flushed_sequence;
        shard_meta.segments = view.segments;
        meta.shards.push_back(std::move(shard_meta));
        const std::string shard_rel = JoinPath(c.name(), ShardDirName(static_cast<uint32_t>(j)));
        plan.dirs.push_back(shard_rel);
        for (const SegmentMeta& s : view.segments) {
          if (s.shared) {
            shared.insert(s.number);
            continue;
          }
          plan.steps.push_back({JoinPath(cshards[j]->dir(), SegmentFileName(s.number)),
                                JoinPath(JoinPath(staging, shard_rel), SegmentFileName(s.number)),
                                0, true});
        }
        if (view.log_direct) direct_logs.emplace_back(cshards[j], view);
      }
      for (uint64_t number : shared) {
        plan.steps.push_back({JoinPath(c.dir(), SegmentFileName(number)),
                              JoinPath(JoinPath(staging, c.name()), SegmentFileName(number)), 0,
                              true});
      }
      // The logs are listed after the cut, under the hold: every file the
      // cut needs is there (only files a flush had made obsolete before the
      // cut may be gone).
      for (size_t j = 0; j < cshards.size(); ++j) {
        const std::string shard_rel = JoinPath(c.name(), ShardDirName(static_cast<uint32_t>(j)));
        SHOAL_RETURN_IF_ERROR(PlanLogs(fs_, cshards[j]->dir(), JoinPath(staging, shard_rel),
                                       views[v - cshards.size() + j], &plan.steps));
      }
    }
  }
  // A direct-I/O log holds its records in memory until synced: sync up to
  // the cut so that the file holds them (a sync the writers share).
  for (const auto& [shard, view] : direct_logs) {
    SHOAL_RETURN_IF_ERROR(shard->SyncWalTo(view.log_lsn));
  }

  // 3. Every file, then every directory, synced.
  uint64_t total = 0;
  for (CopyStep& step : plan.steps) {
    if (step.immutable) {
      SHOAL_ASSIGN_OR_RETURN(step.bytes, fs_->FileSize(step.from));
    }
    total += step.bytes;
  }
  for (const std::string& d : plan.dirs) SHOAL_RETURN_IF_ERROR(fs_->CreateDir(JoinPath(staging, d)));
  uint64_t done = 0;
  uint64_t reported = 0;
  constexpr uint64_t kReportEvery = uint64_t{64} << 20;
  const CopiedBytesFn copied = [&](uint64_t bytes) {
    done += bytes;
    if (options.progress && done - reported >= kReportEvery) {
      reported = done;
      options.progress(done, total);
    }
  };
  bool try_link = true;
  for (const CopyStep& step : plan.steps) {
    if (step.immutable) {
      SHOAL_RETURN_IF_ERROR(LinkOrCopyFile(fs_, step.from, step.to, step.bytes, &try_link, copied));
    } else {
      SHOAL_RETURN_IF_ERROR(fs_->CopyFile(step.from, step.to, step.bytes, copied));
    }
    if (options.progress && reported != done) {
      reported = done;
      options.progress(done, total);
    }
  }
  // Children before parents: a directory's entry is durable in its parent.
  for (auto it = plan.dirs.rbegin(); it != plan.dirs.rend(); ++it) {
    SHOAL_RETURN_IF_ERROR(fs_->SyncDir(JoinPath(staging, *it)));
  }
  SHOAL_RETURN_IF_ERROR(fs_->SyncDir(staging));
  if (options.progress) options.progress(total, total);

  // 4. In place, then the manifest last.
  SHOAL_RETURN_IF_ERROR(fs_->Rename(staging, dir));
  renamed = true;
  SHOAL_RETURN_IF_ERROR(fs_->SyncDir(parent));
  SHOAL_RETURN_IF_ERROR(
      WriteFileAtomic(fs_, JoinPath(dir, kManifestFile), EncodeManifest(plan.manifest)));
  std::move(remove_on_error).Cancel();
  // The database is whole; the marker only tells a later checkpoint that
  // the directory was its own. Best effort: an open ignores it.
  (void)fs_->RemoveFile(JoinPath(dir, kCheckpointMarker));
  (void)fs_->SyncDir(dir);
  return absl::OkStatus();
}

}  // namespace shoal

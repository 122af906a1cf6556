// Copyright 2026 The shoal Authors.
//
// Collection::IngestSegments (DB::IngestSegments): segment files a
// SegmentWriter built elsewhere, checked, placed in the collection's
// directory and published in one manifest edit, as a bulk load publishes
// the segments it builds. Each file's part on each shard is a bulk part:
// PrepareBulk freezes the shard's memtable and takes a sequence number
// (a durable barrier record) above everything the shard holds, and that
// number, recorded in the manifest, ranks the part's entries, whatever the
// file's entries carry. A crash before the manifest write leaves files no
// manifest names, which Open removes; after it, everything is in.

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "db/collection.h"
#include "ingest/ingest_check.h"
#include "ingest/place_file.h"
#include "util/status_macros.h"
#include "version/filename.h"

namespace shoal {
namespace {

absl::Status Prefixed(const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("IngestSegments: ", s.message()));
}

// fn(0) .. fn(n - 1), at once on `pool` (may be null) when n > 1: the files
// of an ingest are checked and placed together (reading and hashing every
// byte is most of a linked ingest; a copy's write and fdatasync of one file
// overlap another's).
void ForEachFile(ThreadPool* pool, size_t n, const std::function<void(size_t)>& fn) {
  if (pool != nullptr && n > 1) {
    pool->ParallelFor(n, fn);
  } else {
    for (size_t i = 0; i < n; ++i) fn(i);
  }
}

// The files checked (ingest_check.h), those without vectors left out; the
// first error in the caller's order.
absl::StatusOr<std::vector<ingest::CheckedFile>> CheckFiles(
    FileSystem* fs, ThreadPool* pool, std::span<const std::string> files,
    const CollectionOptions& collection, bool verify) {
  std::vector<absl::StatusOr<ingest::CheckedFile>> results(files.size());
  ForEachFile(pool, files.size(), [&](size_t i) {
    results[i] = ingest::CheckFile(fs, files[i], collection, verify);
  });
  std::vector<ingest::CheckedFile> checked;
  for (absl::StatusOr<ingest::CheckedFile>& file : results) {
    if (!file.ok()) return file.status();
    if (file->header.vector_count > 0) checked.push_back(std::move(file).value());
  }
  return checked;
}

}  // namespace

absl::Status Collection::IngestSegments(std::span<const std::string> files,
                                        const IngestOptions& options) {
  if (options.method != IngestMethod::kLinkOrCopy && options.method != IngestMethod::kCopy &&
      options.method != IngestMethod::kMove) {
    return absl::InvalidArgumentError("IngestSegments: unknown IngestOptions::method");
  }
  timing::Scope timing("ingest", "collection,files,vectors,check_us,prepare_us,place_us,"
                                 "open_us,publish_us,total_us");
  // 1. Every file checked before anything changes.
  absl::StatusOr<std::vector<ingest::CheckedFile>> checked_or =
      CheckFiles(fs_, pool_, files, options_, options.verify_checksums);
  if (!checked_or.ok()) return Prefixed(checked_or.status());
  const std::vector<ingest::CheckedFile>& checked = *checked_or;
  if (checked.empty()) return absl::OkStatus();
  uint64_t vectors = 0;
  for (const ingest::CheckedFile& file : checked) vectors += file.header.vector_count;
  const int64_t check_us = timing.Lap();

  // 2. A bulk part on each shard a file has entries of, in file order: a
  // later file's parts take later sequence numbers.
  struct Placement {
    const ingest::CheckedFile* file;
    std::vector<uint32_t> shards;  // of each part
    std::vector<Shard::BulkPart> parts;
    std::string dest;
    bool placed = false;
    bool linked = false;
  };
  std::vector<Placement> placements;
  bool any_shared = false;
  bool settled = false;
  // Parts not installed are discarded and files placed are removed, also
  // when a step throws: a pending part holds back its shard's merges.
  absl::Cleanup undo = [&] {
    if (settled) return;
    for (Placement& p : placements) {
      for (size_t j = 0; j < p.parts.size(); ++j) {
        shards_[p.shards[j]]->DiscardBulk(p.parts[j], /*keep_file=*/true);
      }
      if (p.placed) (void)fs_->RemoveFile(p.dest);
    }
  };
  for (const ingest::CheckedFile& file : checked) {
    Placement& p = placements.emplace_back();
    p.file = &file;
    any_shared |= file.one_graph();
    for (uint32_t s = 0; s < options_.shard_count; ++s) {
      if (file.per_shard[s] == 0) continue;
      absl::StatusOr<Shard::BulkPart> part = shards_[s]->PrepareBulk();
      if (!part.ok()) return Prefixed(part.status());
      p.parts.push_back(std::move(part).value());
      p.shards.push_back(s);
    }
    p.dest = file.one_graph() ? JoinPath(dir_, SegmentFileName(p.parts.front().number))
                              : shards_[p.shards.front()]->BulkPartPath(p.parts.front());
  }
  const int64_t prepare_us = timing.Lap();

  // 3. Linked or copied in, under names no manifest holds yet; then the
  // directories synced once, so that every name is durable before the
  // manifest names it.
  std::vector<absl::Status> placed(placements.size());
  ForEachFile(pool_, placements.size(), [&](size_t i) {
    Placement& p = placements[i];
    placed[i] = ingest::PlaceFile(fs_, p.file->path, p.dest, options.method, &p.linked);
    p.placed = placed[i].ok();
  });
  for (const absl::Status& s : placed) {
    if (!s.ok()) return Prefixed(s);
  }
  std::set<std::string> dirs;
  for (const Placement& p : placements) dirs.insert(p.dest.substr(0, p.dest.find_last_of('/')));
  for (const std::string& d : dirs) {
    absl::Status s = fs_->SyncDir(d);
    if (!s.ok()) return Prefixed(s);
  }
  const int64_t place_us = timing.Lap();

  // 4. Opened as the shards open their segments (a one-graph file once).
  for (Placement& p : placements) {
    std::shared_ptr<Segment> shared;
    if (p.file->one_graph()) {
      absl::StatusOr<std::shared_ptr<Segment>> opened =
          shards_[p.shards.front()]->OpenSegmentFile(p.dest);
      if (!opened.ok()) return Prefixed(opened.status());
      shared = std::move(opened).value();
    }
    for (size_t j = 0; j < p.parts.size(); ++j) {
      absl::Status s = shards_[p.shards[j]]->AdoptBulk(
          &p.parts[j], p.dest, p.file->per_shard[p.shards[j]], shared);
      if (!s.ok()) return Prefixed(s);
      // Every shard names a one-graph file by its one number (the first
      // part's; the others' numbers go unused, as in BuildSharedBulk).
      p.parts[j].meta.number = p.parts.front().number;
    }
  }
  const int64_t open_us = timing.Lap();

  // 5. One manifest edit for everything.
  std::vector<ShardEdit> edits(options_.shard_count);
  for (uint32_t s = 0; s < options_.shard_count; ++s) edits[s].shard = s;
  std::vector<std::string> added;
  for (const Placement& p : placements) {
    for (size_t j = 0; j < p.parts.size(); ++j) edits[p.shards[j]].add.push_back(p.parts[j].meta);
    added.push_back(p.dest);
  }
  std::erase_if(edits, [](const ShardEdit& e) { return e.add.empty(); });
  // A shared segment: no merge may see it named by some shards and not yet
  // installed in others (as LoadPartitioned).
  if (any_shared) {
    for (auto& shard : shards_) shard->LockMerges();
  }
  absl::Cleanup unlock_merges = [&] {
    if (!any_shared) return;
    for (size_t s = shards_.size(); s-- > 0;) shards_[s]->UnlockMerges();
  };
  absl::Status published = PublishSegments(fs_, manifest_, name_, incarnation_, edits, added);
  if (!published.ok()) {
    // PublishSegments removed the files, or kept them when in doubt.
    settled = true;
    for (Placement& p : placements) {
      for (size_t j = 0; j < p.parts.size(); ++j) {
        shards_[p.shards[j]]->DiscardBulk(p.parts[j], /*keep_file=*/true);
      }
    }
    return Prefixed(published);
  }
  settled = true;
  for (Placement& p : placements) {
    for (size_t j = 0; j < p.parts.size(); ++j) shards_[p.shards[j]]->InstallBulk(p.parts[j]);
  }
  std::move(unlock_merges).Invoke();
  if (options.method == IngestMethod::kMove) {
    for (const Placement& p : placements) (void)fs_->RemoveFile(p.file->path);
  }
  UpdateFoldMode();
  const int64_t publish_us = timing.Lap();
  timing.Line(name_, files.size(), vectors, check_us, prepare_us, place_us, open_us, publish_us,
              timing.Total());
  return absl::OkStatus();
}

}  // namespace shoal

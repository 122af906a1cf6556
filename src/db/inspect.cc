// Copyright 2026 The shoal Authors.

#include "db/inspect.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "version/filename.h"
#include "version/manifest.h"
#include "segment/graph_reach.h"
#include "segment/segment.h"
#include "util/coding.h"
#include "util/status_macros.h"
#include "wal/wal_format.h"
#include "wal/commit_log.h"
#include "wal/wal_reader.h"
#include "wal/wal_writer.h"

namespace shoal {

absl::StatusOr<std::vector<CollectionReport>> CollectStats(DB& db) {
  DBImpl* impl = dynamic_cast<DBImpl*>(&db);
  if (impl == nullptr) return absl::InvalidArgumentError("not a database opened by DB::Open");
  return impl->CollectStats();
}

namespace {

void CheckLogFile(FileSystem* fs, const std::string& path, uint32_t shard, uint64_t number,
                  uint32_t dim, VerifyReport* report) {
  absl::StatusOr<std::string> contents = fs->ReadFile(path);
  if (!contents.ok()) {
    report->problems.push_back({path, std::string(contents.status().message()), true});
    return;
  }
  report->files_checked += 1;
  report->bytes_checked += contents->size();
  // A commit log's records hold a shard's record each: check that one too.
  absl::StatusOr<wal::ReadResult> result = wal::ReadWalFile(
      *contents, path, shard, number, dim, [&](const wal::RecordView& r) {
        if (shard != wal::kCommitLogShard) return absl::OkStatus();
        uint32_t inner_shard;
        wal::RecordView inner;
        return wal::DecodeShardRecord(r, dim, &inner_shard, &inner);
      });
  if (!result.ok()) {
    report->problems.push_back({path, std::string(result.status().message()), true});
  } else if (result->corrupted) {
    report->problems.push_back(
        {path,
         absl::StrCat("damaged record at offset ", result->corrupt_offset,
                      " with valid records after it"),
         true});
  } else if (result->torn_tail) {
    report->problems.push_back(
        {path,
         absl::StrCat("torn tail at offset ", result->valid_end,
                      " (an interrupted write; recovery drops it)"),
         false});
  }
}

// Checks every log file in `dir`, in order. False when `dir` could not be
// listed (a problem, unless it does not exist).
bool CheckLogFiles(FileSystem* fs, const std::string& dir, uint32_t shard, uint32_t dim,
                   VerifyReport* report) {
  absl::StatusOr<std::vector<std::string>> names = fs->ListDir(dir);
  if (!names.ok()) {
    if (!absl::IsNotFound(names.status())) {
      report->problems.push_back({dir, std::string(names.status().message()), true});
    }
    return false;
  }
  std::sort(names->begin(), names->end());
  for (const std::string& name : *names) {
    uint64_t number;
    if (ParseWalFileName(name, &number)) {
      CheckLogFile(fs, JoinPath(dir, name), shard, number, dim, report);
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<VerifyReport> VerifyDatabase(FileSystem* fs, const std::string& path) {
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock,
                         fs->LockFile(JoinPath(path, kLockFile)));
  VerifyReport report;
  const std::string manifest_path = JoinPath(path, kManifestFile);
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, fs->ReadFile(manifest_path));
  report.files_checked += 1;
  report.bytes_checked += bytes.size();
  absl::StatusOr<Manifest> manifest = DecodeManifest(bytes, manifest_path);
  if (!manifest.ok()) {
    report.problems.push_back({manifest_path, std::string(manifest.status().message()), true});
    return report;  // without the manifest nothing else can be interpreted
  }
  for (const CollectionMeta& c : manifest->collections) {
    absl::flat_hash_set<uint64_t> shared_checked;  // a shared segment once
    for (uint32_t s = 0; s < c.options.shard_count; ++s) {
      const std::string dir = JoinPath(JoinPath(path, c.name), ShardDirName(s));
      if (!CheckLogFiles(fs, dir, s, c.options.dim, &report)) continue;
      for (const SegmentMeta& seg : c.shards[s].segments) {
        if (seg.shared && !shared_checked.insert(seg.number).second) continue;
        // A shared segment lives in the collection's directory.
        const std::string seg_path =
            JoinPath(seg.shared ? JoinPath(path, c.name) : dir, SegmentFileName(seg.number));
        absl::StatusOr<std::shared_ptr<Segment>> segment =
            Segment::Open(fs, seg_path, c.options.dim, c.options.metric);
        absl::Status status = segment.status();
        if (status.ok()) status = (*segment)->VerifyAll();
        report.files_checked += 1;
        absl::StatusOr<uint64_t> size = fs->FileSize(seg_path);
        if (size.ok()) report.bytes_checked += *size;
        if (!status.ok()) {
          report.problems.push_back({seg_path, std::string(status.message()), true});
          continue;
        }
        // Not damage: a graph written before builds connected every node.
        absl::StatusOr<uint64_t> unreachable = segment::CountUnreachableNodes(**segment);
        if (!unreachable.ok()) {
          report.problems.push_back({seg_path, std::string(unreachable.status().message()), true});
        } else if (*unreachable > 0) {
          report.problems.push_back(
              {seg_path,
               absl::StrCat(*unreachable, " of ", (*segment)->vector_count(),
                            " nodes no path from the medoid reaches: searches may miss them "
                            "(a list as long as the segment scans it); the next merge of this "
                            "segment connects them"),
               false});
        }
      }
    }
    // The commit log (kAlways): files a crash left, for Open to replay.
    (void)CheckLogFiles(fs, JoinPath(JoinPath(path, c.name), kCommitLogDir),
                        wal::kCommitLogShard, c.options.dim, &report);
  }
  return report;
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.

#include "ingest/place_file.h"

#include <cstdint>
#include <string>

#include "util/file_system.h"
#include "util/status_macros.h"

namespace shoal::ingest {
namespace {

// A copy under a temporary name, renamed into place once durable
// (FileSystem::CopyFile: direct I/O from a mapping on POSIX).
absl::Status CopyFile(FileSystem* fs, const std::string& from, const std::string& to) {
  const std::string tmp = to + std::string(kTempSuffix);
  SHOAL_ASSIGN_OR_RETURN(const uint64_t size, fs->FileSize(from));
  absl::Status s = fs->CopyFile(from, tmp, size, nullptr);
  if (s.ok()) s = fs->Rename(tmp, to);
  if (!s.ok()) (void)fs->RemoveFile(tmp);
  return s;
}

}  // namespace

absl::Status PlaceFile(FileSystem* fs, const std::string& from, const std::string& to,
                       IngestMethod method, bool* linked) {
  *linked = false;
  if (method != IngestMethod::kCopy && fs->LinkFile(from, to).ok()) {
    // Written by another process, perhaps never synced: its bytes must be
    // durable before the manifest names it.
    if (fs->SyncFile(to).ok()) {
      *linked = true;
      return absl::OkStatus();
    }
    (void)fs->RemoveFile(to);
  }
  return CopyFile(fs, from, to);
}

}  // namespace shoal::ingest

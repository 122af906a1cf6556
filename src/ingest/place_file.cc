// Copyright 2026 The shoal Authors.

#include "ingest/place_file.h"

#include <string>

#include "util/file_system.h"
#include "util/status_macros.h"

namespace shoal::ingest {

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
  // A copy (FileSystem::CopyFile writes and syncs it) under a temporary
  // name, so that `to` never names part of a file.
  SHOAL_ASSIGN_OR_RETURN(const uint64_t size, fs->FileSize(from));
  const std::string tmp = to + std::string(kTempSuffix);
  absl::Status s = fs->CopyFile(from, tmp, size, {});
  if (s.ok()) s = fs->Rename(tmp, to);
  if (!s.ok()) (void)fs->RemoveFile(tmp);
  return s;
}

}  // namespace shoal::ingest

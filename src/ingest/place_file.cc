// Copyright 2026 The shoal Authors.

#include "ingest/place_file.h"

#include <algorithm>
#include <memory>
#include <string_view>

#include "util/file_system.h"
#include "util/status_macros.h"

namespace shoal::ingest {
namespace {

// Bytes appended at a time while copying.
constexpr size_t kCopyChunkBytes = size_t{4} << 20;

absl::Status CopyFile(FileSystem* fs, const std::string& from, const std::string& to) {
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<ReadOnlyMappedFile> in, fs->OpenReadOnlyMapped(from));
  const std::string tmp = to + std::string(kTempSuffix);
  absl::Status s;
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> out = fs->NewWritableFile(tmp);
    if (!out.ok()) return out.status();
    for (size_t at = 0; at < in->size() && s.ok(); at += kCopyChunkBytes) {
      const size_t n = std::min(kCopyChunkBytes, in->size() - at);
      s = (*out)->Append(std::string_view(in->data() + at, n));
    }
    if (s.ok()) s = (*out)->Sync();
    const absl::Status closed = (*out)->Close();
    if (s.ok()) s = closed;
  }
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

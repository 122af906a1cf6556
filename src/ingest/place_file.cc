// Copyright 2026 The shoal Authors.

#include "ingest/place_file.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string_view>

#include "util/file_system.h"
#include "util/status_macros.h"

namespace shoal::ingest {
namespace {

// Bytes appended at a time while copying.
constexpr size_t kCopyChunkBytes = size_t{4} << 20;

// Calls write(bytes) for the whole of `from`, a chunk at a time: read with
// pread where the file system has it (a mapping would take a page fault per
// 4 KiB: 0.1-0.2 s of a 1 GB copy), else through a read-only mapping.
absl::Status ReadChunks(FileSystem* fs, const std::string& from,
                        const std::function<absl::Status(std::string_view)>& write) {
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
      fs->OpenRandomAccess(from, /*direct=*/false);
  if (absl::IsUnimplemented(file.status())) {
    SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<ReadOnlyMappedFile> in, fs->OpenReadOnlyMapped(from));
    for (size_t at = 0; at < in->size(); at += kCopyChunkBytes) {
      SHOAL_RETURN_IF_ERROR(
          write(std::string_view(in->data() + at, std::min(kCopyChunkBytes, in->size() - at))));
    }
    return absl::OkStatus();
  }
  if (!file.ok()) return file.status();
  std::unique_ptr<char[]> buffer(new char[kCopyChunkBytes]);
  const uint64_t size = (*file)->size();
  for (uint64_t at = 0; at < size; at += kCopyChunkBytes) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kCopyChunkBytes, size - at));
    SHOAL_RETURN_IF_ERROR((*file)->Read(at, n, buffer.get()));
    SHOAL_RETURN_IF_ERROR(write(std::string_view(buffer.get(), n)));
  }
  return absl::OkStatus();
}

absl::Status CopyFile(FileSystem* fs, const std::string& from, const std::string& to) {
  const std::string tmp = to + std::string(kTempSuffix);
  absl::Status s;
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> out = fs->NewWritableFile(tmp);
    if (!out.ok()) return out.status();
    s = ReadChunks(fs, from, [&](std::string_view bytes) { return (*out)->Append(bytes); });
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

// Copyright 2026 The shoal Authors.

#include "util/file_copy.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

// 4 MiB a run: large enough that a system call's cost is nothing beside the
// bytes, small enough to stay in the cache between the read and the write.
constexpr size_t kCopyRun = size_t{4} << 20;

}  // namespace

absl::Status FileSystem::CopyFile(const std::string& from, const std::string& to,
                                 uint64_t length, const CopiedBytesFn& copied) {
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> opened =
      OpenRandomAccess(from, /*direct=*/false);
  if (absl::IsUnimplemented(opened.status())) {
    // A file system without random access: the whole file, read at once.
    SHOAL_ASSIGN_OR_RETURN(std::string content, ReadFile(from));
    if (content.size() < length) {
      return absl::OutOfRangeError(absl::StrCat("copy of ", from, ": ", length,
                                                " bytes wanted, the file holds ",
                                                content.size()));
    }
    SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, NewWritableFile(to));
    SHOAL_RETURN_IF_ERROR(out->Append(std::string_view(content).substr(0, length)));
    if (copied) copied(length);
    SHOAL_RETURN_IF_ERROR(out->Sync());
    return out->Close();
  }
  SHOAL_RETURN_IF_ERROR(opened.status());
  const std::unique_ptr<RandomAccessFile> in = std::move(opened).value();
  if (in->size() < length) {
    return absl::OutOfRangeError(absl::StrCat("copy of ", from, ": ", length,
                                              " bytes wanted, the file holds ", in->size()));
  }
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, NewWritableFile(to));
  std::vector<char> buffer(static_cast<size_t>(std::min<uint64_t>(length, kCopyRun)));
  for (uint64_t offset = 0; offset < length;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(length - offset, kCopyRun));
    SHOAL_RETURN_IF_ERROR(in->Read(offset, n, buffer.data()));
    SHOAL_RETURN_IF_ERROR(out->Append(std::string_view(buffer.data(), n)));
    offset += n;
    if (copied) copied(n);
  }
  SHOAL_RETURN_IF_ERROR(out->Sync());
  return out->Close();
}

absl::Status LinkOrCopyFile(FileSystem* fs, const std::string& from, const std::string& to,
                            uint64_t size, bool* try_link, const CopiedBytesFn& copied) {
  if (*try_link) {
    if (fs->LinkFile(from, to).ok()) {
      if (copied) copied(size);
      return absl::OkStatus();
    }
    // Another file system (EXDEV), or none has links: copy this and the rest.
    *try_link = false;
  }
  return fs->CopyFile(from, to, size, copied);
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// The engine's helpers around the file-system seam (include/shoal/
// file_system.h, where FileSystem and its files are declared): paths,
// atomic replacement, errno statuses.

#ifndef SHOAL_SRC_UTIL_FILE_SYSTEM_H_
#define SHOAL_SRC_UTIL_FILE_SYSTEM_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "shoal/file_system.h"

namespace shoal {

// Appended to a file's name while it is written: the temporary of
// WriteFileAtomic, and of every file written then renamed into place.
inline constexpr std::string_view kTempSuffix = ".tmp";

// Writes `data` to `path` atomically: a temporary file (path + kTempSuffix)
// is written and synced,
// renamed over `path`, and the directory is synced. After a crash `path` holds
// either its old content or the new one. When `renamed` is not null it is set
// to whether the rename happened: an error with *renamed true (the directory
// sync failed) leaves the new content in place but perhaps not durable. An
// error before the rename removes the temporary (best effort).
absl::Status WriteFileAtomic(FileSystem* fs, const std::string& path,
                             std::string_view data, bool* renamed = nullptr);

// "dir/name".
std::string JoinPath(std::string_view dir, std::string_view name);

// A status for a failed system call: the code follows errno.
absl::Status ErrnoStatus(int err, std::string_view call, std::string_view path);

// A read-only shared mapping of the first `bytes` bytes of the open file
// `fd`, unmapped when the last pointer goes (the mapping keeps the file's
// pages, also after the descriptor is closed and the file removed). Null
// when mmap refuses. POSIX (posix_file_system.cc).
std::shared_ptr<const char> MapReadOnlyShared(int fd, size_t bytes);

// FailedPreconditionError for a call on a file after its close
// (MappedFile::CloseAndTruncate).
absl::Status ClosedFileError(std::string_view path);

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_FILE_SYSTEM_H_

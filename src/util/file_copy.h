// Copyright 2026 The shoal Authors.
//
// Links or copies of immutable files through the file-system seam
// (checkpoints, db/checkpoint.cc). FileSystem::CopyFile's default (reads and
// appends through the seam) is defined in file_copy.cc too.

#ifndef SHOAL_SRC_UTIL_FILE_COPY_H_
#define SHOAL_SRC_UTIL_FILE_COPY_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "shoal/file_system.h"

namespace shoal {

// Called with the bytes each step of a copy added.
using CopiedBytesFn = std::function<void(uint64_t bytes)>;

// Makes `to` hold what `from` (an immutable file of `size` bytes) holds: a
// hard link when *try_link and the file system makes one, else a copy
// (FileSystem::CopyFile of the whole file). A link that fails clears
// *try_link, so that the next files go straight to copies (another file
// system: EXDEV). `copied` gets `size` at once for a link. The link's
// directory entry is durable once the caller syncs `to`'s directory.
[[nodiscard]] absl::Status LinkOrCopyFile(FileSystem* fs, const std::string& from,
                                          const std::string& to, uint64_t size,
                                          bool* try_link, const CopiedBytesFn& copied);

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_FILE_COPY_H_

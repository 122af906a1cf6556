// Copyright 2026 The shoal Authors.
//
// Copies and links of whole files or their first bytes, through the
// file-system seam (checkpoints, db/checkpoint.cc).

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

// Writes the first `length` bytes of `from` to a new file `to` (which must
// not exist), and syncs it. OutOfRangeError when `from` is shorter. Reads in
// runs of a few MiB (no run is held longer than needed), calling `copied`
// (may be empty) after each.
[[nodiscard]] absl::Status CopyFilePrefix(FileSystem* fs, const std::string& from,
                                          const std::string& to, uint64_t length,
                                          const CopiedBytesFn& copied);

// Makes `to` hold what `from` (an immutable file of `size` bytes) holds: a
// hard link when *try_link and the file system makes one, else a copy
// (CopyFilePrefix of the whole file). A link that fails clears *try_link, so
// that the next files go straight to copies (another file system: EXDEV).
// `copied` gets `size` at once for a link. The link's directory entry is
// durable once the caller syncs `to`'s directory.
[[nodiscard]] absl::Status LinkOrCopyFile(FileSystem* fs, const std::string& from,
                                          const std::string& to, uint64_t size,
                                          bool* try_link, const CopiedBytesFn& copied);

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_FILE_COPY_H_

// Copyright 2026 The shoal Authors.
//
// A log file written with direct I/O, for a write-ahead log that is synced
// after every write (FsyncPolicy::kAlways) on a disk.
//
// Why: through a shared mapping (PosixMappedFile), every fdatasync walks the
// page cache, writes back the dirty pages and, where a store reached a block
// allocated (or converted from fallocate's unwritten state) since the last
// sync, the file's metadata too: on ext4 a sync of 8 small records spanning
// two pages took ~200 us against ~100 us for one page. This file instead
// writes the file ahead of the writer with zeros (so that no later write
// allocates a block or changes the file's length) and syncs by one
// O_DIRECT|O_DSYNC write of the 4 KiB blocks holding the unsynced bytes: the
// same ~100 us for one record or eight (docs/performance-history.md).
//
// The contract differs from a mapped file's in one way: bytes stored through
// data() are in this process's memory only. They reach the file in SyncPrefix
// (and CloseAndTruncate), and are lost if the process dies before that. That
// is why only kAlways logs use it: there a write is acknowledged after its
// sync, so nothing acknowledged ever sits in memory alone.
//
// Thread-safety: as MappedFile. Reserve and Populate (zero-filling ahead) may
// run concurrently with each other, with stores below the reserved end, and
// with SyncPrefix; SyncPrefix and CloseAndTruncate need external
// serialization (the log writer's file mutex).

#ifndef SHOAL_SRC_UTIL_DIRECT_LOG_FILE_H_
#define SHOAL_SRC_UTIL_DIRECT_LOG_FILE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "util/file_system.h"

namespace shoal {

// Opens (creating when absent) `path` for direct-I/O logging with room for
// `capacity` bytes (rounded up to 4 KiB). The file's first `resume_offset`
// bytes are kept (and the last partial block of them read into data()) and
// made durable (fdatasync: they may have been written through a mapping and
// never synced); everything after them is overwritten with zeros as the log
// grows.
// UnimplementedError when the file system cannot do it: tmpfs (no disk
// behind it: a mapped file is faster), or no O_DIRECT with 4 KiB alignment.
absl::StatusOr<std::unique_ptr<MappedFile>> OpenDirectLogFile(const std::string& path,
                                                              size_t capacity,
                                                              size_t resume_offset);

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_DIRECT_LOG_FILE_H_

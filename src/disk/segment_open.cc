// Copyright 2026 The shoal Authors.
//
// Segment::Open: the one place that picks a reader for a storage mode.
// kDisk falls back to the mapped reader (same results, more RAM) for files
// without codes and on file systems without OpenRandomAccess.

#include <atomic>
#include <cstdio>

#include "disk/disk_segment_reader.h"
#include "segment/segment.h"
#include "segment/segment_reader.h"

namespace shoal {

absl::StatusOr<std::shared_ptr<Segment>> Segment::Open(FileSystem* fs, const std::string& path,
                                                       uint32_t dim, Metric metric,
                                                       const SegmentOpenOptions& options) {
  switch (options.storage) {
    case SegmentStorage::kMapped:
      break;
    case SegmentStorage::kDisk: {
      absl::StatusOr<std::shared_ptr<Segment>> disk =
          disk::DiskSegmentReader::Open(fs, path, dim, metric, options);
      if (disk.ok() && *disk != nullptr) return disk;
      if (!disk.ok() && !absl::IsUnimplemented(disk.status())) return disk;
      // Said once per process: every segment of a DB would say it.
      static std::atomic<bool> said{false};
      if (!said.exchange(true)) {
        std::fprintf(stderr, "shoal: %s: %s; mapping segments whole instead\n", path.c_str(),
                     disk.ok() ? "no codes to navigate on (format version 1 or "
                                 "VectorCode::kNone; a merge rewrites it with codes)"
                               : "the file system has no random-access reads");
      }
      break;
    }
  }
  return segment::SegmentReader::Open(fs, path, dim, metric, options.background);
}

}  // namespace shoal

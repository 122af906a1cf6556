// Copyright 2026 The shoal Authors.
//
// Segment::Open: the one place that picks a reader for a storage mode.

#include <atomic>
#include <cstdio>

#include "segment/disk_segment_reader.h"
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
          segment::DiskSegmentReader::Open(fs, path, dim, metric, options.node_cache_bytes);
      if (!disk.ok() || *disk != nullptr) return disk;
      // Said once per process: every old segment of a DB would say it.
      static std::atomic<bool> said{false};
      if (!said.exchange(true)) {
        std::fprintf(stderr,
                     "shoal: %s has no codes (format version 1 or VectorCode::kNone): "
                     "mapping it whole instead of reading it from disk; a merge rewrites it "
                     "with the collection's code\n",
                     path.c_str());
      }
      break;
    }
  }
  return segment::SegmentReader::Open(fs, path, dim, metric);
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// Segment::Open: the one place that picks a reader for a storage mode.

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
    case SegmentStorage::kDisk:
      return segment::DiskSegmentReader::Open(fs, path, dim, metric, options.node_cache_bytes);
  }
  return segment::SegmentReader::Open(fs, path, dim, metric);
}

}  // namespace shoal

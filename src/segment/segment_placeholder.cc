// Copyright 2026 The shoal Authors.
//
// TEMPORARY: stands in for the segment implementation while it is being
// written, so that the rest of the tree links. DELETE THIS FILE when the real
// BuildSegment / Segment::Open land in src/segment/ (they replace these).

#include "segment/segment.h"

namespace shoal {

absl::Status BuildSegment(FileSystem*, ThreadPool*, const std::string&, const SegmentContents&,
                          const SegmentBuildOptions&, SegmentBuildStats*) {
  return absl::UnimplementedError("segments are not built yet");
}

absl::StatusOr<std::shared_ptr<Segment>> Segment::Open(FileSystem*, const std::string&,
                                                       uint32_t, Metric) {
  return absl::UnimplementedError("segments are not built yet");
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// What DB::IngestSegments checks of one file before anything changes: that
// it is a whole, undamaged segment of a version this build reads, written
// by a SegmentWriter for a collection of this shape, and that every id in
// it belongs to the shard (or shards) it says it holds.

#ifndef SHOAL_SRC_INGEST_INGEST_CHECK_H_
#define SHOAL_SRC_INGEST_INGEST_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "segment/segment_format.h"
#include "shoal/file_system.h"
#include "shoal/options.h"

namespace shoal::ingest {

struct CheckedFile {
  std::string path;
  segment::Header header;
  // Entries of each shard of the collection (shard_count of them): one
  // nonzero for a file of one shard, any for a one-graph file.
  std::vector<uint64_t> per_shard;
  bool one_graph() const { return header.origin.shard == segment::SegmentOrigin::kAllShards; }
};

// Checks `path` against `collection` (its options, shard_count resolved).
// DataLossError naming the file (and offset) when damaged or truncated,
// FailedPreconditionError for a newer format version, InvalidArgumentError
// naming the file and the setting that differs, or the id in a wrong
// shard. `verify`: every byte is read and checked (Segment::VerifyAll).
absl::StatusOr<CheckedFile> CheckFile(FileSystem* fs, const std::string& path,
                                      const CollectionOptions& collection, bool verify);

}  // namespace shoal::ingest

#endif  // SHOAL_SRC_INGEST_INGEST_CHECK_H_

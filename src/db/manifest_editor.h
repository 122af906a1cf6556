// Copyright 2026 The shoal Authors.
//
// How a shard changes its entry in the manifest (a segment added by a flush
// or a bulk load, segments replaced by a compaction). Implemented by the DB,
// which serializes edits and rewrites MANIFEST atomically for each.

#ifndef SHOAL_SRC_DB_MANIFEST_EDITOR_H_
#define SHOAL_SRC_DB_MANIFEST_EDITOR_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "db/manifest.h"

namespace shoal {

struct ShardEdit {
  uint32_t shard = 0;
  std::vector<SegmentMeta> add;
  std::vector<uint64_t> remove;    // segment numbers
  uint64_t flushed_sequence = 0;   // the shard's flushed_sequence is raised to this
};

class ManifestEditor {
 public:
  virtual ~ManifestEditor() = default;
  // A file number no other file of this database has (segment names).
  virtual uint64_t NewFileNumber() = 0;
  // Applies every edit to `collection`'s shards in one durable manifest
  // write: after a crash, all of them or none of them are in effect.
  [[nodiscard]] virtual absl::Status Apply(const std::string& collection,
                                           std::span<const ShardEdit> edits) = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_DB_MANIFEST_EDITOR_H_

// Copyright 2026 The shoal Authors.
//
// How a shard changes its entry in the manifest (a segment added by a flush
// or a bulk load, segments replaced by a compaction). Implemented by the DB,
// which serializes edits and rewrites MANIFEST atomically for each.

#ifndef SHOAL_SRC_VERSION_MANIFEST_EDITOR_H_
#define SHOAL_SRC_VERSION_MANIFEST_EDITOR_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "version/manifest.h"

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
  // `incarnation` is the collection's (Collection::Context::incarnation):
  // when that collection was dropped since (and perhaps created again under
  // the same name), returns NotFoundError and changes nothing.
  //
  // On error the edit is normally not in effect and the caller may delete
  // the files it added. The exception is ManifestWriteInDoubt(status): the
  // new MANIFEST was renamed into place but the directory sync failed, so
  // after a crash either manifest may be the one found. The caller must then
  // delete nothing that either names; the database refuses every later write
  // (and every later edit) until it is reopened.
  [[nodiscard]] virtual absl::Status Apply(const std::string& collection,
                                           uint64_t incarnation,
                                           std::span<const ShardEdit> edits) = 0;
};

// Whether `status`, returned by ManifestEditor::Apply or by a collection
// create/drop, means "perhaps in effect" (see Apply).
bool ManifestWriteInDoubt(const absl::Status& status);

// Marks `status` as ManifestWriteInDoubt.
absl::Status MarkManifestWriteInDoubt(absl::Status status);

}  // namespace shoal

#endif  // SHOAL_SRC_VERSION_MANIFEST_EDITOR_H_

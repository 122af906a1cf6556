// Copyright 2026 The shoal Authors.
//
// The manifest: which collections a database holds, with their options, and
// for each shard the segments that hold its flushed data.
// Stored in <db>/MANIFEST, replaced atomically (temp file + fsync + rename +
// directory fsync) on every change. docs/format.md gives the bytes.

#ifndef SHOAL_SRC_VERSION_MANIFEST_H_
#define SHOAL_SRC_VERSION_MANIFEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "shoal/options.h"

namespace shoal {


// One segment file of a shard: <collection>/shard-<n>/seg-<number>.vamana.
// Its entries carry sequence numbers in [min_sequence, max_sequence]; the
// ranges of a shard's sources (segments, memtables) never overlap, so the
// source with the higher range holds the newer version of an id.
//
// A shared segment (<collection>/seg-<number>.vamana) holds the data of
// several shards of its collection in one graph. Each of those shards
// names it, with the range and counts of its own entries in it (each entry
// carries its shard's sequence number); it is the oldest segment of each.
struct SegmentMeta {
  uint64_t number = 0;
  uint64_t min_sequence = 0;
  uint64_t max_sequence = 0;
  uint64_t vectors = 0;
  uint64_t tombstones = 0;
  bool shared = false;
};

struct ShardMeta {
  // Every log record with a sequence <= flushed_sequence is in a segment:
  // recovery skips it, and log files holding only such records are deleted.
  uint64_t flushed_sequence = 0;
  std::vector<SegmentMeta> segments;  // oldest first
};

struct CollectionMeta {
  std::string name;
  CollectionOptions options;  // shard_count resolved (>= 1)
  std::vector<ShardMeta> shards;  // shard_count entries
  // In memory only (not encoded): which opening or creation of `name` in
  // this process, so that an edit of a dropped collection never lands in
  // a new one of the same name (ManifestEditor::Apply).
  uint64_t incarnation = 0;
};

struct Manifest {
  uint64_t next_file_number = 1;  // for segment files (never reused)
  std::vector<CollectionMeta> collections;
};

std::string EncodeManifest(const Manifest& manifest);
// One collection's entry as bytes (a manifest holding it alone, next file
// number 0): equal bytes, equal options, segments and flushed sequences.
// A reader compares entries this way (db/db_reader.cc).
std::string EncodeCollectionEntry(const CollectionMeta& collection);
// DataLossError naming `path` when the bytes are damaged or inconsistent.
absl::StatusOr<Manifest> DecodeManifest(std::string_view bytes, const std::string& path);

}  // namespace shoal

#endif  // SHOAL_SRC_VERSION_MANIFEST_H_

// Copyright 2026 The shoal Authors.
//
// The one place that names (and parses) every file and directory of a
// database (LevelDB's filename.h). A database directory holds:
//
//   LOCK                                   flock: one process at a time
//   MANIFEST                               collections, shards, segments
//   MANIFEST.tmp                           a manifest being written
//   <collection>/                          one per collection
//   <collection>/commit/wal-NNNNNN.log     kAlways commit log (commit_log.h)
//   <collection>/shard-<n>/wal-NNNNNN.log  a shard's write-ahead log files
//   <collection>/shard-<n>/seg-NNNNNN.vamana   a shard's segments
//   <name>.tmp                             a file being written (removed at Open)
//   wal-NNNNNN.log.dropped                 log files set aside by salvage
//
// docs/format.md gives the bytes of each.

#ifndef SHOAL_SRC_VERSION_FILENAME_H_
#define SHOAL_SRC_VERSION_FILENAME_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "util/file_system.h"  // kTempSuffix: the temporary of any file

namespace shoal {

inline constexpr std::string_view kManifestFile = "MANIFEST";
inline constexpr std::string_view kLockFile = "LOCK";
// Appended to log files salvage sets aside.
inline constexpr std::string_view kDroppedSuffix = ".dropped";
// The commit log's directory inside a collection's directory.
inline constexpr std::string_view kCommitLogDir = "commit";
// A checkpoint is built in its directory's name + kTempSuffix, which holds
// this marker from its first step until MANIFEST is in place, so that only a
// checkpoint's own leftovers are ever removed. No collection can have the
// name (collection names do not start with '.').
inline constexpr std::string_view kCheckpointMarker = ".checkpoint-staging";

// "wal-000042.log"
std::string WalFileName(uint64_t number);
// Parses a WalFileName; false when `name` is not one.
bool ParseWalFileName(std::string_view name, uint64_t* number);

// "seg-000042.vamana"
std::string SegmentFileName(uint64_t number);
// Parses a SegmentFileName; false when `name` is not one.
bool ParseSegmentFileName(std::string_view name, uint64_t* number);

// "shard-3": shard 3's directory inside its collection's directory.
std::string ShardDirName(uint32_t index);

// `name` + kTempSuffix.
std::string TempFileName(std::string_view name);
// Whether `name` is a temporary (TempFileName).
bool IsTempFileName(std::string_view name);

}  // namespace shoal

#endif  // SHOAL_SRC_VERSION_FILENAME_H_

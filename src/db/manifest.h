// Copyright 2026 The shoal Authors.
//
// The manifest: which collections a database holds, with their options.
// Stored in <db>/MANIFEST, replaced atomically (temp file + fsync + rename +
// directory fsync) on every change. docs/format.md gives the bytes.

#ifndef SHOAL_SRC_DB_MANIFEST_H_
#define SHOAL_SRC_DB_MANIFEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "shoal/options.h"

namespace shoal {

inline constexpr std::string_view kManifestFile = "MANIFEST";
inline constexpr std::string_view kLockFile = "LOCK";

struct CollectionMeta {
  std::string name;
  CollectionOptions options;  // shard_count resolved (>= 1)
};

struct Manifest {
  std::vector<CollectionMeta> collections;
};

std::string EncodeManifest(const Manifest& manifest);
// DataLossError naming `path` when the bytes are damaged or inconsistent.
absl::StatusOr<Manifest> DecodeManifest(std::string_view bytes, const std::string& path);

}  // namespace shoal

#endif  // SHOAL_SRC_DB_MANIFEST_H_

// Copyright 2026 The shoal Authors.
//
// The rules a collection's name and options follow: checked when a caller
// creates a collection and when a manifest is read back. Each check returns
// InvalidArgumentError with a message that names the problem, or OK.

#ifndef SHOAL_SRC_VERSION_VALIDATE_COLLECTION_H_
#define SHOAL_SRC_VERSION_VALIDATE_COLLECTION_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "shoal/options.h"

namespace shoal {

inline constexpr uint32_t kMaxDim = 4096;
inline constexpr uint32_t kMaxShards = 256;
// GraphOptions::max_degree.
inline constexpr uint32_t kMaxGraphDegree = 1024;
inline constexpr size_t kMaxCollectionName = 128;
// GraphOptions::build_list_size: a build's candidate lists never hold more
// nodes than the segment has, and a list this long already makes a build
// explore most of a segment of a million vectors.
inline constexpr uint32_t kMaxBuildListSize = 16384;

absl::Status ValidateCollectionName(std::string_view name);
// Checks dim, metric, shard_count (0 allowed: resolved later) and graph options.
absl::Status ValidateCollectionOptions(const CollectionOptions& options);

}  // namespace shoal

#endif  // SHOAL_SRC_VERSION_VALIDATE_COLLECTION_H_

// Copyright 2026 The shoal Authors.
//
// Checks of caller input (the rules of collections themselves are in
// version/validate_collection.h). Each returns InvalidArgumentError with a message
// that names the problem (and the offending row or position), or OK.

#ifndef SHOAL_SRC_DB_VALIDATE_H_
#define SHOAL_SRC_DB_VALIDATE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "shoal/options.h"
#include "version/validate_collection.h"

namespace shoal {

// Options::worker_threads.
inline constexpr uint32_t kMaxWorkerThreads = 1024;
// Options::arena_block_bytes: a block is allocated whole (and, with a
// prefaulter, a spare one touched ahead); larger sizes only waste memory.
inline constexpr size_t kMaxArenaBlockBytes = size_t{1} << 30;
// Options::wal_file_bytes: a log file is mapped (or reserved) whole.
inline constexpr size_t kMaxWalFileBytes = size_t{1} << 32;

// Every field of `options`, default_collection included (its dim may be 0).
absl::Status ValidateOptions(const Options& options);
// Rows of at most this many floats are cleared by AllWellBelowDistanceRange
// (distance/distance.h) alone.
inline constexpr uint32_t kMaxFastCheckDim = 4096;
// n rows of dim floats in `vectors`, all finite, and under kL2 and
// kInnerProduct each with a squared norm of at most kMaxSquaredNorm (so that
// no distance overflows). `what` names the argument.
absl::Status ValidateVectors(std::span<const float> vectors, size_t n, uint32_t dim,
                             Metric metric, std::string_view what);
absl::Status ValidateSearchOptions(const SearchOptions& options);

}  // namespace shoal

#endif  // SHOAL_SRC_DB_VALIDATE_H_

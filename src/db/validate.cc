// Copyright 2026 The shoal Authors.

#include "db/validate.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distance/distance.h"
#include "util/status_macros.h"
#include "util/string_view.h"

namespace shoal {

namespace {

absl::Status CheckCompaction(const CompactionOptions& c) {
  if (c.min_merge_width < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Options::compaction.min_merge_width must be >= 2, got ", c.min_merge_width));
  }
  if (c.max_segments < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Options::compaction.max_segments must be >= 2, got ", c.max_segments));
  }
  if (!(c.consolidate_dead_fraction > 0 && c.consolidate_dead_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Options::compaction.consolidate_dead_fraction must be in (0, 1], got ",
                     c.consolidate_dead_fraction));
  }
  const std::pair<const char*, double> ratios[] = {
      {"size_ratio", c.size_ratio},
      {"fold_ratio", c.fold_ratio},
      {"quiescent_fold_ratio", c.quiescent_fold_ratio}};
  for (const auto& [name, value] : ratios) {
    if (!(value >= 0) || !std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Options::compaction.", name, " must be finite and >= 0, got ", value));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateOptions(const Options& o) {
  if (static_cast<uint8_t>(o.fsync) > static_cast<uint8_t>(FsyncPolicy::kInterval)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Options::fsync must be kNever, kAlways or kInterval (0..2), got ",
                     static_cast<int>(o.fsync)));
  }
  if (o.fsync == FsyncPolicy::kInterval && o.sync_interval_us == 0) {
    return absl::InvalidArgumentError(
        "Options::sync_interval_us must be >= 1 with FsyncPolicy::kInterval, got 0");
  }
  if (static_cast<uint8_t>(o.segment_storage) > static_cast<uint8_t>(SegmentStorage::kDisk)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Options::segment_storage must be kMapped or kDisk (0..1), got ",
                     static_cast<int>(o.segment_storage)));
  }
  if (o.arena_block_bytes > kMaxArenaBlockBytes) {
    return absl::InvalidArgumentError(absl::StrCat("Options::arena_block_bytes must be at most ",
                                                   kMaxArenaBlockBytes, ", got ",
                                                   o.arena_block_bytes));
  }
  if (o.wal_file_bytes > kMaxWalFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat("Options::wal_file_bytes must be at most ",
                                                   kMaxWalFileBytes, ", got ",
                                                   o.wal_file_bytes));
  }
  if (o.read_only && o.error_if_exists) {
    return absl::InvalidArgumentError(
        "Options::error_if_exists must be false with Options::read_only (a reader opens an "
        "existing database only)");
  }
  SHOAL_RETURN_IF_ERROR(CheckCompaction(o.compaction));
  if (o.worker_threads > kMaxWorkerThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Options::worker_threads must be in 0..", kMaxWorkerThreads, ", got ", o.worker_threads));
  }
  // dim 0 ("as stored", or no default collection) leaves the other fields
  // unused; they are checked all the same, as the header promises.
  CollectionOptions shape = o.default_collection;
  if (shape.dim == 0) shape.dim = 1;
  absl::Status s = ValidateCollectionOptions(shape);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Options::default_collection: ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateVectors(std::span<const float> vectors, size_t n, uint32_t dim,
                             Metric metric, std::string_view what) {
  if (vectors.size() != n * dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        AsAbsl(what), " has ", vectors.size(), " floats; expected ", n, " x dim ", dim, " = ",
        n * dim));
  }
  // The common case in one pass over the batch: every component small
  // enough that each row is finite and within range (dim <= kMaxDim = 4096).
  if (dim <= kMaxFastCheckDim && AllWellBelowDistanceRange(vectors.data(), vectors.size())) {
    return absl::OkStatus();
  }
  if (!AllFinite(vectors.data(), vectors.size())) {
    for (size_t i = 0; i < vectors.size(); ++i) {
      if (!std::isfinite(vectors[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            AsAbsl(what), " row ", i / dim, " component ", i % dim, " is ", vectors[i],
            "; every component must be finite"));
      }
    }
  }
  if (metric != Metric::kCosine) {
    for (size_t row = 0; row < n; ++row) {
      if (!NormWithinDistanceRange(vectors.data() + row * dim, dim)) {
        return absl::InvalidArgumentError(absl::StrCat(
            AsAbsl(what), " row ", row, " has a squared norm above 2^124 (~2.1e37), the "
            "most a vector may have under kL2 and kInnerProduct so that no distance "
            "overflows a float"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSearchOptions(const SearchOptions& o) {
  if (o.k == 0) return absl::InvalidArgumentError("SearchOptions::k must be >= 1, got 0");
  if (o.list_size == 0) {
    return absl::InvalidArgumentError("SearchOptions::list_size must be >= 1, got 0");
  }
  // beam_width: any value (0 = the storage's best; disk searches cap reads
  // in flight at 64).
  if (static_cast<uint8_t>(o.disk_search) > static_cast<uint8_t>(DiskSearch::kPipelined)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SearchOptions::disk_search must be kAuto, kBeam or kPipelined (0..2), got ",
        static_cast<int>(o.disk_search)));
  }
  return absl::OkStatus();
}

}  // namespace shoal

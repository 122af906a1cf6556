// Copyright 2026 The shoal Authors.

#include "db/validate.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distance/distance.h"
#include "util/string_view.h"

namespace shoal {

absl::Status ValidateOptions(const Options& o) {
  if (o.fsync == FsyncPolicy::kInterval && o.sync_interval_us == 0) {
    return absl::InvalidArgumentError("sync_interval_us must be > 0 with kInterval");
  }
  if (static_cast<uint8_t>(o.fsync) > static_cast<uint8_t>(FsyncPolicy::kInterval)) {
    return absl::InvalidArgumentError("unknown fsync policy");
  }
  if (static_cast<uint8_t>(o.segment_storage) > static_cast<uint8_t>(SegmentStorage::kDisk)) {
    return absl::InvalidArgumentError("unknown segment storage");
  }
  if (o.compaction.min_merge_width < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compaction.min_merge_width must be >= 2, got ", o.compaction.min_merge_width));
  }
  if (o.compaction.max_segments < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compaction.max_segments must be >= 2, got ", o.compaction.max_segments));
  }
  if (!(o.compaction.consolidate_dead_fraction > 0 &&
        o.compaction.consolidate_dead_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("compaction.consolidate_dead_fraction must be in (0, 1], got ",
                     o.compaction.consolidate_dead_fraction));
  }
  const std::pair<const char*, double> ratios[] = {
      {"size_ratio", o.compaction.size_ratio},
      {"fold_ratio", o.compaction.fold_ratio},
      {"quiescent_fold_ratio", o.compaction.quiescent_fold_ratio}};
  for (const auto& [name, value] : ratios) {
    if (!(value >= 0) || !std::isfinite(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("compaction.", name, " must be a finite number >= 0, got ", value));
    }
  }
  if (o.worker_threads > kMaxWorkerThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker_threads must be at most ", kMaxWorkerThreads, ", got ", o.worker_threads));
  }
  if (o.default_collection.dim != 0) {
    return ValidateCollectionOptions(o.default_collection);
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
  if (o.k == 0) return absl::InvalidArgumentError("SearchOptions.k must be >= 1");
  if (o.list_size == 0) return absl::InvalidArgumentError("SearchOptions.list_size must be >= 1");
  return absl::OkStatus();
}

}  // namespace shoal

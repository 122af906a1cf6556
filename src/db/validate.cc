// Copyright 2026 The shoal Authors.

#include "db/validate.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "distance/distance.h"
#include "util/string_view.h"

namespace shoal {

absl::Status ValidateCollectionName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCollectionName) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collection name must have 1..", kMaxCollectionName, " characters, got ",
        name.size()));
  }
  if (name.front() == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat("collection name '", AsAbsl(name), "' must not start with '.'"));
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collection name '", AsAbsl(name), "' may only contain [A-Za-z0-9_.-]"));
    }
  }
  // Names are directory names next to the database's own files.
  if (name == "LOCK" || name.starts_with("MANIFEST")) {
    return absl::InvalidArgumentError(
        absl::StrCat("collection name '", AsAbsl(name), "' is reserved"));
  }
  return absl::OkStatus();
}

absl::Status ValidateCollectionOptions(const CollectionOptions& o) {
  if (o.dim == 0 || o.dim > kMaxDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim must be in 1..", kMaxDim, ", got ", o.dim));
  }
  if (static_cast<uint8_t>(o.metric) > static_cast<uint8_t>(Metric::kCosine)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown metric ", static_cast<int>(o.metric)));
  }
  if (o.shard_count > kMaxShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard_count must be at most ", kMaxShards, ", got ", o.shard_count));
  }
  if (o.graph.max_degree == 0 || o.graph.max_degree > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph.max_degree must be in 1..1024, got ", o.graph.max_degree));
  }
  if (o.graph.build_list_size == 0 || o.graph.build_list_size > kMaxBuildListSize) {
    return absl::InvalidArgumentError(absl::StrCat("graph.build_list_size must be in 1..",
                                                   kMaxBuildListSize, ", got ",
                                                   o.graph.build_list_size));
  }
  if (!(o.graph.alpha >= 1.0f) || !std::isfinite(o.graph.alpha)) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph.alpha must be a finite number >= 1, got ", o.graph.alpha));
  }
  return absl::OkStatus();
}

absl::Status ValidateOptions(const Options& o) {
  if (o.fsync == FsyncPolicy::kInterval && o.sync_interval_us == 0) {
    return absl::InvalidArgumentError("sync_interval_us must be > 0 with kInterval");
  }
  if (static_cast<uint8_t>(o.fsync) > static_cast<uint8_t>(FsyncPolicy::kInterval)) {
    return absl::InvalidArgumentError("unknown fsync policy");
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
  if (o.list_size < o.k) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SearchOptions.list_size (", o.list_size, ") must be >= k (", o.k, ")"));
  }
  if (o.beam_width == 0) {
    return absl::InvalidArgumentError("SearchOptions.beam_width must be >= 1");
  }
  return absl::OkStatus();
}

}  // namespace shoal

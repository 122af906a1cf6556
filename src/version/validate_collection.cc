// Copyright 2026 The shoal Authors.

#include "version/validate_collection.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "shoal/record.h"
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
        absl::StrCat("CollectionOptions::dim must be in 1..", kMaxDim, ", got ", o.dim));
  }
  if (static_cast<uint8_t>(o.metric) > static_cast<uint8_t>(Metric::kCosine)) {
    return absl::InvalidArgumentError(
        absl::StrCat("CollectionOptions::metric must be kL2, kInnerProduct or kCosine (0..2), got ",
                     static_cast<int>(o.metric)));
  }
  if (o.shard_count > kMaxShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("CollectionOptions::shard_count must be in 0..", kMaxShards, ", got ",
                     o.shard_count));
  }
  if (o.graph.max_degree == 0 || o.graph.max_degree > kMaxGraphDegree) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GraphOptions::max_degree must be in 1..", kMaxGraphDegree, ", got ", o.graph.max_degree));
  }
  if (o.graph.build_list_size == 0 || o.graph.build_list_size > kMaxBuildListSize) {
    return absl::InvalidArgumentError(absl::StrCat("GraphOptions::build_list_size must be in 1..",
                                                   kMaxBuildListSize, ", got ",
                                                   o.graph.build_list_size));
  }
  if (!(o.graph.alpha >= 1.0f) || !std::isfinite(o.graph.alpha)) {
    return absl::InvalidArgumentError(
        absl::StrCat("GraphOptions::alpha must be finite and >= 1, got ", o.graph.alpha));
  }
  if (o.code != VectorCode::kNone && o.code != VectorCode::kSq8) {
    return absl::InvalidArgumentError(
        absl::StrCat("CollectionOptions::code must be kNone or kSq8 (0..1), got ",
                     static_cast<int>(o.code)));
  }
  if (o.attributes.size() > kMaxAttributes) {
    return absl::InvalidArgumentError(absl::StrCat("CollectionOptions::attributes: ",
                                                   o.attributes.size(),
                                                   " declared; at most ", kMaxAttributes));
  }
  for (size_t i = 0; i < o.attributes.size(); ++i) {
    const std::string& a = o.attributes[i];
    const bool charset = std::all_of(a.begin(), a.end(), [](char ch) {
      return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_';
    });
    if (a.empty() || a.size() > kMaxAttributeNameLength || !charset) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CollectionOptions::attributes[", i, "] '", AsAbsl(a), "': a name is 1..",
          kMaxAttributeNameLength, " characters of [A-Za-z0-9_]"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.attributes[j] == a) {
        return absl::InvalidArgumentError(absl::StrCat(
            "CollectionOptions::attributes: '", AsAbsl(a), "' is declared twice"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace shoal

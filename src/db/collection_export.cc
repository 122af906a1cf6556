// Copyright 2026 The shoal Authors.
//
// Collection::Export: every shard's view taken at one moment, handed to the
// export iterator (db/record_export.h).

#include <vector>

#include "absl/strings/str_cat.h"
#include "db/collection.h"
#include "db/record_export.h"

namespace shoal {

absl::StatusOr<std::unique_ptr<RecordIterator>> Collection::Export(
    const ExportOptions& options) const {
  if ((options.parts & ~uint32_t{kAllParts}) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Export: parts 0x", absl::Hex(options.parts), " has bits RecordParts does not name"));
  }
  std::vector<const Shard*> shards;
  shards.reserve(shards_.size());
  for (const std::unique_ptr<Shard>& s : shards_) shards.push_back(s.get());
  return NewExportIterator(Shard::TakeExportViews(shards), options_.dim, options);
}

}  // namespace shoal

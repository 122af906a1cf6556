// Copyright 2026 The shoal Authors.
//
// The texmex formats (.fvecs, .ivecs, .bvecs): records of an int32 dim and
// dim elements, no header.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "dataset/layout.h"
#include "util/coding.h"

namespace shoal::dataset_internal {

absl::StatusOr<Layout> TexmexLayout(std::string_view bytes, ElementType type,
                                    uint64_t max_rows, const std::string& context) {
  const uint64_t size = bytes.size();
  if (size == 0) return Layout{type, 0, 0, 0, 0};
  if (size < 4) {
    return ErrorAt(absl::StatusCode::kDataLoss, context, 0,
                   absl::StrCat("the dim of record 0 is cut short: the file has ", size,
                                " bytes"));
  }
  const int32_t dim = static_cast<int32_t>(DecodeFixed32(bytes.data()));
  absl::Status s = CheckDim(dim, context, 0, "the dim of record 0");
  if (!s.ok()) return s;
  const uint64_t record = 4 + uint64_t(dim) * ElementSize(type);
  const uint64_t rows = size / record;

  // Walks the records to be read, so a damaged one is named precisely.
  uint64_t i = 0, off = 0;
  for (; i < max_rows && off < size; ++i, off += record) {
    if (size - off < 4) {
      return ErrorAt(absl::StatusCode::kDataLoss, context, off,
                     absl::StrCat("the dim of record ", i, " is cut short: ", size - off,
                                  " of 4 bytes"));
    }
    const int32_t d = static_cast<int32_t>(DecodeFixed32(bytes.data() + off));
    if (d != dim) {
      s = CheckDim(d, context, off, absl::StrCat("the dim of record ", i));
      if (!s.ok()) return s;
      return ErrorAt(absl::StatusCode::kInvalidArgument, context, off,
                     absl::StrCat("record ", i, " has dim ", d, " but record 0 has dim ", dim,
                                  " (all records of a file must have the same dim)"));
    }
    if (size - off < record) {
      return ErrorAt(absl::StatusCode::kDataLoss, context, off,
                     absl::StrCat("record ", i, " is cut short: ", size - off, " of ", record,
                                  " bytes (dim ", dim, ")"));
    }
  }
  if (off < size && size % record != 0) {
    // Stopped at max_rows: the records after it were not walked.
    return ErrorAt(absl::StatusCode::kDataLoss, context, rows * record,
                   absl::StrCat("the file's ", size, " bytes are not a whole number of ",
                                record, "-byte records (dim ", dim,
                                "): the last record is cut short, or a record past the first ",
                                max_rows, " (not walked) has another dim"));
  }
  return Layout{type, rows, static_cast<uint32_t>(dim), 4, record};
}

}  // namespace shoal::dataset_internal

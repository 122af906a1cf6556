// Copyright 2026 The shoal Authors.
//
// Internal to src/dataset/. Each format's parser checks a file's bytes and
// describes where its rows are (a Layout); dataset_reader.cc then copies and
// converts the rows the caller wants. A Layout that a parser returns is
// always inside the bytes, so the copy needs no further checks.
//
// Errors name the file, the byte offset and what is wrong: DataLossError
// when the file ends before what it promises (truncated), InvalidArgumentError
// for any other malformed content.

#ifndef SHOAL_SRC_DATASET_LAYOUT_H_
#define SHOAL_SRC_DATASET_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shoal::dataset_internal {

enum class ElementType { kFloat32, kFloat64, kInt32, kInt64, kUint8 };

size_t ElementSize(ElementType type);
// "float32", "float64", "int32", "int64", "uint8".
std::string ElementName(ElementType type);

// Row i is `cols` elements of `type` starting at byte offset + i * stride.
// INVARIANT: every row lies inside the parsed bytes, i.e.
// offset + i * stride + cols * ElementSize(type) <= size for all i < rows.
struct Layout {
  ElementType type = ElementType::kFloat32;
  uint64_t rows = 0;  // rows in the file (the caller applies max_rows)
  uint32_t cols = 0;
  uint64_t offset = 0;
  uint64_t stride = 0;
  // Where the file decided `type` (the .npy descr); 0 where the extension
  // decides it. Named when the type does not suit the caller.
  uint64_t type_offset = 0;
};

// `context` starts every message: "<file>: read as <format>" and, when the
// format came from the extension, a note saying so.
absl::Status ErrorAt(absl::StatusCode code, const std::string& context, uint64_t offset,
                     const std::string& what);

// InvalidArgument unless 1 <= dim <= kMaxDatasetDim; `what` names the field
// ("the dim of record 3").
absl::Status CheckDim(int64_t dim, const std::string& context, uint64_t offset,
                      const std::string& what);

// For formats with a header: checks that `file_size` holds exactly `rows`
// rows of `cols` elements of `type` from `data_offset` on. `header_offset`
// is where rows and cols were read (named when their product overflows).
absl::StatusOr<Layout> DenseLayout(uint64_t file_size, ElementType type, uint64_t rows,
                                   uint32_t cols, uint64_t data_offset,
                                   uint64_t header_offset, const std::string& context);

// .fvecs / .ivecs / .bvecs with elements of `type`. Checks the dim and the
// bounds of the first min(max_rows, all) records one by one; the rest only
// by the file's length being a whole number of records (so that reading the
// first rows of a huge file does not touch all of it).
absl::StatusOr<Layout> TexmexLayout(std::string_view bytes, ElementType type,
                                    uint64_t max_rows, const std::string& context);

// .fbin / .ibin / .u8bin with elements of `type`.
absl::StatusOr<Layout> BinLayout(std::string_view bytes, ElementType type,
                                 const std::string& context);

// .npy: the element type comes from the header's descr.
absl::StatusOr<Layout> NpyLayout(std::string_view bytes, const std::string& context);

}  // namespace shoal::dataset_internal

#endif  // SHOAL_SRC_DATASET_LAYOUT_H_

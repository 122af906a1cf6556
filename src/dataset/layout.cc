// Copyright 2026 The shoal Authors.
//
// What every format shares (element types, error messages, the size check of
// a file with a header) and the big-ann-benchmarks .*bin formats.

#include "dataset/layout.h"

#include "absl/strings/str_cat.h"
#include "dataset/dataset_format.h"
#include "util/coding.h"

namespace shoal::dataset_internal {

size_t ElementSize(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return 4;
    case ElementType::kFloat64: return 8;
    case ElementType::kInt32: return 4;
    case ElementType::kInt64: return 8;
    case ElementType::kUint8: return 1;
  }
  return 1;
}

std::string ElementName(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat64: return "float64";
    case ElementType::kInt32: return "int32";
    case ElementType::kInt64: return "int64";
    case ElementType::kUint8: return "uint8";
  }
  return "?";
}

absl::Status ErrorAt(absl::StatusCode code, const std::string& context, uint64_t offset,
                     const std::string& what) {
  return absl::Status(code, absl::StrCat(context, ": at byte ", offset, ": ", what));
}

absl::Status CheckDim(int64_t dim, const std::string& context, uint64_t offset,
                      const std::string& what) {
  if (dim >= 1 && dim <= int64_t{kMaxDatasetDim}) return absl::OkStatus();
  return ErrorAt(absl::StatusCode::kInvalidArgument, context, offset,
                 absl::StrCat(what, " is ", dim, ", not in [1, ", kMaxDatasetDim, "]"));
}

absl::StatusOr<Layout> DenseLayout(uint64_t file_size, ElementType type, uint64_t rows,
                                   uint32_t cols, uint64_t data_offset,
                                   uint64_t header_offset, const std::string& context) {
  const uint64_t row_bytes = uint64_t{cols} * ElementSize(type);  // cols is checked
  uint64_t payload = 0;
  if (__builtin_mul_overflow(rows, row_bytes, &payload)) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, header_offset,
                   absl::StrCat(rows, " rows of ", cols, " ", ElementName(type),
                                " overflow a 64-bit byte count"));
  }
  const uint64_t available = file_size - data_offset;  // parsers check data_offset
  if (available < payload) {
    const uint64_t whole_rows = available / row_bytes;
    return ErrorAt(absl::StatusCode::kDataLoss, context, data_offset + whole_rows * row_bytes,
                   absl::StrCat("the header promises ", rows, " rows of ", cols, " ",
                                ElementName(type), " (", payload, " bytes from byte ",
                                data_offset, ") but the file ends at byte ", file_size,
                                ", inside row ", whole_rows));
  }
  if (available > payload) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, data_offset + payload,
                   absl::StrCat(available - payload, " bytes follow the last of ", rows,
                                " rows of ", cols, " ", ElementName(type),
                                " (a wrong header, or another format)"));
  }
  return Layout{type, rows, cols, data_offset, row_bytes};
}

absl::StatusOr<Layout> BinLayout(std::string_view bytes, ElementType type,
                                 const std::string& context) {
  constexpr uint64_t kHeaderSize = 8;  // n:uint32 dim:uint32
  if (bytes.size() < kHeaderSize) {
    return ErrorAt(absl::StatusCode::kDataLoss, context, 0,
                   absl::StrCat("the 8-byte header (n:uint32, dim:uint32) is cut short: the "
                                "file has ", bytes.size(), " bytes"));
  }
  const uint32_t n = DecodeFixed32(bytes.data());
  const uint32_t dim = DecodeFixed32(bytes.data() + 4);
  // A dim read as uint32 is never negative; a negative int32 written there
  // shows up as a huge one and is rejected all the same.
  absl::Status s = CheckDim(dim, context, 4, "the header's dim");
  if (!s.ok()) return s;
  return DenseLayout(bytes.size(), type, n, dim, kHeaderSize, 0, context);
}

}  // namespace shoal::dataset_internal

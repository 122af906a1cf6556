// Copyright 2026 The shoal Authors.
//
// Where the rows of a .npy file are: its header checked against what a data
// set can be (2-d, C order, a little-endian dtype shoal converts).

#include "absl/strings/str_cat.h"
#include "dataset/dataset_format.h"
#include "dataset/layout.h"
#include "dataset/npy_format.h"

namespace shoal::dataset_internal {
namespace {

bool DescrType(const std::string& descr, ElementType* type) {
  // One-byte types have no byte order; NumPy writes '|', accept '<' too.
  if (descr == "|u1" || descr == "<u1") *type = ElementType::kUint8;
  else if (descr == "<f4") *type = ElementType::kFloat32;
  else if (descr == "<f8") *type = ElementType::kFloat64;
  else if (descr == "<i4") *type = ElementType::kInt32;
  else if (descr == "<i8") *type = ElementType::kInt64;
  else return false;
  return true;
}

std::string ShapeString(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) absl::StrAppend(&s, i ? ", " : "", shape[i]);
  return absl::StrCat(s, shape.size() == 1 ? ",)" : ")");
}

}  // namespace

absl::StatusOr<Layout> NpyLayout(std::string_view bytes, const std::string& context) {
  absl::StatusOr<NpyHeader> header = ParseNpyHeader(bytes, context);
  if (!header.ok()) return header.status();
  if (header->fortran_order) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, header->fortran_order_offset,
                   "fortran_order is True (column-major); only C order is read: save "
                   "numpy.ascontiguousarray(a) instead");
  }
  ElementType type;
  if (!DescrType(header->descr, &type)) {
    const std::string& d = header->descr;
    if (!d.empty() && d[0] == '>') {
      return ErrorAt(absl::StatusCode::kInvalidArgument, context, header->descr_offset,
                     absl::StrCat("big-endian dtype '", d, "' is not supported: save "
                                  "a.astype('<", d.substr(1), "') instead"));
    }
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, header->descr_offset,
                   absl::StrCat("unsupported dtype '", d, "': vectors are '<f4', '<f8' or "
                                "'|u1', neighbour ids '<i4' or '<i8'"));
  }
  const std::vector<uint64_t>& shape = header->shape;
  if (shape.size() != 2) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, header->shape_offset,
                   absl::StrCat("shape ", ShapeString(shape), " has ", shape.size(),
                                " dims; a data set is 2-d (rows, cols)"));
  }
  if (shape[1] < 1 || shape[1] > kMaxDatasetDim) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, context, header->shape_offset,
                   absl::StrCat("shape ", ShapeString(shape), ": cols ", shape[1],
                                " is not in [1, ", kMaxDatasetDim, "]"));
  }
  absl::StatusOr<Layout> layout =
      DenseLayout(bytes.size(), type, shape[0], static_cast<uint32_t>(shape[1]),
                  header->data_offset, header->shape_offset, context);
  if (layout.ok()) layout->type_offset = header->descr_offset;
  return layout;
}

}  // namespace shoal::dataset_internal

// Copyright 2026 The shoal Authors.
//
// Internal to src/dataset/: the preamble and header of a NumPy .npy file
// (format in dataset_format.h; NumPy's own specification is
// numpy/lib/format.py). The header is a Python dict literal; the parser
// accepts the subset NumPy writes: quoted strings without escapes, True,
// False, tuples of non-negative integers (an 'L' suffix allowed), spaces,
// trailing commas, keys in any order. Like NumPy, it requires exactly the keys
// 'descr', 'fortran_order' and 'shape'.

#ifndef SHOAL_SRC_DATASET_NPY_FORMAT_H_
#define SHOAL_SRC_DATASET_NPY_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace shoal::dataset_internal {

// Beyond NumPy's own limit (64 dims), so no real file is refused; it keeps
// a hostile header from growing the shape without bound.
inline constexpr size_t kMaxNpyDims = 64;

struct NpyHeader {
  std::string descr;  // e.g. "<f4"
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  uint64_t data_offset = 0;  // the first byte after the header
  // Where each value starts in the file, for error messages.
  uint64_t descr_offset = 0;
  uint64_t fortran_order_offset = 0;
  uint64_t shape_offset = 0;
};

// Parses the preamble and header at the start of `bytes`; does not look at
// the data. DataLoss when the file ends inside them, InvalidArgument for a
// bad magic, an unknown version or a header outside the subset above.
absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes, const std::string& context);

// The preamble and header of a version 1.0 file holding a C-order
// rows x cols array of `descr`, padded so that the data starts at a multiple
// of 64 bytes, as NumPy writes it.
std::string EncodeNpyHeader(std::string_view descr, uint64_t rows, uint32_t cols);

}  // namespace shoal::dataset_internal

#endif  // SHOAL_SRC_DATASET_NPY_FORMAT_H_

// Copyright 2026 The shoal Authors.

#include "dataset/dataset_writer.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "dataset/npy_format.h"
#include "util/coding.h"
#include "util/status_macros.h"
#include "util/string_view.h"

namespace shoal {
namespace {

absl::Status CheckShape(uint64_t rows, uint32_t cols, size_t values, const std::string& name) {
  if (cols < 1 || cols > kMaxDatasetDim) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cannot write: cols ", cols,
                                                   " is not in [1, ", kMaxDatasetDim, "]"));
  }
  uint64_t expected = 0;
  if (__builtin_mul_overflow(rows, uint64_t{cols}, &expected) || expected != values) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cannot write: ", values,
                                                   " values are not rows * cols = ", rows,
                                                   " * ", cols));
  }
  return absl::OkStatus();
}

// The file of `format` for rows x cols elements of `element_size` bytes;
// put_row(dst, r) stores row r's elements at dst. REQUIRES: CheckShape
// passed, so every size below fits (it is within a few times the input's).
template <typename PutRow>
absl::StatusOr<std::string> Assemble(DatasetFormat format, uint64_t rows, uint32_t cols,
                                     size_t element_size, std::string_view npy_descr,
                                     const std::string& name, PutRow put_row) {
  const uint64_t row_bytes = uint64_t{cols} * element_size;
  std::string out;
  uint64_t stride = row_bytes;
  uint64_t first = 0;  // where row 0's elements go
  switch (format) {
    case DatasetFormat::kFvecs:
    case DatasetFormat::kIvecs:
    case DatasetFormat::kBvecs:
      stride = 4 + row_bytes;
      out.resize(rows * stride);
      first = 4;
      for (uint64_t r = 0; r < rows; ++r) EncodeFixed32(out.data() + r * stride, cols);
      break;
    case DatasetFormat::kFbin:
    case DatasetFormat::kIbin:
    case DatasetFormat::kU8bin:
      if (rows > UINT32_MAX) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, ": cannot write: ", rows, " rows do not fit the uint32 count of .",
            AsAbsl(FormatName(format))));
      }
      out.resize(8 + rows * row_bytes);
      EncodeFixed32(out.data(), static_cast<uint32_t>(rows));
      EncodeFixed32(out.data() + 4, cols);
      first = 8;
      break;
    case DatasetFormat::kNpy: {
      out = dataset_internal::EncodeNpyHeader(npy_descr, rows, cols);
      first = out.size();
      out.resize(first + rows * row_bytes);
      break;
    }
    case DatasetFormat::kUnknown:
      return absl::InvalidArgumentError(absl::StrCat(name, ": cannot write: unknown format"));
  }
  for (uint64_t r = 0; r < rows; ++r) put_row(out.data() + first + r * stride, r);
  return out;
}

bool IsByteFormat(DatasetFormat f) {
  return f == DatasetFormat::kBvecs || f == DatasetFormat::kU8bin;
}

// InvalidArgument naming the first value a byte format cannot hold.
absl::Status CheckBytes(const Matrix& m, const std::string& name) {
  for (size_t i = 0; i < m.data.size(); ++i) {
    const float v = m.data[i];
    if (!(v >= 0 && v <= 255 && v == std::floor(v))) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": cannot write: row ", i / m.cols, ", column ", i % m.cols,
                       " is ", v, ", not an integer in [0, 255] as a byte format needs"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> EncodeVectors(const Matrix& m, DatasetFormat format,
                                          const std::string& name) {
  if (format == DatasetFormat::kUnknown || IsNeighborFormat(format)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": cannot write vectors ",
        format == DatasetFormat::kUnknown ? "in an unknown format"
                                          : absl::StrCat("as .", AsAbsl(FormatName(format))),
        "; vectors are written as .fvecs, .bvecs, .fbin, .u8bin or .npy"));
  }
  SHOAL_RETURN_IF_ERROR(CheckShape(m.rows, m.cols, m.data.size(), name));
  const size_t cols = m.cols;
  if (IsByteFormat(format)) {
    SHOAL_RETURN_IF_ERROR(CheckBytes(m, name));
    return Assemble(format, m.rows, m.cols, 1, "|u1", name, [&](char* dst, uint64_t r) {
      const float* row = m.data.data() + r * cols;
      for (size_t c = 0; c < cols; ++c) dst[c] = static_cast<char>(static_cast<uint8_t>(row[c]));
    });
  }
  return Assemble(format, m.rows, m.cols, 4, "<f4", name, [&](char* dst, uint64_t r) {
    std::memcpy(dst, m.data.data() + r * cols, cols * 4);
  });
}

absl::StatusOr<std::string> EncodeNeighbors(const IntMatrix& m, DatasetFormat format,
                                            const std::string& name) {
  if (format != DatasetFormat::kNpy && !IsNeighborFormat(format)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": cannot write neighbour ids ",
        format == DatasetFormat::kUnknown ? "in an unknown format"
                                          : absl::StrCat("as .", AsAbsl(FormatName(format))),
        "; they are written as .ivecs, .ibin or .npy"));
  }
  SHOAL_RETURN_IF_ERROR(CheckShape(m.rows, m.cols, m.data.size(), name));
  const size_t cols = m.cols;
  return Assemble(format, m.rows, m.cols, 4, "<i4", name, [&](char* dst, uint64_t r) {
    std::memcpy(dst, m.data.data() + r * cols, cols * 4);
  });
}

absl::Status WriteVectors(FileSystem* fs, const std::string& path, const Matrix& vectors) {
  SHOAL_ASSIGN_OR_RETURN(const std::string bytes,
                         EncodeVectors(vectors, DetectFormat(path), path));
  return WriteFileAtomic(fs, path, bytes);
}

absl::Status WriteNeighbors(FileSystem* fs, const std::string& path,
                            const IntMatrix& neighbors) {
  SHOAL_ASSIGN_OR_RETURN(const std::string bytes,
                         EncodeNeighbors(neighbors, DetectFormat(path), path));
  return WriteFileAtomic(fs, path, bytes);
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// Picks the parser for a format, then copies the wanted rows out of the
// checked Layout, converting elements to float or int32.

#include "dataset/dataset_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "dataset/layout.h"
#include "util/coding.h"
#include "util/status_macros.h"
#include "util/string_view.h"

namespace shoal {
namespace {

using dataset_internal::ElementName;
using dataset_internal::ElementType;
using dataset_internal::ErrorAt;
using dataset_internal::Layout;

enum class Kind { kVectors, kNeighbors };

std::string Context(const std::string& name, DatasetFormat format, bool from_extension) {
  return absl::StrCat(name, ": read as .", AsAbsl(FormatName(format)),
                      from_extension ? " (by its extension)" : "");
}

// InvalidArgument when `format` cannot hold `kind` at all.
absl::Status CheckFormat(DatasetFormat format, Kind kind, const std::string& name,
                         bool from_extension) {
  const char* expected = kind == Kind::kVectors
                             ? "vectors are read from .fvecs, .bvecs, .fbin, .u8bin or .npy"
                             : "neighbour ids are read from .ivecs, .ibin or .npy";
  if (format == DatasetFormat::kUnknown) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, from_extension ? ": cannot tell the format from the extension; "
                             : ": no format given; ",
        expected));
  }
  if (format == DatasetFormat::kNpy || IsNeighborFormat(format) == (kind == Kind::kNeighbors)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      Context(name, format, from_extension), ": it holds ",
      kind == Kind::kVectors ? "neighbour ids, not vectors" : "vectors, not neighbour ids",
      "; ", expected));
}

absl::StatusOr<Layout> ParseLayout(std::string_view bytes, DatasetFormat format,
                                   uint64_t max_rows, const std::string& context) {
  using dataset_internal::BinLayout;
  using dataset_internal::TexmexLayout;
  switch (format) {
    case DatasetFormat::kFvecs: return TexmexLayout(bytes, ElementType::kFloat32, max_rows, context);
    case DatasetFormat::kIvecs: return TexmexLayout(bytes, ElementType::kInt32, max_rows, context);
    case DatasetFormat::kBvecs: return TexmexLayout(bytes, ElementType::kUint8, max_rows, context);
    case DatasetFormat::kFbin: return BinLayout(bytes, ElementType::kFloat32, context);
    case DatasetFormat::kIbin: return BinLayout(bytes, ElementType::kInt32, context);
    case DatasetFormat::kU8bin: return BinLayout(bytes, ElementType::kUint8, context);
    case DatasetFormat::kNpy: return dataset_internal::NpyLayout(bytes, context);
    case DatasetFormat::kUnknown: break;
  }
  return absl::InvalidArgumentError(absl::StrCat(context, ": unknown format"));
}

// IEEE rounding to nearest, spelled out: a double beyond float's range does
// not have a defined conversion in C++ (UBSan flags it), so those become
// infinities here, as NumPy's astype('<f4') makes them.
float ToFloat(double d) {
  constexpr double kOverflow = 0x1.ffffffp127;  // FLT_MAX + half an ulp rounds up
  if (d >= kOverflow) return std::numeric_limits<float>::infinity();
  if (d <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(d);
}

// Copies the first `rows` rows of `layout` (REQUIRES: rows <= layout.rows,
// rows > 0) to `out`, converting to float. The element types are checked by
// the caller.
void CopyFloats(std::string_view bytes, const Layout& layout, uint64_t rows, float* out) {
  const char* in = bytes.data() + layout.offset;
  const size_t cols = layout.cols;
  if (layout.type == ElementType::kFloat32 && layout.stride == cols * 4) {
    std::memcpy(out, in, rows * cols * 4);
    return;
  }
  for (uint64_t r = 0; r < rows; ++r, in += layout.stride, out += cols) {
    if (layout.type == ElementType::kFloat32) {
      std::memcpy(out, in, cols * 4);
    } else if (layout.type == ElementType::kFloat64) {
      for (size_t c = 0; c < cols; ++c) {
        out[c] = ToFloat(std::bit_cast<double>(DecodeFixed64(in + 8 * c)));
      }
    } else {
      for (size_t c = 0; c < cols; ++c) out[c] = static_cast<unsigned char>(in[c]);
    }
  }
}

// As CopyFloats, to int32; int64 values must fit.
absl::Status CopyInts(std::string_view bytes, const Layout& layout, uint64_t rows,
                      const std::string& context, int32_t* out) {
  const char* in = bytes.data() + layout.offset;
  const size_t cols = layout.cols;
  if (layout.type == ElementType::kInt32) {
    // int32 rows are contiguous in .ibin and .npy, strided in .ivecs.
    for (uint64_t r = 0; r < rows; ++r, in += layout.stride, out += cols) {
      std::memcpy(out, in, cols * 4);
    }
    return absl::OkStatus();
  }
  for (uint64_t r = 0; r < rows; ++r, in += layout.stride, out += cols) {
    for (size_t c = 0; c < cols; ++c) {
      const int64_t v = static_cast<int64_t>(DecodeFixed64(in + 8 * c));
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, context,
                       static_cast<uint64_t>(in + 8 * c - bytes.data()),
                       absl::StrCat("row ", r, ", column ", c, ": id ", v,
                                    " does not fit int32"));
      }
      out[c] = static_cast<int32_t>(v);
    }
  }
  return absl::OkStatus();
}

// InvalidArgument unless the file's element type suits `kind` (only .npy
// can disagree: its dtype decides).
absl::Status CheckType(const Layout& layout, Kind kind, const std::string& context) {
  const bool is_int = layout.type == ElementType::kInt32 || layout.type == ElementType::kInt64;
  if (is_int == (kind == Kind::kNeighbors)) return absl::OkStatus();
  return ErrorAt(absl::StatusCode::kInvalidArgument, context, layout.type_offset,
                 absl::StrCat("elements are ", ElementName(layout.type),
                              kind == Kind::kVectors
                                  ? ": vectors are float32, float64 or uint8 ('<f4', '<f8', "
                                    "'|u1'); integer ids are read with ReadNeighbors"
                                  : ": neighbour ids are int32 or int64 ('<i4', '<i8')"));
}

// The parse shared by both kinds; `Out` is Matrix or IntMatrix.
template <typename Out>
absl::StatusOr<Out> Parse(std::string_view bytes, DatasetFormat format, const std::string& name,
                          uint64_t max_rows, bool from_extension) {
  constexpr Kind kind = std::is_same_v<Out, Matrix> ? Kind::kVectors : Kind::kNeighbors;
  SHOAL_RETURN_IF_ERROR(CheckFormat(format, kind, name, from_extension));
  const std::string context = Context(name, format, from_extension);
  SHOAL_ASSIGN_OR_RETURN(const Layout layout, ParseLayout(bytes, format, max_rows, context));
  SHOAL_RETURN_IF_ERROR(CheckType(layout, kind, context));
  Out out;
  out.rows = std::min(layout.rows, max_rows);
  out.cols = layout.cols;
  // Bounded by the file's size: the layout's rows are inside `bytes`.
  out.data.resize(out.rows * out.cols);
  if (out.data.empty()) return out;
  if constexpr (kind == Kind::kVectors) {
    CopyFloats(bytes, layout, out.rows, out.data.data());
  } else {
    SHOAL_RETURN_IF_ERROR(CopyInts(bytes, layout, out.rows, context, out.data.data()));
  }
  return out;
}

template <typename Out>
absl::StatusOr<Out> Read(FileSystem* fs, const std::string& path, uint64_t max_rows) {
  const DatasetFormat format = DetectFormat(path);
  constexpr Kind kind = std::is_same_v<Out, Matrix> ? Kind::kVectors : Kind::kNeighbors;
  // Before opening, so that a wrong extension is the error even for a
  // missing file.
  SHOAL_RETURN_IF_ERROR(CheckFormat(format, kind, path, /*from_extension=*/true));
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<ReadOnlyMappedFile> file, fs->OpenReadOnlyMapped(path));
  return Parse<Out>(std::string_view(file->data(), file->size()), format, path, max_rows,
                    /*from_extension=*/true);
}

}  // namespace

absl::StatusOr<Matrix> ReadVectors(FileSystem* fs, const std::string& path, uint64_t max_rows) {
  return Read<Matrix>(fs, path, max_rows);
}

absl::StatusOr<IntMatrix> ReadNeighbors(FileSystem* fs, const std::string& path,
                                        uint64_t max_rows) {
  return Read<IntMatrix>(fs, path, max_rows);
}

absl::StatusOr<Matrix> ParseVectors(std::string_view bytes, DatasetFormat format,
                                    const std::string& name, uint64_t max_rows) {
  return Parse<Matrix>(bytes, format, name, max_rows, /*from_extension=*/false);
}

absl::StatusOr<IntMatrix> ParseNeighbors(std::string_view bytes, DatasetFormat format,
                                         const std::string& name, uint64_t max_rows) {
  return Parse<IntMatrix>(bytes, format, name, max_rows, /*from_extension=*/false);
}

}  // namespace shoal

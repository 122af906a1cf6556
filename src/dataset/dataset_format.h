// Copyright 2026 The shoal Authors.
//
// The vector data set files shoal reads and writes, and how a path names one.
// These are other projects' formats; every integer and element is
// little-endian.
//
//   .fvecs / .ivecs / .bvecs   (texmex, http://corpus-texmex.irisa.fr/)
//     file   := record*
//     record := dim:int32  element[dim]          float32 / int32 / uint8
//   There is no header: every record repeats the dim, all dims must be equal,
//   and the row count is file_size / (4 + dim * element_size). Two 2-d float
//   vectors (1, 2) and (3, 4) are these 24 bytes:
//     02000000 0000803f 00000040   02000000 00004040 00008040
//   An empty file holds no vectors.
//
//   .fbin / .ibin / .u8bin     (big-ann-benchmarks)
//     file := n:uint32  dim:uint32  element[n * dim]   float32 / int32 / uint8
//   The file is exactly 8 + n * dim * element_size bytes.
//
//   .npy                       (NumPy format versions 1.0, 2.0, 3.0)
//     file := "\x93NUMPY"  major:uint8  minor:uint8  header_len  header  data
//     header_len: uint16 in version 1.0, uint32 in 2.0 and 3.0;
//     header: a Python dict literal padded with spaces and ended by '\n':
//       {'descr': '<f4', 'fortran_order': False, 'shape': (1000, 128), }
//     data: shape[0] * shape[1] elements in C (row-major) order, nothing after.
//   Read: a 2-d shape, fortran_order False, descr '<f4', '<f8' or '|u1'
//   (vectors) and '<i4' or '<i8' (neighbour ids). Written: version 1.0,
//   '<f4' or '<i4', the header padded so the data starts at a multiple of 64.
//
// Dims are 1..kMaxDatasetDim in every format.

#ifndef SHOAL_SRC_DATASET_DATASET_FORMAT_H_
#define SHOAL_SRC_DATASET_DATASET_FORMAT_H_

#include <cstdint>
#include <string_view>

namespace shoal {

// Larger than any embedding in use, small enough that a hostile dim cannot
// make one row's size overflow anything.
inline constexpr uint32_t kMaxDatasetDim = 1u << 20;

enum class DatasetFormat { kUnknown, kFvecs, kIvecs, kBvecs, kFbin, kIbin, kU8bin, kNpy };

// The format named by the extension of `path`'s last component, compared
// case-insensitively ("a/B.FVECS" is kFvecs); kUnknown for anything else,
// including no extension.
DatasetFormat DetectFormat(std::string_view path);

// "fvecs", "ivecs", "bvecs", "fbin", "ibin", "u8bin", "npy"; "unknown".
std::string_view FormatName(DatasetFormat format);

// True for the formats that hold integer neighbour ids (ground truth):
// .ivecs and .ibin. (.npy holds either; its dtype decides.)
bool IsNeighborFormat(DatasetFormat format);

}  // namespace shoal

#endif  // SHOAL_SRC_DATASET_DATASET_FORMAT_H_

// Copyright 2026 The shoal Authors.
//
// Writes vector data set files (formats in dataset_format.h): ground truth
// computed once and cached next to the data, and files for tests. Whatever
// these write, dataset_reader.h reads back equal.
//
// Free functions, no shared state: safe to call from several threads (on
// different paths).

#ifndef SHOAL_SRC_DATASET_DATASET_WRITER_H_
#define SHOAL_SRC_DATASET_DATASET_WRITER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataset/dataset_format.h"
#include "dataset/dataset_reader.h"
#include "util/file_system.h"

namespace shoal {

// The bytes of a file in `format` holding `vectors`: .fvecs, .fbin, .npy
// (dtype '<f4'), or .bvecs / .u8bin when every value is an integer in
// [0, 255]. InvalidArgument, the message starting with `name`, when
// data.size() != rows * cols, cols is not in [1, kMaxDatasetDim], the format
// holds no vectors (.ivecs, .ibin, unknown), a value does not fit a byte
// format, or rows exceeds the uint32 count of .fbin / .u8bin.
[[nodiscard]] absl::StatusOr<std::string> EncodeVectors(const Matrix& vectors,
                                                        DatasetFormat format,
                                                        const std::string& name);

// As EncodeVectors, for ground truth: .ivecs, .ibin or .npy (dtype '<i4').
[[nodiscard]] absl::StatusOr<std::string> EncodeNeighbors(const IntMatrix& neighbors,
                                                          DatasetFormat format,
                                                          const std::string& name);

// Writes EncodeVectors(vectors, DetectFormat(path), path) to `path`
// atomically (WriteFileAtomic): after a crash `path` holds its old content
// or the new one, never a prefix -- a prefix of a texmex file would read
// back as a valid, shorter data set. The whole file is built in memory
// first, which suits what is written here (ground truth, test data), not a
// billion-vector base set.
[[nodiscard]] absl::Status WriteVectors(FileSystem* fs, const std::string& path,
                                        const Matrix& vectors);

// As WriteVectors, with EncodeNeighbors.
[[nodiscard]] absl::Status WriteNeighbors(FileSystem* fs, const std::string& path,
                                          const IntMatrix& neighbors);

}  // namespace shoal

#endif  // SHOAL_SRC_DATASET_DATASET_WRITER_H_

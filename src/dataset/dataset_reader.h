// Copyright 2026 The shoal Authors.
//
// Reads vector data sets and their ground truth from the files benchmarks
// ship: .fvecs/.bvecs/.ivecs, .fbin/.u8bin/.ibin and .npy (formats in
// dataset_format.h). Used by the benchmark and the command-line tool.
//
// Every malformed or truncated file gives a status naming the file, the byte
// offset and what is wrong: DataLossError when the file ends before what it
// promises, InvalidArgumentError for anything else (a dim outside
// [1, kMaxDatasetDim], records of different dims, sizes that overflow, a bad
// .npy header, an unsupported dtype, a wrong extension). Sizes are checked
// against the file's length before anything is allocated, so a hostile
// header cannot ask for more memory than the file implies. Non-finite floats
// are read as they are; callers that mind report them.
//
// Free functions, no shared state: safe to call from several threads.

#ifndef SHOAL_SRC_DATASET_DATASET_READER_H_
#define SHOAL_SRC_DATASET_DATASET_READER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dataset/dataset_format.h"
#include "util/file_system.h"

namespace shoal {

// Vectors, row-major: row i is data[i * cols, (i + 1) * cols).
// INVARIANT (as returned by the readers): data.size() == rows * cols, and
// 1 <= cols <= kMaxDatasetDim unless the file held no vectors (then cols may
// be 0 for the headerless texmex formats).
struct Matrix {
  uint64_t rows = 0;
  uint32_t cols = 0;
  std::vector<float> data;

  std::span<const float> row(uint64_t i) const { return {data.data() + i * cols, cols}; }
  friend bool operator==(const Matrix&, const Matrix&) = default;
};

// Neighbour ids (ground truth): row i holds the ids of query i's nearest
// neighbours, nearest first. Same layout and invariant as Matrix.
struct IntMatrix {
  uint64_t rows = 0;
  uint32_t cols = 0;
  std::vector<int32_t> data;

  std::span<const int32_t> row(uint64_t i) const { return {data.data() + i * cols, cols}; }
  friend bool operator==(const IntMatrix&, const IntMatrix&) = default;
};

// Reads the first min(max_rows, all) vectors of the file at `path`, in the
// format its extension names (DetectFormat): .fvecs, .bvecs, .fbin, .u8bin
// or .npy with dtype '<f4', '<f8' or '|u1'. Bytes and doubles are converted
// to float (doubles beyond float's range become +-infinity). The whole file's
// shape is checked even when max_rows cuts the read short; texmex records
// past max_rows are checked only by the file's length (dataset_format.h).
// The file is mapped, not read into memory; the result is a copy.
[[nodiscard]] absl::StatusOr<Matrix> ReadVectors(FileSystem* fs, const std::string& path,
                                                 uint64_t max_rows = UINT64_MAX);

// Like ReadVectors, for ground truth: .ivecs, .ibin, or .npy with dtype
// '<i4' or '<i8' ('<i8' values must fit int32).
[[nodiscard]] absl::StatusOr<IntMatrix> ReadNeighbors(FileSystem* fs, const std::string& path,
                                                      uint64_t max_rows = UINT64_MAX);

// What ReadVectors / ReadNeighbors do after mapping the file: parse `bytes`,
// the content of a file in `format`. `name` starts every error message.
// Entry points for tests and fuzzing.
[[nodiscard]] absl::StatusOr<Matrix> ParseVectors(std::string_view bytes,
                                                  DatasetFormat format,
                                                  const std::string& name,
                                                  uint64_t max_rows = UINT64_MAX);
[[nodiscard]] absl::StatusOr<IntMatrix> ParseNeighbors(std::string_view bytes,
                                                       DatasetFormat format,
                                                       const std::string& name,
                                                       uint64_t max_rows = UINT64_MAX);

}  // namespace shoal

#endif  // SHOAL_SRC_DATASET_DATASET_READER_H_

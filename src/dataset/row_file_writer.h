// Copyright 2026 The shoal Authors.
//
// Streams rows of a fixed width into a vector file whose header holds the
// row count (.npy, .fbin, and the ids files of `shoal export`,
// docs/format.md "Export files"), when the count is known only at the end:
// the rows go to `path` + kTempSuffix behind a placeholder header, which
// Finish overwrites with the real one (pwrite) before it syncs the file,
// renames it over `path` and syncs the directory. So `path` never holds a
// prefix: after a crash it holds its old content or the whole new file.
// (dataset_writer.h builds a file in memory first; an export may not fit.)
// Destroyed without a successful Finish, the temporary is removed.
//
// Written with POSIX calls, not through the FileSystem seam: the seam's
// WritableFile only appends, and the header is written last. Not
// thread-safe.

#ifndef SHOAL_SRC_DATASET_ROW_FILE_WRITER_H_
#define SHOAL_SRC_DATASET_ROW_FILE_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shoal {

class RowFileWriter {
 public:
  enum class Header {
    kNpy,  // NumPy format 1.0: descr `npy_descr`, shape (rows, cols), C order
    kBin,  // uint32 rows, uint32 cols, little-endian (the .fbin / .ibin layout)
  };
  // Creates the temporary. InvalidArgument for cols 0 or value_bytes 0; an
  // I/O error naming the file.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RowFileWriter>> Create(
      const std::string& path, Header header, std::string_view npy_descr, uint32_t cols,
      size_t value_bytes);
  ~RowFileWriter();
  RowFileWriter(const RowFileWriter&) = delete;
  RowFileWriter& operator=(const RowFileWriter&) = delete;

  // Appends `n` rows of cols values (value_bytes each, as they are in
  // memory: little-endian on the machines shoal supports).
  [[nodiscard]] absl::Status Append(const void* rows, size_t n);
  // Writes the header, syncs, renames into place, syncs the directory.
  // InvalidArgument (nothing renamed) when a kBin file holds more than
  // 2^32 - 1 rows.
  [[nodiscard]] absl::Status Finish();

  uint64_t rows() const { return rows_; }

 private:
  RowFileWriter(std::string path, Header header, std::string descr, uint32_t cols,
                size_t value_bytes, int fd)
      : path_(std::move(path)), header_(header), descr_(std::move(descr)), cols_(cols),
        row_bytes_(size_t{cols} * value_bytes), fd_(fd) {}
  std::string EncodeHeader(uint64_t rows) const;
  absl::Status WriteBuffer();
  std::string TempPath() const;

  const std::string path_;
  const Header header_;
  const std::string descr_;
  const uint32_t cols_;
  const size_t row_bytes_;
  int fd_;
  size_t header_bytes_ = 0;
  uint64_t rows_ = 0;
  std::string buffer_;  // rows not yet written
  bool finished_ = false;
};

}  // namespace shoal

#endif  // SHOAL_SRC_DATASET_ROW_FILE_WRITER_H_

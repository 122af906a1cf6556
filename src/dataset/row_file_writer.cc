// Copyright 2026 The shoal Authors.

#include "dataset/row_file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "dataset/npy_format.h"
#include "util/coding.h"
#include "util/file_system.h"

namespace shoal {
namespace {

// Rows are written in pieces of about this many bytes.
constexpr size_t kWriteBytes = size_t{4} << 20;

absl::Status WriteAll(int fd, const char* data, size_t n, uint64_t offset, bool at_offset,
                      const std::string& path) {
  while (n > 0) {
    const ssize_t w = at_offset ? pwrite(fd, data, n, static_cast<off_t>(offset))
                                : write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, at_offset ? "pwrite" : "write", path);
    }
    data += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return absl::OkStatus();
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RowFileWriter>> RowFileWriter::Create(
    const std::string& path, Header header, std::string_view npy_descr, uint32_t cols,
    size_t value_bytes) {
  if (cols == 0 || value_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": rows of no bytes"));
  }
  const std::string temp = path + std::string(kTempSuffix);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "open", temp);
  std::unique_ptr<RowFileWriter> w(
      new RowFileWriter(path, header, std::string(npy_descr), cols, value_bytes, fd));
  // A placeholder of the header's length; Finish writes the real one.
  w->buffer_ = w->EncodeHeader(0);
  w->header_bytes_ = w->buffer_.size();
  return w;
}

RowFileWriter::~RowFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!finished_) unlink(TempPath().c_str());
}

std::string RowFileWriter::TempPath() const { return path_ + std::string(kTempSuffix); }

std::string RowFileWriter::EncodeHeader(uint64_t rows) const {
  if (header_ == Header::kNpy) return dataset_internal::EncodeNpyHeader(descr_, rows, cols_);
  std::string out(8, '\0');
  EncodeFixed32(out.data(), static_cast<uint32_t>(rows));
  EncodeFixed32(out.data() + 4, cols_);
  return out;
}

absl::Status RowFileWriter::WriteBuffer() {
  absl::Status s = WriteAll(fd_, buffer_.data(), buffer_.size(), 0, false, TempPath());
  buffer_.clear();
  return s;
}

absl::Status RowFileWriter::Append(const void* rows, size_t n) {
  buffer_.append(static_cast<const char*>(rows), n * row_bytes_);
  rows_ += n;
  if (buffer_.size() >= kWriteBytes) return WriteBuffer();
  return absl::OkStatus();
}

absl::Status RowFileWriter::Finish() {
  if (header_ == Header::kBin && rows_ > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": ", rows_, " rows do not fit the uint32 row count of its format (use .npy)"));
  }
  if (absl::Status s = WriteBuffer(); !s.ok()) return s;
  // The NumPy header pads to 64 bytes: 0 rows and any count below 10^13
  // encode to the same length.
  const std::string header = EncodeHeader(rows_);
  if (header.size() != header_bytes_) {
    return absl::InternalError(absl::StrCat(path_, ": the header of ", rows_,
                                            " rows does not fit its placeholder"));
  }
  const std::string temp = TempPath();
  if (absl::Status s = WriteAll(fd_, header.data(), header.size(), 0, true, temp); !s.ok()) {
    return s;
  }
  if (fdatasync(fd_) != 0) return ErrnoStatus(errno, "fdatasync", temp);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) return ErrnoStatus(errno, "close", temp);
  if (rename(temp.c_str(), path_.c_str()) != 0) return ErrnoStatus(errno, "rename", temp);
  finished_ = true;
  return FileSystem::Default()->SyncDir(DirOf(path_));
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// A FileSystem that holds one read-only file in memory, for fuzz targets
// whose reader opens a path (Segment::Open): OpenReadOnlyMapped, ReadFile,
// Exists and FileSize serve it; every other call is UnimplementedError, and
// any other path is NotFound. The bytes are the caller's: they must outlive
// the file system and every file it opened. Unlike a real mapping, nothing
// follows the last byte, so AddressSanitizer reports a read one byte past
// the end. Thread-safe (it never changes).

#ifndef SHOAL_TESTS_FUZZ_ONE_FILE_SYSTEM_H_
#define SHOAL_TESTS_FUZZ_ONE_FILE_SYSTEM_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/file_system.h"

namespace shoal::fuzz {

class OneFileSystem final : public FileSystem {
 public:
  OneFileSystem(std::string path, std::string_view bytes)
      : path_(std::move(path)), bytes_(bytes) {}

  absl::StatusOr<std::unique_ptr<ReadOnlyMappedFile>> OpenReadOnlyMapped(
      const std::string& path) override {
    if (path != path_) return absl::NotFoundError(path);
    return std::make_unique<View>(bytes_);
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path,
                                                                     bool) override {
    if (path != path_) return absl::NotFoundError(path);
    return std::make_unique<Reader>(bytes_);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    if (path != path_) return absl::NotFoundError(path);
    return std::string(bytes_);
  }
  bool Exists(const std::string& path) override { return path == path_; }
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    if (path != path_) return absl::NotFoundError(path);
    return bytes_.size();
  }

  absl::StatusOr<std::unique_ptr<MappedFile>> OpenMapped(const std::string&, size_t,
                                                         bool) override {
    return Unimplemented();
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string&) override {
    return Unimplemented();
  }
  absl::Status Rename(const std::string&, const std::string&) override { return Unimplemented(); }
  absl::Status RemoveFile(const std::string&) override { return Unimplemented(); }
  absl::Status RemoveDirRecursive(const std::string&) override { return Unimplemented(); }
  absl::Status CreateDir(const std::string&) override { return Unimplemented(); }
  absl::Status SyncDir(const std::string&) override { return Unimplemented(); }
  absl::Status Truncate(const std::string&, uint64_t) override { return Unimplemented(); }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string&) override {
    return Unimplemented();
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string&) override {
    return Unimplemented();
  }

 private:
  class View final : public ReadOnlyMappedFile {
   public:
    explicit View(std::string_view bytes) : bytes_(bytes) {}
    const char* data() const override { return bytes_.data(); }
    size_t size() const override { return bytes_.size(); }

   private:
    std::string_view bytes_;
  };

  // pread of the bytes: OutOfRange past their end, as the contract says.
  class Reader final : public RandomAccessFile {
   public:
    explicit Reader(std::string_view bytes) : bytes_(bytes) {}
    absl::Status Read(uint64_t offset, size_t n, char* scratch) const override {
      if (offset > bytes_.size() || n > bytes_.size() - offset) {
        return absl::OutOfRangeError("read past the end of the file");
      }
      std::memcpy(scratch, bytes_.data() + offset, n);
      return absl::OkStatus();
    }
    uint64_t size() const override { return bytes_.size(); }
    bool direct() const override { return false; }

   private:
    std::string_view bytes_;
  };

  static absl::Status Unimplemented() {
    return absl::UnimplementedError("OneFileSystem serves one read-only file");
  }

  const std::string path_;
  const std::string_view bytes_;
};

}  // namespace shoal::fuzz

#endif  // SHOAL_TESTS_FUZZ_ONE_FILE_SYSTEM_H_

// Copyright 2026 The shoal Authors.

#include "util/direct_log_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "util/mutex.h"

namespace shoal {
namespace {

constexpr size_t kBlock = 4096;
// The file is zero-filled this much at a time ahead of the writer.
constexpr size_t kZeroStep = size_t{1} << 20;
// Memory of synced bytes is returned this much at a time.
constexpr size_t kReleaseStep = size_t{8} << 20;

size_t RoundDown(size_t n) { return n & ~(kBlock - 1); }
size_t RoundUp(size_t n) { return (n + kBlock - 1) & ~(kBlock - 1); }

// pwrite of all `length` bytes; returns 0 or the errno.
int WriteAll(int fd, const char* data, size_t length, size_t offset) {
  while (length > 0) {
    const ssize_t n = pwrite(fd, data, length, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    // A short direct write ends on a block boundary; continue from there.
    data += n;
    offset += static_cast<size_t>(n);
    length -= static_cast<size_t>(n);
  }
  return 0;
}

class DirectLogFile final : public MappedFile {
 public:
  DirectLogFile(std::string path, int fd, char* base, size_t capacity, size_t resume)
      : path_(std::move(path)), fd_(fd), base_(base), capacity_(capacity),
        synced_(resume), zeroed_(RoundDown(resume)), released_(0) {}
  ~DirectLogFile() override {
    if (base_ != nullptr) munmap(base_, capacity_);
    if (staging_ != nullptr) munmap(staging_, staging_bytes_);
    if (fd_ >= 0) close(fd_);
  }

  char* data() override { return base_; }
  size_t capacity() const override { return capacity_; }

  // Only what SyncPrefix wrote is in the file: make its metadata durable.
  absl::Status Sync() override {
    if (fd_ < 0) return ClosedFileError(path_);
    if (fdatasync(fd_) != 0) return ErrnoStatus(errno, "fdatasync", path_);
    return absl::OkStatus();
  }

  absl::Status SyncPrefix(size_t end) override {
    if (base_ == nullptr) return ClosedFileError(path_);
    if (end > capacity_) {
      return absl::OutOfRangeError(
          absl::StrCat("sync past the end of ", path_, ": ", end, " > ", capacity_));
    }
    if (end <= synced_) return Sync();
    // The blocks holding [synced_, end), through a copy: another thread may
    // be storing the next record after `end` in the last block. The copy
    // has zeros there (a later sync writes that block again).
    const size_t from = RoundDown(synced_), to = RoundUp(end);
    if (to > zeroed_.load(std::memory_order_acquire)) {
      return absl::FailedPreconditionError(
          absl::StrCat("sync of unreserved bytes of ", path_, ": ", end));
    }
    if (to - from > staging_bytes_) {
      if (staging_ != nullptr) munmap(staging_, staging_bytes_);
      staging_bytes_ = std::max(to - from, size_t{64} << 10);
      void* m = mmap(nullptr, staging_bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) {
        staging_ = nullptr;
        staging_bytes_ = 0;
        return ErrnoStatus(errno, "mmap", path_);
      }
      staging_ = static_cast<char*>(m);
    }
    std::memcpy(staging_, base_ + from, end - from);
    std::memset(staging_ + (end - from), 0, to - end);
    if (const int err = WriteAll(fd_, staging_, to - from, from); err != 0) {
      return ErrnoStatus(err, "pwrite(O_DIRECT|O_DSYNC)", path_);
    }
    synced_ = end;
    // Return the memory of synced blocks (the block holding synced_ is
    // written again by the next sync, so it stays).
    const size_t release_to = RoundDown(synced_) & ~(kReleaseStep - 1);
    if (release_to >= released_ + kReleaseStep) {
      (void)madvise(base_ + released_, release_to - released_, MADV_DONTNEED);
      released_ = release_to;
    }
    return absl::OkStatus();
  }

  absl::Status Reserve(size_t end) override {
    if (end <= zeroed_.load(std::memory_order_acquire)) return absl::OkStatus();
    MutexLock lock(&zero_mu_);
    if (closed_) return ClosedFileError(path_);
    return ZeroFillLocked(end, /*exact_on_full=*/true);
  }

  void Populate(size_t offset, size_t length) override {
    MutexLock lock(&zero_mu_);
    if (closed_ || offset >= capacity_) return;
    const size_t end = std::min(capacity_, offset + length);
#ifdef MADV_POPULATE_WRITE
    // Up to where the zero-fill below reads data() (whole kZeroSteps): a
    // page it reads unpopulated maps the shared zero page, and the first
    // store to it then copies it and shoots down the other CPUs' TLBs.
    const size_t begin = RoundDown(offset);
    const size_t fill_end = std::min(capacity_, (end + kZeroStep - 1) & ~(kZeroStep - 1));
    (void)madvise(base_ + begin, fill_end - begin, MADV_POPULATE_WRITE);
#endif
    // A failure here is the writer's to report, from its own Reserve.
    (void)ZeroFillLocked(end, /*exact_on_full=*/false);
  }

  absl::Status CloseAndTruncate(size_t length) override {
    MutexLock lock(&zero_mu_);
    if (closed_) return ClosedFileError(path_);
    absl::Status status;
    if (length > synced_) {
      // Bytes stored but never synced reach the file now, as they would
      // have through a mapping.
      status = ZeroFillLocked(length, /*exact_on_full=*/true);
      if (status.ok()) status = SyncPrefix(length);
    }
    closed_ = true;
    if (status.ok() && ftruncate(fd_, static_cast<off_t>(length)) != 0) {
      status = ErrnoStatus(errno, "ftruncate", path_);
    }
    if (close(fd_) != 0 && status.ok()) status = ErrnoStatus(errno, "close", path_);
    fd_ = -1;
    munmap(base_, capacity_);
    base_ = nullptr;
    return status;
  }

 private:
  // Writes the file up to `end` (rounded up to a block, then to a whole
  // kZeroStep), from data(): zeros, except the block holding the resume
  // point, which keeps the records before it. Stores only land below
  // zeroed_, so none races with this write. With `exact_on_full`, a step
  // that does not fit on the file system is retried for just `end`.
  absl::Status ZeroFillLocked(size_t end, bool exact_on_full)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(zero_mu_) {
    if (closed_) return ClosedFileError(path_);
    if (end > capacity_) {
      return absl::OutOfRangeError(
          absl::StrCat("reserve past the end of ", path_, ": ", end, " > ", capacity_));
    }
    size_t from = zeroed_.load(std::memory_order_relaxed);
    while (from < end) {
      const size_t step_end = std::min(capacity_, (from + kZeroStep) & ~(kZeroStep - 1));
      int err = WriteAll(fd_, base_ + from, step_end - from, from);
      size_t to = step_end;
      if (err == ENOSPC && exact_on_full && RoundUp(end) < step_end) {
        to = RoundUp(end);
        err = WriteAll(fd_, base_ + from, to - from, from);
      }
      if (err != 0) return ErrnoStatus(err, "pwrite(O_DIRECT|O_DSYNC)", path_);
      zeroed_.store(to, std::memory_order_release);
      from = to;
    }
    return absl::OkStatus();
  }

  const std::string path_;
  int fd_;
  char* base_;  // anonymous memory: the log's bytes
  const size_t capacity_;
  size_t synced_;    // bytes [0, synced_) are durable (SyncPrefix's callers serialize)
  Mutex zero_mu_;    // one zero-fill at a time; keeps Populate off a closed file
  bool closed_ ABSL_GUARDED_BY(zero_mu_) = false;
  std::atomic<size_t> zeroed_;  // bytes [0, zeroed_) of the file are written
  size_t released_;  // memory below this was returned (SyncPrefix)
  char* staging_ = nullptr;  // SyncPrefix's aligned copy of the blocks it writes
  size_t staging_bytes_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MappedFile>> OpenDirectLogFile(const std::string& path,
                                                              size_t capacity,
                                                              size_t resume_offset) {
  capacity = RoundUp(std::max(capacity, resume_offset));
  // Asked of the directory, so that a file system without direct I/O gets
  // no file from this call.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  struct statfs fs_info;
  if (statfs(dir.c_str(), &fs_info) == 0 && fs_info.f_type == TMPFS_MAGIC) {
    return absl::UnimplementedError(absl::StrCat(path, ": tmpfs (a mapped log is faster)"));
  }
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
#ifdef STATX_DIOALIGN
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0 ||
      (stx.stx_mask & STATX_DIOALIGN) == 0 || stx.stx_dio_offset_align == 0 ||
      stx.stx_dio_offset_align > kBlock || stx.stx_dio_mem_align > kBlock) {
    close(fd);
    return absl::UnimplementedError(
        absl::StrCat(path, ": no direct I/O in 4 KiB blocks on this file system"));
  }
#endif
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) {
    close(fd);
    return absl::UnimplementedError(absl::StrCat(path, ": no O_DIRECT on this file system"));
  }
  // O_DSYNC cannot be set by F_SETFL: reopen with every flag.
  const int direct_fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT | O_DSYNC);
  const int open_errno = errno;
  close(fd);
  if (direct_fd < 0) {
    if (open_errno == EINVAL) {
      return absl::UnimplementedError(absl::StrCat(path, ": no O_DIRECT on this file system"));
    }
    return ErrnoStatus(open_errno, "open(O_DIRECT)", path);
  }
  void* base = mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    close(direct_fd);
    return ErrnoStatus(err, "mmap", path);
  }
  char* data = static_cast<char*>(base);
  if (resume_offset % kBlock != 0) {
    // The records of the last partial block: SyncPrefix and the zero-fill
    // write whole blocks from memory.
    const size_t block = RoundDown(resume_offset);
    ssize_t n;
    do {
      n = pread(direct_fd, data + block, kBlock, static_cast<off_t>(block));
    } while (n < 0 && errno == EINTR);
    if (n < 0 || static_cast<size_t>(n) < resume_offset - block) {
      const int err = n < 0 ? errno : EIO;
      munmap(base, capacity);
      close(direct_fd);
      return ErrnoStatus(err, "pread(O_DIRECT)", path);
    }
    std::memset(data + resume_offset, 0, block + kBlock - resume_offset);
  }
  if (resume_offset > 0 && fdatasync(direct_fd) != 0) {
    // The bytes before the resume point may be in the page cache only:
    // written through a mapping (the mapped log, kNever or kInterval) by a
    // process that died. SyncPrefix writes only the blocks from the resume
    // point on, so without this sync a power loss could keep later,
    // acknowledged records and lose these before them.
    const int err = errno;
    munmap(base, capacity);
    close(direct_fd);
    return ErrnoStatus(err, "fdatasync", path);
  }
  return std::unique_ptr<MappedFile>(
      new DirectLogFile(path, direct_fd, data, capacity, resume_offset));
}

}  // namespace shoal

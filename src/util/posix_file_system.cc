// Copyright 2026 The shoal Authors.
// The POSIX FileSystem.

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "util/direct_log_file.h"
#include "util/file_system.h"
#include "util/mutex.h"
#include "util/status_macros.h"
#include "util/string_view.h"
#include "util/uring_read_queue.h"

namespace shoal {

absl::Status ErrnoStatus(int err, std::string_view call, std::string_view path) {
  std::string msg = absl::StrCat(AsAbsl(call), "(", AsAbsl(path), "): ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EEXIST:
      return absl::AlreadyExistsError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
      return absl::ResourceExhaustedError(msg);
    case EWOULDBLOCK:
      return absl::FailedPreconditionError(msg);
    default:
      return absl::InternalError(msg);
  }
}

std::shared_ptr<const char> MapReadOnlyShared(int fd, size_t bytes) {
  void* view = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (view == MAP_FAILED) return nullptr;
  return std::shared_ptr<const char>(static_cast<const char*>(view), [bytes](const char* p) {
    munmap(const_cast<char*>(p), bytes);
  });
}

absl::Status ClosedFileError(std::string_view path) {
  return absl::FailedPreconditionError(absl::StrCat(AsAbsl(path), " is closed"));
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(AsAbsl(dir), AsAbsl(name));
  return absl::StrCat(AsAbsl(dir), "/", AsAbsl(name));
}

namespace {

// open(path, flags) (creating with mode 0644 under O_CREAT) and fstat; on
// failure nothing stays open.
absl::Status OpenAndStat(const std::string& path, int flags, int* fd, struct stat* st) {
  *fd = open(path.c_str(), flags, 0644);
  if (*fd < 0) return ErrnoStatus(errno, "open", path);
  if (fstat(*fd, st) != 0) {
    absl::Status s = ErrnoStatus(errno, "fstat", path);
    close(*fd);
    return s;
  }
  return absl::OkStatus();
}

class PosixMappedFile final : public MappedFile {
 public:
  PosixMappedFile(std::string path, int fd, char* base, size_t capacity, bool in_memory)
      : path_(std::move(path)), fd_(fd), base_(base), capacity_(capacity),
        in_memory_(in_memory) {}
  ~PosixMappedFile() override {
    if (base_ != nullptr) munmap(base_, capacity_);
    if (fd_ >= 0) close(fd_);
  }
  char* data() override { return base_; }
  size_t capacity() const override { return capacity_; }
  absl::Status Sync() override {
    if (fd_ < 0) return ClosedFileError(path_);
    // fdatasync writes back pages dirtied through the shared mapping too.
    if (fdatasync(fd_) != 0) return ErrnoStatus(errno, "fdatasync", path_);
    return absl::OkStatus();
  }
  absl::Status Reserve(size_t end) override {
    if (end <= reserved_.load(std::memory_order_acquire)) return absl::OkStatus();
    MutexLock lock(&map_mu_);
    return ReserveLocked(end);
  }
  void Populate(size_t offset, size_t length) override { PopulateRange(offset, length, false); }
  void PopulateDirty(size_t offset, size_t length) override {
    PopulateRange(offset, length, true);
  }
  // Populate, dirtying the pages also on a disk when `dirty`.
  void PopulateRange(size_t offset, size_t length, bool dirty) {
    // Holds map_mu_ throughout, so that the mapping stays; a writer whose
    // Reserve finds the prefaulter behind waits for it here (at most one
    // 2 MiB step).
    MutexLock lock(&map_mu_);
    if (base_ == nullptr || offset >= capacity_) return;
    const size_t end = std::min(capacity_, offset + length);
    // A failure here is the writer's to report, from its own Reserve.
    if (!ReserveLocked(end).ok()) return;
#ifdef MADV_POPULATE_WRITE
    const size_t page = 4096;
    const size_t begin = offset & ~(page - 1);
    // Only on tmpfs, where allocating the page is the whole cost of a first
    // store and syncs are free, unless asked (PopulateDirty). On a disk file,
    // pre-dirtied pages would have to be written back by every fdatasync.
    if (in_memory_ || dirty) (void)madvise(base_ + begin, end - begin, MADV_POPULATE_WRITE);
#endif
  }
  absl::Status Write(size_t offset, std::span<const std::string_view> pieces) override {
    if (fd_ < 0) return ClosedFileError(path_);
    // pwritev, IOV_MAX pieces at a time, resumed after a short write.
    constexpr size_t kMaxIov = IOV_MAX;
    iovec iov[kMaxIov];
    size_t next = 0;   // first piece not wholly written
    size_t skip = 0;   // bytes of pieces[next] already written (a short write)
    while (next < pieces.size()) {
      size_t n = 0;
      for (size_t i = next; i < pieces.size() && n < kMaxIov; ++i) {
        const size_t from = i == next ? skip : 0;
        if (pieces[i].size() == from) continue;
        iov[n].iov_base = const_cast<char*>(pieces[i].data() + from);
        iov[n].iov_len = pieces[i].size() - from;
        ++n;
      }
      if (n == 0) break;
      const ssize_t w = pwritev(fd_, iov, static_cast<int>(n), static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "pwritev", path_);
      }
      if (w == 0) return absl::InternalError(absl::StrCat("pwritev(", path_, ") wrote nothing"));
      offset += static_cast<size_t>(w);
      // Advance past what was written: whole pieces, then part of one.
      size_t left = static_cast<size_t>(w);
      while (next < pieces.size() && left >= pieces[next].size() - skip) {
        left -= pieces[next].size() - skip;
        skip = 0;
        ++next;
      }
      skip += left;
    }
    return absl::OkStatus();
  }
  std::shared_ptr<const char> KeepReadable() override {
    // Only on tmpfs: there the pages stay until the file and every mapping
    // of it are gone. A disk file's clean pages may be dropped and read back.
    if (!in_memory_ || fd_ < 0) return nullptr;
    return MapReadOnlyShared(fd_, capacity_);
  }
  absl::Status CloseAndTruncate(size_t length) override {
    MutexLock lock(&map_mu_);
    if (base_ == nullptr) return ClosedFileError(path_);
    absl::Status status;
    if (munmap(base_, capacity_) != 0) status = ErrnoStatus(errno, "munmap", path_);
    base_ = nullptr;
    if (status.ok() && ftruncate(fd_, static_cast<off_t>(length)) != 0) {
      status = ErrnoStatus(errno, "ftruncate", path_);
    }
    if (close(fd_) != 0 && status.ok()) status = ErrnoStatus(errno, "close", path_);
    fd_ = -1;
    return status;
  }

 private:
  // Storage is reserved this much at a time: a writer storing record after
  // record makes one fallocate per step.
  static constexpr size_t kReserveStep = size_t{1} << 20;

  absl::Status ReserveLocked(size_t end) ABSL_EXCLUSIVE_LOCKS_REQUIRED(map_mu_) {
    const size_t from = reserved_.load(std::memory_order_relaxed);
    if (end <= from) return absl::OkStatus();
    if (base_ == nullptr) return ClosedFileError(path_);
    if (end > capacity_) {
      return absl::OutOfRangeError(
          absl::StrCat("reserve past the end of ", path_, ": ", end, " > ", capacity_));
    }
    // A whole step, or when that does not fit on the file system, just what
    // is needed.
    const size_t step_end = std::min(capacity_, (end + kReserveStep - 1) & ~(kReserveStep - 1));
    int err = Fallocate(from, step_end);
    size_t to = step_end;
    if (err == ENOSPC && step_end > end) {
      err = Fallocate(from, end);
      to = end;
    }
    if (err == EOPNOTSUPP || err == ENOSYS) {
      // A file system without fallocate: stores take their chances, as
      // with any mapped file there.
      reserved_.store(capacity_, std::memory_order_release);
      return absl::OkStatus();
    }
    if (err != 0) return ErrnoStatus(err, "fallocate", path_);
    reserved_.store(to, std::memory_order_release);
    return absl::OkStatus();
  }

  // fallocate of [from, to); returns 0 or the errno.
  int Fallocate(size_t from, size_t to) {
    while (fallocate(fd_, 0, static_cast<off_t>(from), static_cast<off_t>(to - from)) != 0) {
      if (errno != EINTR) return errno;
    }
    return 0;
  }

  std::string path_;
  int fd_;
  Mutex map_mu_;  // keeps Populate off a mapping being unmapped
  std::atomic<size_t> reserved_{0};  // storage of [0, reserved_) is allocated
  char* base_;
  size_t capacity_;
  const bool in_memory_;  // tmpfs: no disk behind the pages
};

class PosixReadOnlyMappedFile final : public ReadOnlyMappedFile {
 public:
  PosixReadOnlyMappedFile(const char* base, size_t size) : base_(base), size_(size) {}
  ~PosixReadOnlyMappedFile() override {
    if (size_ > 0) munmap(const_cast<char*>(base_), size_);
  }
  const char* data() const override { return base_; }
  size_t size() const override { return size_; }

 private:
  const char* base_;
  size_t size_;
};

// Two descriptors: `buffered_` for any read, `direct_` (O_DIRECT, or -1
// where the file system refuses it) for reads aligned to kDirectAlignment.
class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  static constexpr uint64_t kDirectAlignment = 4096;

  PosixRandomAccessFile(std::string path, int buffered, int direct, uint64_t size)
      : path_(std::move(path)), buffered_(buffered), direct_(direct), size_(size) {}
  ~PosixRandomAccessFile() override {
    close(buffered_);
    if (direct_ >= 0) close(direct_);
  }
  absl::Status Read(uint64_t offset, size_t n, char* scratch) const override {
    const bool aligned = ((offset | n | reinterpret_cast<uintptr_t>(scratch)) &
                          (kDirectAlignment - 1)) == 0;
    int fd = direct_ >= 0 && aligned ? direct_ : buffered_;
    size_t done = 0;
    while (done < n) {
      const ssize_t r = pread(fd, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        // A file system may take O_DIRECT at open and refuse the read.
        if (errno == EINVAL && fd == direct_) {
          fd = buffered_;
          continue;
        }
        return ErrnoStatus(errno, "pread", path_);
      }
      if (r == 0) {
        return absl::OutOfRangeError(absl::StrCat("pread(", path_, "): file ends before offset ",
                                                  offset + n));
      }
      done += static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }
  uint64_t size() const override { return size_; }
  bool direct() const override { return direct_ >= 0; }
  std::unique_ptr<ReadQueue> NewReadQueue(size_t depth) const override {
    // io_uring where available (the same bytes and errors as Read).
    if (std::unique_ptr<ReadQueue> q = NewUringReadQueue(this, buffered_, direct_, depth)) {
      return q;
    }
    return RandomAccessFile::NewReadQueue(depth);
  }

 private:
  const std::string path_;
  const int buffered_;
  const int direct_;
  const uint64_t size_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) close(fd_);
  }
  absl::Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "write", path_);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }
  absl::Status Sync() override {
    if (fdatasync(fd_) != 0) return ErrnoStatus(errno, "fdatasync", path_);
    return absl::OkStatus();
  }
  absl::Status Close() override {
    int r = close(fd_);
    fd_ = -1;
    if (r != 0) return ErrnoStatus(errno, "close", path_);
    return absl::OkStatus();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override {
    flock(fd_, LOCK_UN);
    close(fd_);
  }

 private:
  int fd_;
};

class PosixFileSystem final : public FileSystem {
 public:
  absl::StatusOr<std::unique_ptr<MappedFile>> OpenDirect(const std::string& path,
                                                         size_t capacity,
                                                         size_t resume_offset) override {
    return OpenDirectLogFile(path, capacity, resume_offset);
  }
  absl::StatusOr<std::unique_ptr<MappedFile>> OpenMapped(
      const std::string& path, size_t capacity, bool populate) override {
    int fd;
    struct stat st;
    SHOAL_RETURN_IF_ERROR(OpenAndStat(path, O_RDWR | O_CREAT | O_CLOEXEC, &fd, &st));
    if (static_cast<size_t>(st.st_size) < capacity &&
        ftruncate(fd, static_cast<off_t>(capacity)) != 0) {
      absl::Status s = ErrnoStatus(errno, "ftruncate", path);
      close(fd);
      return s;
    }
    void* base = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      absl::Status s = ErrnoStatus(errno, "mmap", path);
      close(fd);
      return s;
    }
    if (populate) {
#ifdef MADV_POPULATE_WRITE
      // Best effort: an older kernel without it just takes the faults later.
      (void)madvise(base, capacity, MADV_POPULATE_WRITE);
#endif
    }
    struct statfs fs_info;
    const bool in_memory = fstatfs(fd, &fs_info) == 0 && fs_info.f_type == TMPFS_MAGIC;
    return std::make_unique<PosixMappedFile>(path, fd, static_cast<char*>(base), capacity,
                                             in_memory);
  }

  absl::StatusOr<std::unique_ptr<ReadOnlyMappedFile>> OpenReadOnlyMapped(
      const std::string& path) override {
    int fd;
    struct stat st;
    SHOAL_RETURN_IF_ERROR(OpenAndStat(path, O_RDONLY | O_CLOEXEC, &fd, &st));
    const size_t size = static_cast<size_t>(st.st_size);
    void* base = nullptr;
    if (size > 0) {
      base = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      if (base == MAP_FAILED) {
        absl::Status s = ErrnoStatus(errno, "mmap", path);
        close(fd);
        return s;
      }
    }
    close(fd);  // the mapping keeps the file
    return std::make_unique<PosixReadOnlyMappedFile>(static_cast<const char*>(base), size);
  }

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path,
                                                                     bool direct) override {
    int fd;
    struct stat st;
    SHOAL_RETURN_IF_ERROR(OpenAndStat(path, O_RDONLY | O_CLOEXEC, &fd, &st));
    int direct_fd = -1;
    if (direct) {
      direct_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
      if (direct_fd < 0 && errno != EINVAL) {
        absl::Status s = ErrnoStatus(errno, "open(O_DIRECT)", path);
        close(fd);
        return s;
      }
      if (direct_fd < 0) {
        // Said once per process: every segment of the directory would say it.
        static std::atomic<bool> said{false};
        if (!said.exchange(true)) {
          std::fprintf(stderr,
                       "shoal: %s: the file system refuses O_DIRECT; reading node blocks "
                       "through the page cache (same results)\n",
                       path.c_str());
        }
      }
    }
    return std::make_unique<PosixRandomAccessFile>(path, fd, direct_fd,
                                                   static_cast<uint64_t>(st.st_size));
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    return std::make_unique<PosixWritableFile>(path, fd);
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    std::string out;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
    char buf[1 << 16];
    while (true) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        absl::Status s = ErrnoStatus(errno, "read", path);
        close(fd);
        return s;
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return out;
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus(errno, "rename", from);
    return absl::OkStatus();
  }
  absl::Status SyncFile(const std::string& path) override {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    absl::Status s;
    if (fdatasync(fd) != 0) s = ErrnoStatus(errno, "fdatasync", path);
    close(fd);
    return s;
  }
  absl::Status RemoveFile(const std::string& path) override {
    if (unlink(path.c_str()) != 0) return ErrnoStatus(errno, "unlink", path);
    return absl::OkStatus();
  }
  absl::Status LinkFile(const std::string& from, const std::string& to) override {
    if (link(from.c_str(), to.c_str()) != 0) return ErrnoStatus(errno, "link", from);
    return absl::OkStatus();
  }
  absl::Status CopyFile(const std::string& from, const std::string& to, uint64_t length,
                        const std::function<void(uint64_t)>& copied) override;
  absl::Status RemoveDirRecursive(const std::string& path) override {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (ec) return ErrnoStatus(ec.value(), "remove_all", path);
    return absl::OkStatus();
  }
  absl::Status CreateDir(const std::string& path) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return ErrnoStatus(ec.value(), "mkdir", path);
    return absl::OkStatus();
  }
  absl::Status SyncDir(const std::string& path) override {
    int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    int r = fsync(fd);
    int err = errno;
    close(fd);
    if (r != 0) return ErrnoStatus(err, "fsync", path);
    return absl::OkStatus();
  }
  absl::Status Truncate(const std::string& path, uint64_t length) override {
    if (truncate(path.c_str(), static_cast<off_t>(length)) != 0) {
      return ErrnoStatus(errno, "truncate", path);
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) override {
    DIR* d = opendir(path.c_str());
    if (d == nullptr) return ErrnoStatus(errno, "opendir", path);
    std::vector<std::string> names;
    while (struct dirent* e = readdir(d)) {
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      names.emplace_back(name);
    }
    closedir(d);
    return names;
  }
  bool Exists(const std::string& path) override {
    return access(path.c_str(), F_OK) == 0;
  }
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", path);
    return static_cast<uint64_t>(st.st_size);
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus(errno, "open", path);
    // flock locks belong to the open file description, so a second open() of
    // the same file in this process conflicts just like another process does.
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      close(fd);
      if (err == EWOULDBLOCK) {
        return absl::FailedPreconditionError(absl::StrCat(
            "database directory is in use by another DB object or process: lock ",
            path, " is held"));
      }
      return ErrnoStatus(err, "flock", path);
    }
    return std::make_unique<PosixFileLock>(fd);
  }
};

// Where the destination takes direct I/O, the aligned part of the copy is
// written from a mapping of the source: the device reads the source's pages
// itself (no copy through the CPU, nothing added to the destination's page
// cache). The rest (the unaligned tail; everything where O_DIRECT is
// refused, e.g. tmpfs before Linux 6.6) goes through sendfile, one copy in
// the kernel; where sendfile is refused too, through pread and write.
absl::Status PosixFileSystem::CopyFile(const std::string& from, const std::string& to,
                                       uint64_t length,
                                       const std::function<void(uint64_t)>& copied) {
  int in = -1;
  struct stat st;
  SHOAL_RETURN_IF_ERROR(OpenAndStat(from, O_RDONLY | O_CLOEXEC, &in, &st));
  absl::Cleanup close_in = [in] { close(in); };
  if (static_cast<uint64_t>(st.st_size) < length) {
    return absl::OutOfRangeError(absl::StrCat("copy of ", from, ": ", length,
                                              " bytes wanted, the file holds ", st.st_size));
  }
  constexpr int kCreate = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  int out = open(to.c_str(), kCreate | O_DIRECT, 0644);
  const bool direct = out >= 0;
  if (!direct && errno == EINVAL) out = open(to.c_str(), kCreate, 0644);
  if (out < 0) return ErrnoStatus(errno, "open", to);
  absl::Cleanup close_out = [&out] {
    if (out >= 0) close(out);
  };
  constexpr uint64_t kRun = uint64_t{8} << 20;
  uint64_t done = 0;
  const uint64_t aligned = direct ? length & ~uint64_t{4095} : 0;
  if (aligned > 0) {
    void* map = mmap(nullptr, aligned, PROT_READ, MAP_SHARED, in, 0);
    if (map == MAP_FAILED) return ErrnoStatus(errno, "mmap", from);
    absl::Cleanup unmap = [map, aligned] { munmap(map, aligned); };
    (void)madvise(map, aligned, MADV_SEQUENTIAL);
    const char* src = static_cast<const char*>(map);
    while (done < aligned) {
      const size_t n = static_cast<size_t>(std::min(kRun, aligned - done));
      const ssize_t w = pwrite(out, src + done, n, static_cast<off_t>(done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EINVAL && done == 0) break;  // refused after all: below
      if (w < 0) return ErrnoStatus(errno, "pwrite", to);
      // A short direct write leaves an unaligned end: the rest goes below.
      done += static_cast<uint64_t>(w);
      if (copied) copied(static_cast<uint64_t>(w));
      if (static_cast<size_t>(w) < n) break;
    }
  }
  if (direct) {
    const int flags = fcntl(out, F_GETFL);
    if (flags < 0 || fcntl(out, F_SETFL, flags & ~O_DIRECT) != 0) {
      return ErrnoStatus(errno, "fcntl", to);
    }
  }
  bool use_sendfile = true;
  std::vector<char> buffer;
  while (done < length) {
    const size_t n = static_cast<size_t>(std::min(kRun, length - done));
    ssize_t w;
    if (use_sendfile) {
      off_t offset = static_cast<off_t>(done);
      if (lseek(out, offset, SEEK_SET) < 0) return ErrnoStatus(errno, "lseek", to);
      w = sendfile(out, in, &offset, n);
      if (w < 0 && (errno == EINVAL || errno == ENOSYS) && buffer.empty()) {
        use_sendfile = false;
        continue;
      }
      if (w < 0 && errno != EINTR) return ErrnoStatus(errno, "sendfile", to);
    } else {
      if (buffer.empty()) buffer.resize(kRun);
      w = pread(in, buffer.data(), n, static_cast<off_t>(done));
      if (w < 0 && errno != EINTR) return ErrnoStatus(errno, "pread", from);
      if (w > 0) {
        for (ssize_t put = 0; put < w;) {
          const ssize_t p =
              pwrite(out, buffer.data() + put, static_cast<size_t>(w - put),
                     static_cast<off_t>(done) + put);
          if (p < 0 && errno == EINTR) continue;
          if (p < 0) return ErrnoStatus(errno, "pwrite", to);
          put += p;
        }
      }
    }
    if (w < 0) continue;  // EINTR
    if (w == 0) {
      return absl::DataLossError(absl::StrCat("copy of ", from, ": the file ended at offset ",
                                              done, ", ", length, " bytes wanted"));
    }
    done += static_cast<uint64_t>(w);
    if (copied) copied(static_cast<uint64_t>(w));
  }
  if (fdatasync(out) != 0) return ErrnoStatus(errno, "fdatasync", to);
  const int r = close(out);
  out = -1;
  if (r != 0) return ErrnoStatus(errno, "close", to);
  return absl::OkStatus();
}

}  // namespace

FileSystem* FileSystem::Default() {
  static FileSystem* fs = new PosixFileSystem();
  return fs;
}

absl::Status WriteFileAtomic(FileSystem* fs, const std::string& path,
                             std::string_view data, bool* renamed) {
  if (renamed != nullptr) *renamed = false;
  const std::string tmp = path + std::string(kTempSuffix);
  absl::Status s = [&]() -> absl::Status {
    SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->NewWritableFile(tmp));
    SHOAL_RETURN_IF_ERROR(file->Append(data));
    SHOAL_RETURN_IF_ERROR(file->Sync());
    SHOAL_RETURN_IF_ERROR(file->Close());
    return fs->Rename(tmp, path);
  }();
  if (!s.ok()) {
    // Best effort (the error above is what matters); Open removes what a
    // crash leaves.
    if (fs->Exists(tmp)) fs->RemoveFile(tmp).IgnoreError();
    return s;
  }
  if (renamed != nullptr) *renamed = true;
  std::string dir = std::filesystem::path(path).parent_path().string();
  return fs->SyncDir(dir.empty() ? "." : dir);
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.

#include "common/bench_util.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <vector>

#include "common/progress.h"
#include "fmt/core.h"

namespace shoal_bench {

void WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) Die("write " + tmp, absl::InternalError("write failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    Die("rename " + tmp, absl::ErrnoToStatus(errno, path));
  }
}
namespace {

// std::filesystem reports POSIX errors in the generic/system category, whose
// values are errno values; ErrnoToStatus appends the strerror text.
absl::Status FromErrorCode(const std::error_code& ec, std::string_view what) {
  return absl::ErrnoToStatus(ec.value(), std::string(what));
}

absl::Status FromErrno(std::string_view what, const std::string& path) {
  const int err = errno;
  return absl::ErrnoToStatus(err, fmt::format("{} {}", what, path));
}

// write() until all of `data` is written, retrying on EINTR and short writes.
absl::Status WriteAll(int fd, const std::byte* data, size_t size,
                      const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return FromErrno("write", path);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

void Die(std::string_view what, const absl::Status& status) {
  StatusLine(fmt::format("error: {}: {}", what, status.ToString()));
  std::fflush(stdout);
  std::exit(1);
}

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

absl::Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return FromErrorCode(ec, fmt::format("remove {}", path));
  return absl::OkStatus();
}

absl::Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return FromErrorCode(ec, fmt::format("mkdir {}", path));
  return absl::OkStatus();
}

absl::StatusOr<RawWriteResult> RawSequentialWrite(const std::string& path,
                                                  std::span<const std::byte> data,
                                                  size_t chunk_bytes, size_t total_bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FromErrno("open", path);
  if (total_bytes == 0 || data.empty()) total_bytes = data.size();
  RawWriteResult result;
  result.bytes = total_bytes;
  absl::Status status;
  const Stopwatch write_time;
  // `data` again and again until total_bytes are written.
  for (size_t written = 0; written < total_bytes && status.ok();) {
    const size_t off = written % std::max<size_t>(1, data.size());
    const size_t n = std::min({chunk_bytes, data.size() - off, total_bytes - written});
    status = WriteAll(fd, data.data() + off, n, path);
    written += n;
  }
  result.write_seconds = write_time.Seconds();
  const Stopwatch sync_time;
  if (status.ok() && ::fdatasync(fd) != 0) status = FromErrno("fdatasync", path);
  result.fdatasync_seconds = sync_time.Seconds();
  if (::close(fd) != 0 && status.ok()) status = FromErrno("close", path);
  if (::unlink(path.c_str()) != 0 && status.ok()) status = FromErrno("unlink", path);
  if (!status.ok()) return status;
  return result;
}

uint32_t ResolveThreads(uint32_t threads) {
  return threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

void ParallelChunks(size_t n, uint32_t threads, size_t chunk,
                    const std::function<void(size_t begin, size_t end)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t begin; (begin = next.fetch_add(chunk)) < n;) fn(begin, std::min(n, begin + chunk));
  };
  std::vector<std::thread> pool;
  for (uint32_t t = 1; t < ResolveThreads(threads); ++t) pool.emplace_back(work);
  work();  // the calling thread is one of them
  for (std::thread& th : pool) th.join();
}

}  // namespace shoal_bench

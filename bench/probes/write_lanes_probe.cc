// Copyright 2026 The shoal Authors.
//
// Whether two threads can write one file faster than one thread: the
// question that decides how one shard (one graph) could write a PutBatch on
// several cores. A shard's log is one file; its large records are written
// with pwrite (WalWriter::BeginRecordWrite). Linux serializes buffered writes
// to one file on its inode lock, so splitting a record between threads would
// gain nothing; several log files ("lanes") would.
//
// The probe writes --mb MiB of one byte value in 1 MiB pwrite calls, three
// ways, --rounds times in turn: one thread into one file; two threads into
// the two halves of one file; two threads into two files. Each way starts
// from new, empty files under --dir.
//
//   write_lanes_probe --dir=/dev/shm --mb=512 --rounds=3
//
// Figures: docs/performance-history.md, "Other dims; the next node's neighbours a hop
// early; the query's sums as kernels", the paragraph "Why one shard cannot
// simply write its batches on two threads".

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"

ABSL_FLAG(std::string, dir, "/dev/shm", "directory of the scratch files (removed after)");
ABSL_FLAG(size_t, mb, 512, "MiB written by each way");
ABSL_FLAG(int, rounds, 3, "rounds of the three ways");

namespace {

constexpr size_t kCallBytes = size_t{1} << 20;

[[noreturn]] void Fail(const char* what, const std::string& path) {
  std::fprintf(stderr, "write_lanes_probe: %s %s: %s\n", what, path.c_str(), std::strerror(errno));
  std::exit(1);
}

int OpenEmpty(const std::string& path) {
  const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) Fail("open", path);
  return fd;
}

// Writes [begin, end) of the file behind fd, at file offsets from `base`.
void WriteRange(int fd, const std::string& path, size_t begin, size_t end, size_t base) {
  const std::vector<char> bytes(kCallBytes, 7);
  for (size_t offset = begin; offset < end; offset += kCallBytes) {
    if (pwrite(fd, bytes.data(), kCallBytes, static_cast<off_t>(offset - base)) !=
        static_cast<ssize_t>(kCallBytes)) {
      Fail("pwrite", path);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string a = absl::GetFlag(FLAGS_dir) + "/write_lanes_probe.0";
  const std::string b = absl::GetFlag(FLAGS_dir) + "/write_lanes_probe.1";
  const size_t total = absl::GetFlag(FLAGS_mb) * kCallBytes;
  const char* const kWays[] = {"1 thread, 1 file", "2 threads, halves of 1 file",
                               "2 threads, 2 files"};
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    for (int way = 0; way < 3; ++way) {
      unlink(a.c_str());
      unlink(b.c_str());
      const int fa = OpenEmpty(a);
      const int fb = way == 2 ? OpenEmpty(b) : fa;
      const auto start = std::chrono::steady_clock::now();
      if (way == 0) {
        WriteRange(fa, a, 0, total, 0);
      } else {
        // Way 1: both threads write file a, at its two halves' offsets.
        // Way 2: each thread writes its own file from offset 0.
        std::thread first(WriteRange, fa, a, 0, total / 2, 0);
        std::thread second(WriteRange, fb, way == 2 ? b : a, total / 2, total,
                           way == 2 ? total / 2 : 0);
        first.join();
        second.join();
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("round %d  %-28s %.3f s  %6.0f MB/s\n", round, kWays[way], seconds,
                  static_cast<double>(total) / seconds / 1e6);
      close(fa);
      if (fb != fa) close(fb);
    }
  }
  unlink(a.c_str());
  unlink(b.c_str());
  return 0;
}

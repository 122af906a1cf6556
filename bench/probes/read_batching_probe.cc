// Copyright 2026 The shoal Authors.
//
// Whether a device completes reads one by one or in batches: the question
// that decides what a pipelined search (SearchOptions::disk_search) can gain
// over beam search on it. A pipelined search keeps `depth` reads in flight
// and expands each block as it arrives; that overlaps the reads with the
// computing only if they arrive one at a time. If the device (or the
// hypervisor under it) completes the reads in flight together, each wait
// returns them all, as a beam search hop does.
//
// The probe reads random 4 KiB blocks of --file with O_DIRECT through an
// io_uring ring, keeping up to `depth` in flight and submitting one read at
// a time, at least `gap` microseconds after the previous one (so they are
// spread in time). It reaps by spinning on the completion ring, without
// sleeping, and counts how many completions each reap finds: with reads
// completed one at a time, almost every reap finds one.
//
//   read_batching_probe --file=/var/tmp/some-large-file --depths=1,4,8 --gaps_us=0,5,10
//
// Needs liburing (SHOAL_HAVE_LIBURING) and a file system with O_DIRECT.
//
// Figures: docs/performance-history.md, "What bounds the disk reads and the pipelined
// gain" (issue 20); cited again in "Goals of issue 20".

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

#ifdef SHOAL_HAVE_LIBURING
#include <liburing.h>
#endif

ABSL_FLAG(std::string, file, "", "file to read (on the device to probe; >= 1 MiB)");
ABSL_FLAG(std::string, depths, "1,4,8", "reads in flight");
ABSL_FLAG(std::string, gaps_us, "0,5,10", "least microseconds between two submissions");
ABSL_FLAG(uint32_t, reads, 20000, "reads per row");

namespace {

#ifdef SHOAL_HAVE_LIBURING

std::vector<uint32_t> ParseList(const std::string& text) {
  std::vector<uint32_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    uint32_t v;
    if (!absl::SimpleAtoi(part, &v)) {
      std::fprintf(stderr, "not a number: %s\n", std::string(part).c_str());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

constexpr size_t kBlock = 4096;
constexpr uint32_t kMaxDepth = 64;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One row: `reads` reads at `depth` in flight, submissions >= gap_ns apart.
void Probe(int fd, uint64_t blocks, uint32_t depth, int64_t gap_ns, uint32_t reads,
           char* buffers) {
  io_uring ring;
  // No IORING_SETUP_COOP_TASKRUN: completions are posted as they happen,
  // so that spinning on the ring sees them without entering the kernel.
  if (const int r = io_uring_queue_init(kMaxDepth, &ring, 0); r < 0) {
    std::fprintf(stderr, "io_uring_queue_init: %s\n", std::strerror(-r));
    std::exit(1);
  }
  std::mt19937_64 rng(depth * 1000 + static_cast<uint64_t>(gap_ns));
  std::vector<int64_t> submitted_at(kMaxDepth, 0);
  std::vector<uint32_t> free_slots;
  for (uint32_t i = 0; i < depth; ++i) free_slots.push_back(i);
  std::vector<uint64_t> reaps_finding(kMaxDepth + 1, 0);
  uint32_t submitted = 0, done = 0;
  int64_t last_submit = 0, latency_ns = 0;
  while (done < reads) {
    if (!free_slots.empty() && submitted < reads && NowNs() - last_submit >= gap_ns) {
      const uint32_t slot = free_slots.back();
      free_slots.pop_back();
      io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_read(sqe, fd, buffers + slot * kBlock, kBlock, (rng() % blocks) * kBlock);
      sqe->user_data = slot;
      submitted_at[slot] = NowNs();
      if (const int r = io_uring_submit(&ring); r != 1) {
        std::fprintf(stderr, "io_uring_submit: %s\n", r < 0 ? std::strerror(-r) : "nothing");
        std::exit(1);
      }
      last_submit = NowNs();
      ++submitted;
    }
    io_uring_cqe* cqe;
    unsigned head, found = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      if (cqe->res != static_cast<int>(kBlock)) {
        std::fprintf(stderr, "read failed: %s\n",
                     cqe->res < 0 ? std::strerror(-cqe->res) : "short read");
        std::exit(1);
      }
      const auto slot = static_cast<uint32_t>(cqe->user_data);
      latency_ns += NowNs() - submitted_at[slot];
      free_slots.push_back(slot);
      ++found;
    }
    if (found > 0) {
      io_uring_cq_advance(&ring, found);
      done += found;
      ++reaps_finding[found];
    }
  }
  io_uring_queue_exit(&ring);
  uint64_t reaps = 0, alone = 0, all = 0;
  for (uint32_t i = 1; i <= kMaxDepth; ++i) reaps += reaps_finding[i];
  alone = reaps_finding[1];
  all = reaps_finding[depth];
  std::printf("%5u %7.1f %10.2f %12.1f %10.1f%% %10.1f%%\n", depth, gap_ns / 1e3,
              static_cast<double>(reads) / reaps, latency_ns / 1e3 / reads,
              100.0 * alone / reaps, 100.0 * all / reaps);
}

#endif  // SHOAL_HAVE_LIBURING

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
#ifndef SHOAL_HAVE_LIBURING
  std::fprintf(stderr, "built without liburing\n");
  return 1;
#else
  const std::string path = absl::GetFlag(FLAGS_file);
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) {
    std::fprintf(stderr, "open %s with O_DIRECT: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  const off_t size = lseek(fd, 0, SEEK_END);
  if (size < (1 << 20)) {
    std::fprintf(stderr, "%s: under 1 MiB\n", path.c_str());
    return 1;
  }
  void* buffers = nullptr;
  if (posix_memalign(&buffers, kBlock, kBlock * kMaxDepth) != 0) return 1;
  std::printf("%s: %.1f MiB, random 4 KiB reads with O_DIRECT, %u a row\n", path.c_str(),
              size / 1048576.0, absl::GetFlag(FLAGS_reads));
  std::printf("depth  gap us  done/reap  latency us  reaps of 1  reaps of all\n");
  for (const uint32_t depth : ParseList(absl::GetFlag(FLAGS_depths))) {
    if (depth < 1 || depth > kMaxDepth) {
      std::fprintf(stderr, "depth %u: 1..%u\n", depth, kMaxDepth);
      return 2;
    }
    for (const uint32_t gap : ParseList(absl::GetFlag(FLAGS_gaps_us))) {
      Probe(fd, static_cast<uint64_t>(size) / kBlock, depth, int64_t{gap} * 1000,
            std::max<uint32_t>(1, absl::GetFlag(FLAGS_reads)), static_cast<char*>(buffers));
    }
  }
  std::free(buffers);
  close(fd);
  return 0;
#endif
}

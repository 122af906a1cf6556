// Copyright 2026 The shoal Authors.
//
// Group commit without the database: what a machine's disk and cores allow.
//
// `--writers` threads each append a 552-byte record (a 128-d Put) to one log
// under a mutex, then wait until a sync covers it. The first waiter syncs
// for everyone, after gathering the writers still on their way (at most half
// the last sync's time), as WalWriter::SyncTo does; the others sleep on a
// condition variable or, with --spin, yield for up to twice the last sync's
// time first. One writer runs, then all of them, for --seconds each, twice;
// the figure is the puts/s of each run and their ratio. No memtable, no
// validation, no shards: what the engine reaches is at most this.
//
// --path chooses the log's I/O:
//   mapped  a sparse file written through a shared mapping, fdatasync (as
//           shoal's log, without its fallocate)
//   direct  a file zero-filled up front, written with O_DIRECT from a memory
//           copy of the log (the 4 KiB blocks holding the unsynced bytes),
//           then fdatasync: no block allocation, no page cache writeback
//   dsync   as direct, opened O_DSYNC instead of calling fdatasync
//
//   build/bench/group_commit_sim --dir ./shoal-bench-tmp --path direct --spin
//
// Figures: docs/performance-history.md, "Where the time goes, and what was done about
// it" (issue 2); cited in "Group commit, later on 2026-11-23" and README.md.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "fmt/core.h"

ABSL_FLAG(std::string, dir, "./shoal-bench-tmp", "directory of the log file (on the disk to measure)");
ABSL_FLAG(std::string, path, "mapped", "log I/O: mapped, direct or dsync");
ABSL_FLAG(bool, spin, false, "waiters yield for a running sync before sleeping");
ABSL_FLAG(int, writers, 8, "writer threads of the group run");
ABSL_FLAG(double, seconds, 2.0, "length of each run");

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kRecordBytes = 552;              // 8-byte id + 128 floats + header
constexpr size_t kBlock = 4096;

enum class IoPath { kMapped, kDirect, kDsync };

// Room for a run of `seconds` at up to 100K puts/s.
size_t LogBytes(double seconds) {
  const double bytes = seconds * 100000 * kRecordBytes + (1 << 20);
  return (static_cast<size_t>(bytes) + (1 << 20) - 1) & ~size_t{(1 << 20) - 1};
}

[[noreturn]] void Die(const std::string& what) {
  std::perror(what.c_str());
  std::exit(1);
}

class Log {
 public:
  Log(const std::string& file, IoPath io, bool spin, size_t bytes)
      : io_(io), spin_(spin), bytes_(bytes) {
    int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) Die("open " + file);
    if (io_ == IoPath::kMapped) {
      if (::ftruncate(fd, bytes_) != 0) Die("ftruncate");
      void* m = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) Die("mmap");
      data_ = static_cast<char*>(m);
      fd_ = fd;
      return;
    }
    // Zero-fill, so that later writes need no block allocation.
    std::vector<char> zeros(1 << 20, 0);
    for (size_t off = 0; off < bytes_; off += zeros.size()) {
      if (::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(off)) < 0) Die("pwrite");
    }
    if (::fsync(fd) != 0) Die("fsync");
    ::close(fd);
    fd_ = ::open(file.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC | (io_ == IoPath::kDsync ? O_DSYNC : 0));
    if (fd_ < 0) Die("open O_DIRECT " + file);
    data_ = static_cast<char*>(std::aligned_alloc(kBlock, bytes_));
    if (data_ == nullptr) Die("aligned_alloc");
    std::memset(data_, 0, bytes_);
  }
  ~Log() {
    if (io_ == IoPath::kMapped) {
      ::munmap(data_, bytes_);
    } else {
      std::free(data_);
    }
    std::free(staging_);
    ::close(fd_);
  }

  // Appends one record; returns the log position just past it.
  size_t Append(const char* record) {
    std::lock_guard<std::mutex> lock(append_mu_);
    if (end_ + kRecordBytes > bytes_) {
      std::fprintf(stderr, "log full: more than 100K puts/s\n");
      std::exit(1);
    }
    std::memcpy(data_ + end_, record, kRecordBytes);
    end_ += kRecordBytes;
    return end_;
  }

  void SyncTo(size_t lsn) {
    bool synced = false;
    {
      std::unique_lock<std::mutex> lock(sync_mu_);
      ++waiting_;
      if (gathering_) arrived_.notify_one();
      while (synced_ < lsn) {
        if (running_) {
          if (spin_) {
            // Until the running sync ends.
            const auto until = Clock::now() + 2 * last_sync_ + std::chrono::microseconds(50);
            const uint64_t running = syncs_ended_.load(std::memory_order_relaxed);
            lock.unlock();
            while (syncs_ended_.load(std::memory_order_acquire) == running && Clock::now() < until) {
              std::this_thread::yield();
            }
            lock.lock();
            if (!running_) continue;
          }
          done_.wait(lock);
          continue;
        }
        running_ = true;
        const auto deadline =
            Clock::now() + std::min<Clock::duration>(last_sync_ / 2, std::chrono::milliseconds(2));
        gathering_ = true;
        while (waiting_ < writers_.load() && Clock::now() < deadline) {
          arrived_.wait_until(lock, deadline);
        }
        gathering_ = false;
        size_t target;
        {
          std::lock_guard<std::mutex> append_lock(append_mu_);
          target = end_;
        }
        const size_t from = synced_;
        lock.unlock();
        const auto start = Clock::now();
        Write(from, target);
        const auto end = Clock::now();
        lock.lock();
        last_sync_ = end - start;
        running_ = false;
        synced_ = std::max(synced_, target);
        syncs_ended_.fetch_add(1, std::memory_order_release);
        synced = true;
      }
      --waiting_;
    }
    if (synced) done_.notify_all();
  }

  std::atomic<int>& writers() { return writers_; }

 private:
  void Write(size_t from, size_t to) {
    if (io_ == IoPath::kMapped) {
      if (::fdatasync(fd_) != 0) Die("fdatasync");
      return;
    }
    // The blocks holding [from, to), copied while no append runs (the last
    // one may be filling up).
    const size_t begin = from & ~(kBlock - 1), end = (to + kBlock - 1) & ~(kBlock - 1);
    if (end - begin > staging_bytes_) {
      std::free(staging_);
      staging_bytes_ = end - begin;
      staging_ = static_cast<char*>(std::aligned_alloc(kBlock, staging_bytes_));
      if (staging_ == nullptr) Die("aligned_alloc");
    }
    {
      std::lock_guard<std::mutex> lock(append_mu_);
      std::memcpy(staging_, data_ + begin, end - begin);
    }
    if (::pwrite(fd_, staging_, end - begin, static_cast<off_t>(begin)) < 0) Die("pwrite");
    if (io_ == IoPath::kDirect && ::fdatasync(fd_) != 0) Die("fdatasync");
  }

  const IoPath io_;
  const bool spin_;
  const size_t bytes_;
  int fd_ = -1;
  char* data_ = nullptr;

  std::mutex append_mu_;
  size_t end_ = 0;
  char* staging_ = nullptr;  // the syncer's copy of the blocks it writes
  size_t staging_bytes_ = 0;

  std::mutex sync_mu_;
  std::condition_variable arrived_, done_;
  size_t synced_ = 0;
  std::atomic<uint64_t> syncs_ended_{0};
  bool running_ = false, gathering_ = false;
  int waiting_ = 0;
  std::atomic<int> writers_{0};
  Clock::duration last_sync_{};
};

double PutsPerSecond(Log& log, int writers, double seconds) {
  std::atomic<long> puts{0};
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int w = 0; w < writers; ++w) {
    pool.emplace_back([&] {
      char record[kRecordBytes];
      std::memset(record, 7, sizeof record);
      while (Clock::now() < deadline) {
        log.writers().fetch_add(1);
        log.SyncTo(log.Append(record));
        log.writers().fetch_sub(1);
        puts.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return static_cast<double>(puts.load()) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string io_name = absl::GetFlag(FLAGS_path);
  IoPath io;
  if (io_name == "mapped") {
    io = IoPath::kMapped;
  } else if (io_name == "direct") {
    io = IoPath::kDirect;
  } else if (io_name == "dsync") {
    io = IoPath::kDsync;
  } else {
    std::fprintf(stderr, "--path must be mapped, direct or dsync\n");
    return 2;
  }
  const std::string dir = absl::GetFlag(FLAGS_dir);
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/group_commit_sim.log";
  const int writers = absl::GetFlag(FLAGS_writers);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  for (int round = 0; round < 2; ++round) {
    double one, many;
    {
      Log log(file, io, absl::GetFlag(FLAGS_spin), LogBytes(seconds));
      one = PutsPerSecond(log, 1, seconds);
    }
    {
      Log log(file, io, absl::GetFlag(FLAGS_spin), LogBytes(seconds));
      many = PutsPerSecond(log, writers, seconds);
    }
    fmt::print("{} {}: 1 writer {:.0f} puts/s, {} writers {:.0f} puts/s, ratio {:.2f}\n", io_name,
               absl::GetFlag(FLAGS_spin) ? "spin" : "sleep", one, writers, many, many / one);
  }
  std::filesystem::remove(file);
  return 0;
}

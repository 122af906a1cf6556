// Copyright 2026 The shoal Authors.
//
// The direct-I/O log file (util/direct_log_file.h): synced bytes reach the
// file and unsynced ones do not, a reopened file keeps the records of its
// last partial block and makes them durable, bad ranges and calls after the
// close are refused; and a kAlways database on a
// disk, whose logs use it, keeps every write across reopens, also when the
// option changes between them. (Kill -9 and power loss with it: recovery_test,
// fault_injection_fs_test and crash_loop_disk.)

#include "util/direct_log_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "shoal/db.h"
#include "testutil/temp_dir.h"
#include "util/file_system.h"

namespace shoal {
namespace {

using test::TempDir;

std::string Pattern(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7 + i / 251);
  return s;
}

std::string FileContent(const std::string& path) {
  absl::StatusOr<std::string> content = FileSystem::Default()->ReadFile(path);
  EXPECT_TRUE(content.ok()) << content.status();
  return content.ok() ? *content : std::string();
}

// Reserves room for `bytes` at `offset` and stores them there.
void Store(MappedFile& file, size_t offset, const std::string& bytes) {
  ASSERT_OK(file.Reserve(offset + bytes.size()));
  std::memcpy(file.data() + offset, bytes.data(), bytes.size());
}

// Opens a direct log file, or skips the test where the file system has no
// direct I/O (the engine then uses a mapped log; other tests cover that).
#define OPEN_DIRECT_OR_SKIP(var, path, capacity, resume)                      \
  absl::StatusOr<std::unique_ptr<MappedFile>> var##_or =                      \
      OpenDirectLogFile(path, capacity, resume);                              \
  if (absl::IsUnimplemented(var##_or.status())) {                             \
    GTEST_SKIP() << "no direct I/O here: " << var##_or.status();              \
  }                                                                           \
  ASSERT_TRUE(var##_or.ok()) << var##_or.status();                            \
  std::unique_ptr<MappedFile> var = std::move(var##_or).value()

TEST(DirectLogFileTest, SyncPrefixWritesTheSyncedBytesAndUnsyncedOnesStayInMemory) {
  TempDir dir(TempDir::Storage::kDisk);
  const std::string path = dir.Sub("log");
  OPEN_DIRECT_OR_SKIP(file, path, 64 << 10, 0);
  const std::string data = Pattern(9000, 3);
  ASSERT_NO_FATAL_FAILURE(Store(*file, 0, data));

  ASSERT_OK(file->SyncPrefix(3000));
  std::string content = FileContent(path);
  ASSERT_GE(content.size(), 9000u);
  // The bytes up to 3000 went out; the stores after them did not (the rest
  // of their block was written with zeros).
  EXPECT_EQ(content.substr(0, 3000), data.substr(0, 3000));
  EXPECT_EQ(content.substr(3000, 6000), std::string(6000, '\0'));

  ASSERT_OK(file->SyncPrefix(9000));
  content = FileContent(path);
  EXPECT_EQ(content.substr(0, 9000), data);
  EXPECT_EQ(content.substr(9000), std::string(content.size() - 9000, '\0'));

  ASSERT_OK(file->CloseAndTruncate(9000));
  EXPECT_EQ(FileContent(path), data);
}

TEST(DirectLogFileTest, CloseAndTruncateWritesBytesNeverSynced) {
  TempDir dir(TempDir::Storage::kDisk);
  const std::string path = dir.Sub("log");
  OPEN_DIRECT_OR_SKIP(file, path, 64 << 10, 0);
  const std::string data = Pattern(6000, 11);
  ASSERT_NO_FATAL_FAILURE(Store(*file, 0, data));
  ASSERT_OK(file->SyncPrefix(100));
  ASSERT_OK(file->CloseAndTruncate(data.size()));
  EXPECT_EQ(FileContent(path), data);
}

TEST(DirectLogFileTest, ReopenAtAnUnalignedOffsetKeepsTheBytesBeforeIt) {
  TempDir dir(TempDir::Storage::kDisk);
  const std::string path = dir.Sub("log");
  const std::string first = Pattern(5000, 1), second = Pattern(7000, 5);
  {
    OPEN_DIRECT_OR_SKIP(file, path, 64 << 10, 0);
    ASSERT_NO_FATAL_FAILURE(Store(*file, 0, first));
    ASSERT_OK(file->SyncPrefix(first.size()));
    ASSERT_OK(file->CloseAndTruncate(first.size()));
  }
  OPEN_DIRECT_OR_SKIP(file, path, 64 << 10, first.size());
  // The partial block is read back: a sync rewrites it whole.
  EXPECT_EQ(std::string(file->data() + 4096, first.size() - 4096), first.substr(4096));
  const size_t end = first.size() + second.size();
  ASSERT_NO_FATAL_FAILURE(Store(*file, first.size(), second));
  ASSERT_OK(file->SyncPrefix(end));
  EXPECT_EQ(FileContent(path).substr(0, end), first + second);
  ASSERT_OK(file->CloseAndTruncate(end));
  EXPECT_EQ(FileContent(path), first + second);
}

// Pages of `path` in the page cache that are dirty (not yet written back),
// by the cachestat system call (Linux 6.5); nullopt where there is none.
std::optional<uint64_t> DirtyPages(const std::string& path) {
#ifdef __NR_cachestat
  const long nr = __NR_cachestat;
#elif defined(__x86_64__) || defined(__aarch64__)
  const long nr = 451;  // the same number on every architecture since 6.5
#else
  return std::nullopt;
#endif
  struct Range {
    uint64_t offset, length;
  } range{0, 0};  // length 0: to the end of the file
  struct Stat {
    uint64_t cache, dirty, writeback, evicted, recently_evicted;
  } stat{};
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const long rc = syscall(nr, fd, &range, &stat, 0);
  close(fd);
  if (rc != 0) return std::nullopt;
  return stat.dirty;
}

// A log written through the mapping (kNever, kInterval) by a process that
// died may have its records in the page cache only; SyncPrefix writes only
// the blocks from the resume point on, so the reopen itself must make the
// records before it durable, or a power loss could keep a later acknowledged
// record and lose them.
TEST(DirectLogFileTest, ReopenMakesTheBytesBeforeTheResumePointDurable) {
  TempDir dir(TempDir::Storage::kDisk);
  const std::string path = dir.Sub("log");
  const std::string records = Pattern(40000, 9);
  {
    absl::StatusOr<std::unique_ptr<MappedFile>> mapped =
        FileSystem::Default()->OpenMapped(path, 64 << 10, /*populate=*/false);
    ASSERT_TRUE(mapped.ok()) << mapped.status();
    ASSERT_NO_FATAL_FAILURE(Store(**mapped, 0, records));
    ASSERT_OK((*mapped)->CloseAndTruncate(records.size()));  // no sync
  }
  const std::optional<uint64_t> dirty_before = DirtyPages(path);
  if (!dirty_before.has_value() || *dirty_before == 0) {
    GTEST_SKIP() << "cannot see dirty pages here (no cachestat, or written back already)";
  }
  OPEN_DIRECT_OR_SKIP(file, path, 64 << 10, records.size());
  EXPECT_EQ(DirtyPages(path), 0u) << "of " << *dirty_before << " dirty pages before the reopen";
  ASSERT_OK(file->CloseAndTruncate(records.size()));
  EXPECT_EQ(FileContent(path), records);
}

// Both kinds of log file: a closed file refuses every later call instead of
// touching a closed descriptor or unmapped memory.
TEST(DirectLogFileTest, CallsAfterCloseAndTruncateAreRefused) {
  TempDir dir(TempDir::Storage::kDisk);
  for (const bool direct : {false, true}) {
    const std::string path = dir.Sub(direct ? "direct" : "mapped");
    absl::StatusOr<std::unique_ptr<MappedFile>> opened =
        direct ? OpenDirectLogFile(path, 64 << 10, 0)
               : FileSystem::Default()->OpenMapped(path, 64 << 10, /*populate=*/false);
    if (direct && absl::IsUnimplemented(opened.status())) {
      GTEST_SKIP() << "no direct I/O here: " << opened.status();
    }
    ASSERT_TRUE(opened.ok()) << opened.status();
    MappedFile& file = **opened;
    ASSERT_NO_FATAL_FAILURE(Store(file, 0, Pattern(100, 1)));
    ASSERT_OK(file.CloseAndTruncate(100));
    EXPECT_EQ(file.data(), nullptr) << path;
    EXPECT_TRUE(absl::IsFailedPrecondition(file.CloseAndTruncate(100))) << path;
    EXPECT_TRUE(absl::IsFailedPrecondition(file.Sync())) << path;
    EXPECT_TRUE(absl::IsFailedPrecondition(file.SyncPrefix(100))) << path;
    file.Populate(0, 4096);  // does nothing
    EXPECT_EQ(FileContent(path), Pattern(100, 1)) << path;
  }
}

TEST(DirectLogFileTest, RangesPastTheCapacityOrTheReservedBytesAreRefused) {
  TempDir dir(TempDir::Storage::kDisk);
  const std::string path = dir.Sub("log");
  const size_t capacity = 4 << 20;
  OPEN_DIRECT_OR_SKIP(file, path, capacity, 0);
  EXPECT_STATUS_CODE(file->Reserve(capacity + 1), absl::StatusCode::kOutOfRange);
  EXPECT_STATUS_CODE(file->SyncPrefix(capacity + 1), absl::StatusCode::kOutOfRange);
  ASSERT_OK(file->Reserve(100));  // zero-fills the first 1 MiB step only
  EXPECT_STATUS_CODE(file->SyncPrefix(capacity), absl::StatusCode::kFailedPrecondition);
  EXPECT_OK(file->SyncPrefix(100));
  ASSERT_OK(file->Reserve(capacity));
  EXPECT_OK(file->SyncPrefix(capacity));
  ASSERT_OK(file->CloseAndTruncate(0));
}

TEST(DirectLogFileTest, TmpfsIsUnimplementedAndGetsNoFile) {
  struct statfs fs;
  if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) {
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  }
  TempDir dir(TempDir::Storage::kMemory);
  const std::string path = dir.Sub("log");
  absl::StatusOr<std::unique_ptr<MappedFile>> file = OpenDirectLogFile(path, 64 << 10, 0);
  EXPECT_STATUS_CODE(file, absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(FileSystem::Default()->Exists(path));
}

constexpr uint32_t kDim = 8;

// kAlways on a disk: writers on 8 threads, small log files (rotations), and
// reopens that switch Options::direct_io_log, so that each log I/O path
// continues files the other one wrote.
TEST(DirectIoLogDbTest, KAlwaysOnDiskKeepsEveryWriteAcrossReopensOfEitherLogPath) {
  TempDir dir(TempDir::Storage::kDisk);
  test::VectorMap model;
  std::vector<uint64_t> deleted;
  uint64_t next_id = 0;
  for (int round = 0; round < 4; ++round) {
    Options options = test::DefaultOptions(kDim, Metric::kL2, 2);
    options.fsync = FsyncPolicy::kAlways;
    options.direct_io_log = round % 2 == 0;
    options.wal_file_bytes = 8 << 10;
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
    ASSERT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted))
        << "round " << round;
    constexpr int kThreads = 8, kPerThread = 40;
    std::vector<std::thread> writers;
    std::vector<absl::Status> status(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      writers.emplace_back([&, t] {
        for (int i = 0; i < kPerThread && status[t].ok(); ++i) {
          const uint64_t id = next_id + static_cast<uint64_t>(t * kPerThread + i);
          status[t] = db->Put(id, test::RandomVector(kDim, id));
        }
      });
    }
    for (std::thread& w : writers) w.join();
    for (const absl::Status& s : status) ASSERT_OK(s);
    for (uint64_t id = next_id; id < next_id + kThreads * kPerThread; ++id) {
      model[id] = test::RandomVector(kDim, id);
    }
    next_id += kThreads * kPerThread;
    const uint64_t gone = next_id - 3;
    ASSERT_OK(db->Delete(gone));
    model.erase(gone);
    deleted.push_back(gone);
    ASSERT_OK(db->Close());
  }
  Options options = test::DefaultOptions(kDim, Metric::kL2, 2);
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, deleted));
}

}  // namespace
}  // namespace shoal

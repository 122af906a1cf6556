// Copyright 2026 The shoal Authors.
//
// A full file system: writes fail with ResourceExhausted (never SIGBUS from a
// store into the mapped log), nothing acknowledged is lost, nothing of a
// failed call is applied, and writing resumes once there is room again.
//
// The DiskFullTest cases mount a small tmpfs of their own, in a private
// mount namespace, which needs root (CAP_SYS_ADMIN); without it they skip.
// The DiskFullDirectIoTest cases mount a small ext4 on a loop device the
// same way, for the kAlways log written with direct I/O (they skip without
// root, mkfs.ext4 or loop devices).
// The ReserveFailureTest cases make the log's space reservations fail on
// the fault-injecting file system, and run everywhere.

#include <sched.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testutil/fault_injection_fs.h"
#include "testutil/temp_dir.h"
#include "util/direct_log_file.h"
#include "util/hash.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kDim = 128;

// A small file system of `bytes` at a fresh directory, unmounted on
// destruction: a tmpfs, or an ext4 on a loop device (made with mkfs.ext4 and
// mount -o loop), where kAlways logs are written with direct I/O.
class SmallFileSystem {
 public:
  enum class Kind { kTmpfs, kExt4 };
  explicit SmallFileSystem(size_t bytes, Kind kind = Kind::kTmpfs)
      : path_(dir_.path() + "/mnt") {
    fs::create_directories(path_);
    // Only in a mount namespace of this process's own, with nothing
    // propagating out, so that the mount goes with the process even when a
    // test crashes (a loop device mounted by mount -o loop is freed then).
    if (unshare(CLONE_NEWNS) != 0) {
      error_ = absl::StrCat("unshare: ", std::strerror(errno));
      return;
    }
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      error_ = absl::StrCat("making / private: ", std::strerror(errno));
      return;
    }
    if (kind == Kind::kExt4) {
      const std::string image = dir_.path() + "/image";
      std::ofstream(image).close();
      fs::resize_file(image, bytes);
      const std::string mkfs =
          absl::StrCat("mkfs.ext4 -q -F -m 0 -b 4096 ", image, " >/dev/null 2>&1");
      if (std::system(mkfs.c_str()) != 0) {
        error_ = "mkfs.ext4 failed (is e2fsprogs installed?)";
        return;
      }
      const std::string mount_loop =
          absl::StrCat("mount -o loop ", image, " ", path_, " >/dev/null 2>&1");
      if (std::system(mount_loop.c_str()) != 0) {
        error_ = "mount -o loop failed (no loop devices?)";
        return;
      }
    } else {
      const std::string options = "size=" + std::to_string(bytes);
      if (mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
        error_ = absl::StrCat("mount: ", std::strerror(errno));
        return;
      }
    }
    mounted_ = true;
  }
  ~SmallFileSystem() {
    if (mounted_) umount(path_.c_str());
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

  // Fills about `bytes` of the file system with a file, so that a test can
  // give the room back later. Fails the test when they do not fit.
  void AddBallast(size_t bytes) {
    std::ofstream out(path_ + "/ballast", std::ios::binary);
    const std::string chunk(1 << 16, 'b');
    for (size_t done = 0; done < bytes && out.good(); done += chunk.size()) {
      out.write(chunk.data(), static_cast<std::streamsize>(std::min(chunk.size(), bytes - done)));
    }
    out.flush();
    EXPECT_TRUE(out.good()) << "ballast of " << bytes << " bytes does not fit";
  }
  // Leaves about `bytes` free.
  void FillUpTo(size_t bytes) {
    const size_t available = fs::space(path_).available;
    ASSERT_GT(available, bytes);
    AddBallast(available - bytes);
  }
  void RemoveBallast() { fs::remove(path_ + "/ballast"); }

 private:
  test::TempDir dir_;
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

#define SKIP_UNLESS_MOUNTED(small)                                                \
  if (!(small).mounted()) {                                                       \
    GTEST_SKIP() << "cannot mount a small file system (" << (small).error()       \
                 << "): needs root";                                              \
  }

Options SmallOptions(size_t wal_file_bytes) {
  Options o = test::DefaultOptions(kDim, Metric::kL2, 1);
  o.wal_file_bytes = wal_file_bytes;
  return o;
}

// Puts `count` vectors with new ids from `first_id` on, stopping at the
// first failure, which it returns (and its id in *failed_id when given). The
// acknowledged ones go into *model.
absl::Status PutNew(DB& db, uint64_t first_id, uint64_t count, test::VectorMap* model,
                    uint64_t* failed_id = nullptr) {
  for (uint64_t id = first_id; id < first_id + count; ++id) {
    std::vector<float> v = test::RandomVector(kDim, id);
    absl::Status s = db.Put(id, v);
    if (!s.ok()) {
      if (failed_id != nullptr) *failed_id = id;
      return s;
    }
    (*model)[id] = std::move(v);
  }
  return absl::OkStatus();
}

// PutNew until a Put fails (or 100K of them, far more than the small file
// systems here hold, did not).
absl::Status PutUntilFailure(DB& db, uint64_t first_id, test::VectorMap* model,
                             uint64_t* failed_id) {
  return PutNew(db, first_id, 100000, model, failed_id);
}

// `rows` x 128 random floats (10000: 5 MB, more room than most of these tests
// leave) under ids 1000, 1001, ...
std::vector<float> LargeBatch(uint64_t seed, std::vector<uint64_t>* ids,
                              size_t kRows = 10000) {
  ids->resize(kRows);
  for (size_t i = 0; i < kRows; ++i) (*ids)[i] = 1000 + i;
  return test::RandomVectors(kRows, kDim, seed);
}

void ExpectAbsent(DB& db, uint64_t id) {
  EXPECT_TRUE(absl::IsNotFound(db.Get(id).status())) << "id " << id;
}

// With 2 MiB of `small` taken: Puts until one fails, which must be
// ResourceExhausted and lose nothing; once the room is back, `more` new Puts
// go through on the same database, and a reopen has everything.
void FillThenResume(SmallFileSystem& small, const Options& options, size_t more) {
  small.AddBallast(2 << 20);
  const std::string path = small.path() + "/db";
  test::VectorMap model;
  uint64_t failed_id = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
    absl::Status s = PutUntilFailure(*db, 0, &model, &failed_id);
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    EXPECT_GT(model.size(), 1000u);
    ExpectAbsent(*db, failed_id);
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
    small.RemoveBallast();
    ASSERT_OK(PutNew(*db, failed_id, more, &model));
    ASSERT_OK(db->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// On `small`: 100 Puts, then a PutBatch of `rows` rows, larger than the
// whole file system, which must be ResourceExhausted and apply none of its
// rows; then 100 more Puts still go through, and a reopen has exactly the
// Puts.
void BatchLargerThanTheRoomLeftAppliesNothing(SmallFileSystem& small, const Options& options,
                                              size_t rows = 10000) {
  const std::string path = small.path() + "/db";
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
  test::VectorMap model;
  ASSERT_OK(PutNew(*db, 0, 100, &model));
  std::vector<uint64_t> ids;
  const std::vector<float> vectors = LargeBatch(7, &ids, rows);
  absl::Status s = db->PutBatch(ids, vectors);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  ExpectAbsent(*db, ids.front());
  ExpectAbsent(*db, ids.back());
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  ASSERT_OK(PutNew(*db, 100, 100, &model));  // what fits still goes through
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, path));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(DiskFullTest, PutReturnsResourceExhaustedLosesNothingAndResumesWhenThereIsRoom) {
  SmallFileSystem small(8 << 20);
  SKIP_UNLESS_MOUNTED(small);
  // One log file, larger than the disk.
  FillThenResume(small, SmallOptions(64 << 20), 100);
}

TEST(DiskFullTest, PutBatchLargerThanTheRoomLeftAppliesNothing) {
  SmallFileSystem small(4 << 20);
  SKIP_UNLESS_MOUNTED(small);
  BatchLargerThanTheRoomLeftAppliesNothing(small, SmallOptions(64 << 20));
}

TEST(DiskFullTest, LogRotationOntoAFullDiskLosesNothingAndResumesWhenThereIsRoom) {
  SmallFileSystem small(8 << 20);
  SKIP_UNLESS_MOUNTED(small);
  // Log files of 256 KiB, reserved whole when they are started: the disk
  // fills up when the next one cannot be; the 1000 Puts after it fill
  // several more files.
  FillThenResume(small, SmallOptions(256 << 10), 1000);
}

TEST(DiskFullTest, BulkLoadLargerThanTheRoomLeftAppliesNothingAndLeavesNoFile) {
  SmallFileSystem small(6 << 20);
  SKIP_UNLESS_MOUNTED(small);
  const std::string path = small.path() + "/db";
  const Options options = SmallOptions(1 << 20);
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
  test::VectorMap model;
  ASSERT_OK(PutNew(*db, 0, 100, &model));
  ASSERT_OK(db->Flush());  // so that the bulk load has nothing to flush first
  const std::vector<std::string> segments_before = test::SegmentFiles(path);
  std::vector<uint64_t> ids;
  const std::vector<float> vectors = LargeBatch(9, &ids);  // 5 MB of vectors, plus the graph
  absl::Status s = db->BulkLoad(kDefaultCollection, ids, vectors);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  ExpectAbsent(*db, ids.front());
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  EXPECT_EQ(test::SegmentFiles(path), segments_before);  // the partial one is gone
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, path));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// Memtables flush to segments and log files rotate while the disk fills up.
TEST(DiskFullTest, PutsWithBackgroundFlushesOntoAFullDiskLoseNothingAcknowledged) {
  SmallFileSystem small(16 << 20);
  SKIP_UNLESS_MOUNTED(small);
  const std::string path = small.path() + "/db";
  Options options = SmallOptions(1 << 20);
  options.memtable_bytes = 1 << 20;  // a flush every ~2000 puts
  test::VectorMap model;
  uint64_t failed_id = 0;
  absl::Status s;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
    ASSERT_OK(PutNew(*db, 0, 4000, &model));
    ASSERT_OK(db->Flush());
    small.FillUpTo(3 << 20);  // room for a few more log files and segments
    s = PutUntilFailure(*db, 4000, &model, &failed_id);
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    ExpectAbsent(*db, failed_id);
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
    EXPECT_FALSE(db->Flush().ok());  // it needs a new log file too
    small.RemoveBallast();
    (void)db->Close();
  }
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model)) << s;
  ASSERT_OK(db->Flush());
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// Merges onto a full disk: the fold at flush time (the memtable merged into
// the large segment) and Compact() fail with ResourceExhausted and change
// nothing: the memtable stays in the log, the inputs stay, the half-written
// merged file is gone. Once there is room both go through.
TEST(DiskFullTest, MergesOntoAFullDiskChangeNothingAndLeaveNoFile) {
  SmallFileSystem small(32 << 20);
  SKIP_UNLESS_MOUNTED(small);
  const std::string path = small.path() + "/db";
  Options options = SmallOptions(1 << 20);
  options.compaction.automatic = true;
  test::VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
    ASSERT_OK(PutNew(*db, 0, 4000, &model));  // ~2.5 MB of vectors, ~4 MB of segment
    ASSERT_OK(db->Flush());
    ASSERT_OK(db->WaitForCompact());
    const std::vector<std::string> before = test::SegmentFiles(path);
    ASSERT_EQ(before.size(), 1u);
    // 1,000 more: past the fold ratio, so the flush is the fold; it needs
    // room for a segment of 5,000 vectors, and finds 1 MiB.
    ASSERT_OK(PutNew(*db, 4000, 1000, &model));
    ASSERT_OK(db->Delete(7));
    model.erase(7);
    small.FillUpTo(1 << 20);
    absl::Status s = db->Flush();
    EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    EXPECT_EQ(test::SegmentFiles(path), before);
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
    small.RemoveBallast();
    ASSERT_OK(db->Flush());
    ASSERT_OK(db->WaitForCompact());
    EXPECT_EQ(test::SegmentFiles(path).size(), 1u);
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
    ASSERT_OK(db->Close());
  }
  // Compact() over two segments (automatic compaction off keeps them two).
  options.compaction.automatic = false;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
  ASSERT_OK(PutNew(*db, 5000, 1000, &model));
  ASSERT_OK(db->Flush());
  const std::vector<std::string> before = test::SegmentFiles(path);
  ASSERT_EQ(before.size(), 2u);
  small.FillUpTo(1 << 20);
  absl::Status s = db->Compact();
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_EQ(test::SegmentFiles(path), before);
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  small.RemoveBallast();
  ASSERT_OK(db->Compact());
  EXPECT_EQ(test::SegmentFiles(path).size(), 1u);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, path));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// The first `count` ids from `from` on that live on shard `shard` of 2.
std::vector<uint64_t> IdsOnShard(uint32_t shard, uint64_t from, size_t count) {
  std::vector<uint64_t> ids;
  for (uint64_t id = from; ids.size() < count; ++id) {
    if (ShardOf(id, 2) == shard) ids.push_back(id);
  }
  return ids;
}

// Two shards; shard 0's writes fail (its log or its flushes find no room)
// while shard 1 still has room in its log: a PutBatch over both must store
// nothing on either. Until 2026-11-25 shard 1's part stayed, durably (20
// times out of 20 in this shape).
TEST(DiskFullTest, FailedPutBatchOverSeveralShardsStoresNothingOnAny) {
  SmallFileSystem small(8 << 20);
  SKIP_UNLESS_MOUNTED(small);
  small.AddBallast(4 << 20);
  const std::string path = small.path() + "/db";
  Options options = test::DefaultOptions(kDim, Metric::kL2, 2);
  options.memtable_bytes = 512 << 10;
  options.wal_file_bytes = 256 << 10;
  test::VectorMap model;
  std::vector<uint64_t> tried;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
    absl::Status refused;
    for (uint64_t id : IdsOnShard(0, 0, 100000)) {
      std::vector<float> v = test::RandomVector(kDim, id);
      refused = db->Put(id, v);
      if (!refused.ok()) break;
      model[id] = std::move(v);
    }
    ASSERT_FALSE(refused.ok());
    const std::vector<uint64_t> fresh0 = IdsOnShard(0, 1 << 30, 20);
    const std::vector<uint64_t> fresh1 = IdsOnShard(1, 1 << 30, 20);
    int failed = 0;
    for (size_t i = 0; i < 20; ++i) {
      const std::vector<uint64_t> ids = {fresh0[i], fresh1[i]};
      absl::Status s = db->PutBatch(ids, test::RandomVectors(2, kDim, 50 + i));
      if (s.ok()) {
        // Room came back (a flush freed log files): both parts are there.
        const std::vector<float> rows = test::RandomVectors(2, kDim, 50 + i);
        model[ids[0]] = std::vector<float>(rows.begin(), rows.begin() + kDim);
        model[ids[1]] = std::vector<float>(rows.begin() + kDim, rows.end());
        continue;
      }
      ++failed;
      tried.insert(tried.end(), ids.begin(), ids.end());
      ExpectAbsent(*db, ids[0]);
      ExpectAbsent(*db, ids[1]);
    }
    EXPECT_GT(failed, 0) << "shard 0 took writes again at once: the test did not fill it";
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, tried));
    (void)db->Close();
  }
  small.RemoveBallast();
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, tried));
}

// Background flushes fail on a full disk, the frozen memtables back up and
// writes are refused with the flush's error; once the room is back, writes
// resume by themselves (the failed flush is retried, with back-off), with
// no Flush() and no reopen. Until 2026-11-25 the stale flush error refused
// writes until someone called Flush() (104 of 200 Puts failed).
TEST(DiskFullTest, WritesResumeByThemselvesOnceAFailedFlushFindsRoom) {
  SmallFileSystem small(16 << 20);
  SKIP_UNLESS_MOUNTED(small);
  const std::string path = small.path() + "/db";
  Options options = SmallOptions(256 << 10);
  options.memtable_bytes = 256 << 10;  // a flush every ~500 puts
  test::VectorMap model;
  uint64_t failed_id = 0;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, path));
  ASSERT_OK(PutNew(*db, 0, 1000, &model));
  small.FillUpTo(1 << 20);
  absl::Status s = PutUntilFailure(*db, 1000, &model, &failed_id);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  small.RemoveBallast();
  // The retry waits out its back-off (at most a second) first.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  uint64_t id = failed_id;
  while (!PutNew(*db, id, 1, &model).ok()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "writes never resumed";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ++id;
  // From then on every write goes through, across more flushes.
  ASSERT_OK(PutNew(*db, id, 2000, &model));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(db, DB::Open(options, path));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// ---- ext4 on a loop device: the kAlways log is written with direct I/O ----

// Whether logs in `dir` are written with direct I/O (Options::direct_io_log).
bool DirectIoWorks(const std::string& dir) {
  const std::string probe = dir + "/direct-io-probe";
  absl::StatusOr<std::unique_ptr<MappedFile>> file = OpenDirectLogFile(probe, 4096, 0);
  if (file.ok()) (void)(*file)->CloseAndTruncate(0);
  fs::remove(probe);
  return file.ok();
}

#define SKIP_UNLESS_DIRECT_IO(small)                                              \
  SKIP_UNLESS_MOUNTED(small);                                                     \
  if (!DirectIoWorks((small).path())) {                                           \
    GTEST_SKIP() << "no direct I/O on the loop-mounted ext4 at " << (small).path(); \
  }

// kAlways, each shard syncing its own log (written with direct I/O), or with
// the collection's commit log (written with direct I/O; the shard logs are
// mapped): the parameter is Options::collection_commit_log.
class DiskFullDirectIoTest : public ::testing::TestWithParam<bool> {
 protected:
  Options KAlwaysOptions(size_t wal_file_bytes) const {
    Options o = SmallOptions(wal_file_bytes);
    o.fsync = FsyncPolicy::kAlways;
    o.collection_commit_log = GetParam();
    return o;
  }
};

TEST_P(DiskFullDirectIoTest, KAlwaysPutReturnsResourceExhaustedLosesNothingAndResumes) {
  SmallFileSystem small(16 << 20, SmallFileSystem::Kind::kExt4);
  SKIP_UNLESS_DIRECT_IO(small);
  // One log file, larger than the disk: its zero-fill ahead of the writer
  // runs into the full disk.
  FillThenResume(small, KAlwaysOptions(64 << 20), 100);
}

TEST_P(DiskFullDirectIoTest, KAlwaysLogRotationOntoAFullDiskLosesNothingAndResumes) {
  SmallFileSystem small(16 << 20, SmallFileSystem::Kind::kExt4);
  SKIP_UNLESS_DIRECT_IO(small);
  // Every log moves to a new file every 256 KiB (with the commit log, its
  // checkpoints sync the shard logs and remove its old files on the way).
  FillThenResume(small, KAlwaysOptions(256 << 10), 1000);
}

TEST_P(DiskFullDirectIoTest, KAlwaysPutBatchLargerThanTheRoomLeftAppliesNothing) {
  // A log per shard: 5 MB on 8 MiB. The commit log: 20 MB on 16 MiB (the
  // shard logs' reserved space takes part of it, the commit log fails to
  // reserve the rest).
  const bool commit_log = GetParam();
  SmallFileSystem small(commit_log ? 16 << 20 : 8 << 20, SmallFileSystem::Kind::kExt4);
  SKIP_UNLESS_DIRECT_IO(small);
  BatchLargerThanTheRoomLeftAppliesNothing(small, KAlwaysOptions(64 << 20),
                                           commit_log ? 40000 : 10000);
}

INSTANTIATE_TEST_SUITE_P(Logs, DiskFullDirectIoTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "CommitLog" : "LogPerShard";
                         });

// ---- Without root: reservations fail on the fault-injecting file system ----

// Every reservation fails from the `n`th on (persistently), as on a disk
// that filled up; then the faults clear, as when room is made.
TEST(ReserveFailureTest, PutsFailWithResourceExhaustedUntilThereIsRoomAndLoseNothing) {
  test::TempDir dir;
  const std::string path = dir.Sub("db");
  const Options options = SmallOptions(256 << 10);
  test::VectorMap model;
  for (const uint64_t n : {1u, 2u, 5u}) {
    test::FaultInjectionFileSystem fs;
    {
      ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, path, &fs));
      const uint64_t first = model.empty() ? 0 : model.rbegin()->first + 1;
      fs.FailNth(test::FsOp::kReserve, n, /*persistent=*/true,
                 absl::StatusCode::kResourceExhausted);
      uint64_t failed_id = 0;
      absl::Status s = PutUntilFailure(*db, first, &model, &failed_id);
      EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
      EXPECT_EQ(model.size(), first + n - 1);  // each Put reserves once
      ExpectAbsent(*db, failed_id);
      EXPECT_TRUE(absl::IsResourceExhausted(PutNew(*db, failed_id, 1, &model)));  // still full
      fs.ClearFaults();
      ASSERT_OK(PutNew(*db, failed_id, 2000, &model));  // past a rotation
      EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
      ASSERT_OK(db->Close());
    }
    ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, path, &fs));
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model)) << "n " << n;
    ASSERT_OK(db->Close());
  }
}

}  // namespace
}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// Recovery through the public API after simulated crashes: logs cut at every
// byte of their last record, bytes flipped in the middle, missing files, and
// real kill -9 of a writing child process.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/temp_dir.h"
#include "wal/wal_format.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr uint32_t kDim = 8;

Options OneShard(FsyncPolicy policy = FsyncPolicy::kNever) {
  Options o = test::DefaultOptions(kDim, Metric::kL2, /*shard_count=*/1);
  o.fsync = policy;
  return o;
}

std::string WalPath(const TempDir& dir, int number = 1) {
  char name[32];
  std::snprintf(name, sizeof(name), "wal-%06d.log", number);
  return dir.path() + "/default/shard-0/" + name;
}

std::string ReadAll(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

void WriteAll(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

// Puts ids 1..20 (RandomVector(kDim, id)) one at a time into a new database
// in `dir`, then closes it.
void PutOneToTwenty(const Options& o, const TempDir& dir) {
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  for (uint64_t id = 1; id <= 20; ++id) ASSERT_OK(db->Put(id, test::RandomVector(kDim, id)));
  ASSERT_OK(db->Close());
}

// A database of a few records per log file, without log file `number`.
void ExpectDataLossWithoutLogFile(int number) {
  TempDir dir;
  Options o = OneShard();
  o.wal_file_bytes = 256;  // a few records per file
  ASSERT_NO_FATAL_FAILURE(PutOneToTwenty(o, dir));
  ASSERT_TRUE(fs::exists(WalPath(dir, 3)));
  fs::remove(WalPath(dir, number));
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kDataLoss);
}

TEST(RecoveryTest, LogCutAtEveryByteOfItsLastRecordKeepsEveryEarlierWrite) {
  TempDir dir;
  const std::vector<float> first = test::RandomVector(kDim, 1);
  const std::vector<float> last = test::RandomVector(kDim, 2);
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(OneShard(), dir.path()));
    ASSERT_OK(db->Put(1, first));
    ASSERT_OK(db->Delete(7));
    ASSERT_OK(db->Close());
  }
  const size_t before = fs::file_size(WalPath(dir));
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(OneShard(), dir.path()));
    ASSERT_OK(db->Put(2, last));
    ASSERT_OK(db->Close());
  }
  const std::string full = ReadAll(WalPath(dir));
  ASSERT_GT(full.size(), before);
  // The clean Close ended the file with a sync mark (40 bytes) after the put.
  constexpr size_t kMarkBytes = 40;
  ASSERT_EQ(static_cast<uint8_t>(full[full.size() - kMarkBytes + 12]), wal::kSyncMarkType);
  const size_t put_end = full.size() - kMarkBytes;

  for (size_t cut = before; cut <= full.size(); ++cut) {
    WriteAll(WalPath(dir), full.substr(0, cut));
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(OneShard(), dir.path()));
    ASSERT_OK_AND_ASSIGN(std::vector<float> got, db->Get(1));
    EXPECT_TRUE(test::VectorsNear(got, first)) << "cut at " << cut;
    EXPECT_STATUS_CODE(db->Get(7), absl::StatusCode::kNotFound);
    if (cut >= put_end) {
      ASSERT_OK_AND_ASSIGN(std::vector<float> got2, db->Get(2));
      EXPECT_TRUE(test::VectorsNear(got2, last));
    } else {
      EXPECT_STATUS_CODE(db->Get(2), absl::StatusCode::kNotFound) << "cut at " << cut;
    }
    // The log stays writable after the torn tail is dropped.
    ASSERT_OK(db->Put(3, last)) << "cut at " << cut;
    ASSERT_OK(db->Close());
    ASSERT_OK_AND_ASSIGN(auto again, DB::Open(OneShard(), dir.path()));
    EXPECT_OK(again->Get(3)) << "cut at " << cut;
    EXPECT_OK(again->Get(1)) << "cut at " << cut;
    ASSERT_OK(again->Close());
  }
}

// Writes three separate records, then flips a byte in the first one.
class CorruptLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(OneShard(), dir_.path()));
    for (uint64_t id = 1; id <= 3; ++id) ASSERT_OK(db->Put(id, test::RandomVector(kDim, id)));
    ASSERT_OK(db->Close());
    std::string bytes = ReadAll(WalPath(dir_));
    bytes[32 + 32 + 12] ^= 0x10;  // inside the first record's payload
    WriteAll(WalPath(dir_), bytes);
  }
  TempDir dir_;
};

TEST_F(CorruptLogTest, FlippedByteInTheMiddleIsDataLossNamingFileAndOffset) {
  auto db = DB::Open(OneShard(), dir_.path());
  ASSERT_STATUS_CODE(db, absl::StatusCode::kDataLoss);
  const std::string message(db.status().message());
  EXPECT_NE(message.find("wal-000001.log"), std::string::npos) << message;
  EXPECT_NE(message.find("offset 32"), std::string::npos) << message;
  // Nothing was changed: the same error again.
  EXPECT_STATUS_CODE(DB::Open(OneShard(), dir_.path()), absl::StatusCode::kDataLoss);
}

TEST_F(CorruptLogTest, SalvageKeepsThePrefixBeforeTheDamageAndStaysWritable) {
  Options o = OneShard();
  o.salvage_corrupt_wal = true;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir_.path()));
    for (uint64_t id = 1; id <= 3; ++id) {
      EXPECT_STATUS_CODE(db->Get(id), absl::StatusCode::kNotFound);
    }
    ASSERT_OK(db->Put(10, test::RandomVector(kDim, 10)));
    ASSERT_OK(db->Close());
  }
  // Later opens need no salvage.
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(OneShard(), dir_.path()));
  EXPECT_OK(db->Get(10));
}

TEST(RecoveryTest, MissingLogFileInTheMiddleIsDataLoss) { ExpectDataLossWithoutLogFile(2); }

// After a machine crash an earlier log file may show bytes past its last
// record (a recovery's truncation of them did not survive, the kernel wrote
// back pages of an abandoned mapping): when the next file continues the
// sequence exactly, they are stale, not a hole.
TEST(RecoveryTest, StaleBytesAfterAnEarlierFileAreDroppedWhenTheNextFileContinues) {
  TempDir dir;
  Options o = OneShard();
  o.wal_file_bytes = 256;  // a few records per file
  test::VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    for (uint64_t id = 1; id <= 20; ++id) {
      model[id] = test::RandomVector(kDim, id);
      ASSERT_OK(db->Put(id, model[id]));
    }
    ASSERT_OK(db->Close());
  }
  ASSERT_TRUE(fs::exists(WalPath(dir, 3)));
  WriteAll(WalPath(dir, 2), ReadAll(WalPath(dir, 2)) + std::string(40, '\xab'));
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
    ASSERT_OK(db->Put(21, test::RandomVector(kDim, 21)));
    model[21] = test::RandomVector(kDim, 21);
    ASSERT_OK(db->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// An earlier file that lost its last record while the next one holds later
// records is a hole: DataLoss, never a silent skip.
TEST(RecoveryTest, EarlierFileMissingItsLastRecordIsDataLoss) {
  TempDir dir;
  Options o = OneShard();
  o.wal_file_bytes = 256;
  ASSERT_NO_FATAL_FAILURE(PutOneToTwenty(o, dir));
  ASSERT_TRUE(fs::exists(WalPath(dir, 3)));
  const std::string bytes = ReadAll(WalPath(dir, 2));
  // The file ends with the rotation's sync mark (40 bytes): cut into the
  // record before it.
  WriteAll(WalPath(dir, 2), bytes.substr(0, bytes.size() - 40 - 8));
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kDataLoss);
}

// The files of a database that does not open are left as they were: a second
// Open finds the same damage (it once found a file truncated by the first
// and opened without the lost record).
TEST(RecoveryTest, DataLossLeavesTheFilesAsTheyWereForTheNextOpen) {
  TempDir dir;
  Options o = OneShard();
  o.wal_file_bytes = 256;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    ASSERT_OK(db->Put(1, test::RandomVector(kDim, 1)));  // alone in file 1
    std::vector<uint64_t> ids = {2, 3, 4, 5, 6};
    ASSERT_OK(db->PutBatch(ids, test::RandomVectors(ids.size(), kDim, 2)));
    for (uint64_t id = 7; id <= 20; ++id) ASSERT_OK(db->Put(id, test::RandomVector(kDim, id)));
    ASSERT_OK(db->Close());
  }
  ASSERT_TRUE(fs::exists(WalPath(dir, 3)));
  std::string bytes = ReadAll(WalPath(dir, 1));
  // File 1's only record, and the rotation's sync mark after it: a torn tail
  // in file 1 alone, damage only once file 2 shows the hole.
  bytes[bytes.size() - 40 - 20] ^= 0x40;
  bytes[bytes.size() - 40] ^= 0x40;
  WriteAll(WalPath(dir, 1), bytes);
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(ReadAll(WalPath(dir, 1)) == bytes) << "the failed Open changed file 1";
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kDataLoss);
}

// Every file ends with a sync mark (a rotation writes one, and every record
// leaves room for it), so damage in a full, rotated file is found even when
// no later file holds records to show the hole.
TEST(RecoveryTest, DamageInARotatedFileIsDataLossEvenWithNothingAfterIt) {
  TempDir dir;
  Options o = OneShard();
  o.wal_file_bytes = 256;  // three puts would fill a file exactly, without the mark
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    for (uint64_t id = 1; id <= 3; ++id) ASSERT_OK(db->Put(id, test::RandomVector(kDim, id)));
    ASSERT_OK(db->Close());
  }
  ASSERT_TRUE(fs::exists(WalPath(dir, 2)));
  std::string bytes = ReadAll(WalPath(dir, 1));
  bytes[32 + 32 + 3] ^= 0x40;  // the first put's payload
  WriteAll(WalPath(dir, 1), bytes);
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kDataLoss);
}

// A salvage can cut the log below a bulk load's barrier; the log then goes
// on from the bulk segment's sequence, and later Opens accept that.
TEST(RecoveryTest, LogGoingOnFromABulkSegmentAfterASalvageOpensCleanly) {
  TempDir dir;
  Options o = OneShard();
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    std::vector<uint64_t> ids = {100, 101, 102};
    ASSERT_OK(db->BulkLoad(kDefaultCollection, ids, test::RandomVectors(3, kDim, 5)));
    ASSERT_OK(db->Put(1, test::RandomVector(kDim, 1)));
    ASSERT_OK(db->Close());
  }
  // The barrier is the first record of the last log file: damage it.
  int last = 1;
  while (fs::exists(WalPath(dir, last + 1))) ++last;
  std::string bytes = ReadAll(WalPath(dir, last));
  bytes[32 + 20] ^= 0x40;  // the barrier's sequence field
  WriteAll(WalPath(dir, last), bytes);
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), absl::StatusCode::kDataLoss);
  Options salvage = o;
  salvage.salvage_corrupt_wal = true;
  const std::vector<float> later = test::RandomVector(kDim, 10);
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(salvage, dir.path()));
    EXPECT_OK(db->Get(100));
    ASSERT_OK(db->Put(10, later));
    ASSERT_OK(db->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db->Get(10));
  EXPECT_TRUE(test::VectorsNear(got, later));
  EXPECT_OK(db->Get(100));
}

// Nothing flushed yet, so the first log file holds sequence 1: without it the
// log starts in the middle.
TEST(RecoveryTest, MissingFirstLogFileIsDataLoss) { ExpectDataLossWithoutLogFile(1); }

// A file header of zeros is what a crash leaves of a file created but never
// synced, and then no record follows it (the writer syncs the header before
// the first record): zeros followed by records are damage.
TEST(RecoveryTest, ZeroedFileHeaderBeforeRecordsIsDataLoss) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(PutOneToTwenty(OneShard(), dir));
  std::string bytes = ReadAll(WalPath(dir));
  std::fill(bytes.begin(), bytes.begin() + 32, '\0');
  WriteAll(WalPath(dir), bytes);
  EXPECT_STATUS_CODE(DB::Open(OneShard(), dir.path()), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(ReadAll(WalPath(dir)) == bytes) << "the failed Open changed the file";
}

TEST(RecoveryTest, ManyLogFilesReplayInOrder) {
  TempDir dir;
  Options o = OneShard();
  o.wal_file_bytes = 512;
  test::VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    for (uint64_t i = 0; i < 200; ++i) {
      const uint64_t id = i % 37;  // overwrites across files
      model[id] = test::RandomVector(kDim, i);
      ASSERT_OK(db->Put(id, model[id]));
      if (i % 11 == 0) {
        ASSERT_OK(db->Delete(id));
        model.erase(id);
      }
    }
    ASSERT_OK(db->Close());
  }
  ASSERT_TRUE(fs::exists(WalPath(dir, 5)));
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(RecoveryTest, DamagedManifestIsDataLoss) {
  TempDir dir;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(OneShard(), dir.path()));
    ASSERT_OK(db->Close());
  }
  std::string bytes = ReadAll(dir.path() + "/MANIFEST");
  bytes[bytes.size() / 2] ^= 1;
  WriteAll(dir.path() + "/MANIFEST", bytes);
  EXPECT_STATUS_CODE(DB::Open(OneShard(), dir.path()), absl::StatusCode::kDataLoss);
}

TEST(RecoveryTest, DirectoryWithForeignFilesIsRefused) {
  TempDir dir;
  WriteAll(dir.path() + "/notes.txt", "mine");
  EXPECT_STATUS_CODE(DB::Open(OneShard(), dir.path()),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadAll(dir.path() + "/notes.txt"), "mine");
}

// One operation of the kill loop, as the child reports it to the parent.
struct LoopOp {
  uint64_t acked;  // 0: about to run; 1: returned OK
  uint64_t kind;   // 0 put, 1 delete, 2 batch of three
  uint64_t id;
  uint64_t seed;
};

// Applies `op` to `model`; returns the ids it touches.
std::vector<uint64_t> ApplyOp(const LoopOp& op, test::VectorMap* model) {
  if (op.kind == 0) {
    (*model)[op.id] = test::RandomVector(kDim, op.seed);
    return {op.id};
  }
  if (op.kind == 1) {
    model->erase(op.id);
    return {op.id};
  }
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < 3; ++i) {
    ids.push_back((op.id + i) % 64);
    (*model)[ids.back()] = test::RandomVector(kDim, op.seed + i);
  }
  return ids;
}

absl::Status RunOp(DB& db, const LoopOp& op) {
  if (op.kind == 0) return db.Put(op.id, test::RandomVector(kDim, op.seed));
  if (op.kind == 1) return db.Delete(op.id);
  std::vector<uint64_t> ids;
  std::vector<float> rows;
  for (uint64_t i = 0; i < 3; ++i) {
    ids.push_back((op.id + i) % 64);
    std::vector<float> v = test::RandomVector(kDim, op.seed + i);
    rows.insert(rows.end(), v.begin(), v.end());
  }
  return db.PutBatch(ids, rows);
}

// A child process writes, telling the parent through a pipe before and after
// each operation; the parent kills it with SIGKILL at a random moment,
// reopens, and checks that every acknowledged operation survived with its
// latest value. The one operation in flight may or may not have happened
// (for a batch: per shard).
void KillLoop(FsyncPolicy policy, int cycles, uint64_t seed,
              TempDir::Storage storage = TempDir::Storage::kMemory) {
  TempDir dir(storage);
  std::mt19937_64 rng(seed);
  test::VectorMap model;  // every acknowledged operation applied
  Options options = test::DefaultOptions(kDim, Metric::kL2, 3);
  options.fsync = policy;
  options.wal_file_bytes = 4096;  // rotations happen during the run
  uint64_t acknowledged = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const uint64_t child_seed = rng();
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      auto db = DB::Open(options, dir.path());
      if (!db.ok()) _exit(3);
      std::mt19937_64 r(child_seed);
      while (true) {
        LoopOp op{0, r() % 3, r() % 64, r()};
        if (write(fds[1], &op, sizeof(op)) != sizeof(op)) _exit(5);
        if (!RunOp(**db, op).ok()) _exit(4);
        op.acked = 1;
        if (write(fds[1], &op, sizeof(op)) != sizeof(op)) _exit(5);
      }
    }
    close(fds[1]);
    std::optional<LoopOp> in_flight;
    LoopOp op;
    size_t got = 0;
    uint64_t acknowledged_now = 0;
    // Reads the child's reports until the pipe ends, or until `until` returns true.
    auto read_reports = [&](const std::function<bool()>& until) {
      while (!until()) {
        ssize_t n = read(fds[0], reinterpret_cast<char*>(&op) + got, sizeof(op) - got);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
        if (got < sizeof(op)) continue;
        got = 0;
        if (op.acked) {
          ApplyOp(op, &model);
          ++acknowledged;
          ++acknowledged_now;
          in_flight.reset();
        } else {
          in_flight = op;
        }
      }
    };
    // The kill lands a random while after the child's first acknowledged
    // write (its Open done): on a loaded disk under kAlways a fixed delay
    // could end before any write, and the loop would prove nothing.
    read_reports([&] { return acknowledged_now > 0; });
    usleep(2000 + rng() % 30000);
    kill(pid, SIGKILL);
    read_reports([] { return false; });
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);

    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
    test::VectorMap with_in_flight = model;
    std::vector<uint64_t> uncertain;
    if (in_flight.has_value()) uncertain = ApplyOp(*in_flight, &with_in_flight);
    for (uint64_t id = 0; id < 64; ++id) {
      absl::StatusOr<std::vector<float>> got_vec = db->Get(id);
      auto matches = [&](const test::VectorMap& m) {
        auto it = m.find(id);
        if (it == m.end()) return got_vec.status().code() == absl::StatusCode::kNotFound;
        return got_vec.ok() && *got_vec == it->second;
      };
      const bool is_uncertain =
          std::find(uncertain.begin(), uncertain.end(), id) != uncertain.end();
      ASSERT_TRUE(matches(model) || (is_uncertain && matches(with_in_flight)))
          << "cycle " << cycle << " id " << id << ": " << got_vec.status();
    }
    // The in-flight operation's outcome is now fixed: adopt what the DB has.
    for (uint64_t id : uncertain) {
      absl::StatusOr<std::vector<float>> v = db->Get(id);
      if (v.ok()) {
        model[id] = *v;
      } else {
        model.erase(id);
      }
    }
    ASSERT_OK(db->Close());
  }
  // The loop only proves something if the children got work done: each
  // was killed after at least one acknowledged write.
  EXPECT_GE(acknowledged, static_cast<uint64_t>(cycles));
}

TEST(KillTest, KillNineLosesNoAcknowledgedWriteUnderKNever) {
  KillLoop(FsyncPolicy::kNever, 8, 1);
}

TEST(KillTest, KillNineLosesNoAcknowledgedWriteUnderKAlways) {
  KillLoop(FsyncPolicy::kAlways, 4, 2);
}

// On a disk the kAlways log is written with direct I/O: appended records sit
// in memory until their sync, and a killed process loses them (unacknowledged).
TEST(KillTest, KillNineLosesNoAcknowledgedWriteUnderKAlwaysOnDisk) {
  KillLoop(FsyncPolicy::kAlways, 6, 4, TempDir::Storage::kDisk);
}

TEST(KillTest, KillNineLosesNoAcknowledgedWriteUnderKInterval) {
  KillLoop(FsyncPolicy::kInterval, 4, 3);
}

}  // namespace
}  // namespace shoal

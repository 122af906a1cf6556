// Copyright 2026 The shoal Authors.
//
// The collection commit log (Options::collection_commit_log, kAlways): a
// power cut loses the unsynced part of the shard logs, and Open takes it back
// from the commit log; damage to the commit log is DataLossError; checkpoints
// and Close retire its files only once the shard logs are durable.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "db/inspect.h"
#include "gtest/gtest.h"
#include "testutil/fault_injection_fs.h"
#include "testutil/temp_dir.h"
#include "util/coding.h"
#include "util/hash.h"

namespace shoal::test {
namespace {

namespace stdfs = std::filesystem;

constexpr uint32_t kDim = 16;

Options CommitLogOptions(size_t wal_file_bytes = 1 << 20) {
  Options o = DefaultOptions(kDim, Metric::kL2, /*shard_count=*/2);
  o.fsync = FsyncPolicy::kAlways;
  o.collection_commit_log = true;
  o.wal_file_bytes = wal_file_bytes;
  return o;
}

std::string CommitDir(const TempDir& dir) { return dir.path() + "/default/commit"; }

// Log files (wal-*.log) in `path`, sorted.
std::vector<std::string> LogFiles(const std::string& path) {
  std::vector<std::string> names;
  if (!stdfs::exists(path)) return names;
  for (const auto& e : stdfs::directory_iterator(path)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("wal-") && name.ends_with(".log")) names.push_back(e.path().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Non-zero bytes in the shard logs of the default collection (their files
// are reserved ahead, so their sizes say little).
uintmax_t ShardLogBytes(const TempDir& dir) {
  uintmax_t total = 0;
  for (int s = 0; s < 2; ++s) {
    for (const std::string& f : LogFiles(dir.path() + "/default/shard-" + std::to_string(s))) {
      std::ifstream in(f, std::ios::binary);
      for (char c; in.get(c);) total += c != 0;
    }
  }
  return total;
}

// Puts ids [first, first + n) through `db`, each acknowledged, into `model`.
void PutRange(DB& db, uint64_t first, uint64_t n, VectorMap* model) {
  for (uint64_t id = first; id < first + n; ++id) {
    std::vector<float> v = RandomVector(kDim, id * 7 + 1);
    ASSERT_OK(db.Put(id, v));
    (*model)[id] = v;
  }
}

// Opens on `fs`, puts `n` vectors (and deletes every tenth), then cuts the
// power without closing: the shard logs keep only what was synced.
void WriteThenCutPower(FaultInjectionFileSystem& fs, const Options& options,
                       const TempDir& dir, uint64_t n, VectorMap* model) {
  ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, dir.path(), &fs));
  PutRange(*db, 0, n, model);
  for (uint64_t id = 0; id < n; id += 10) {
    ASSERT_OK(db->Delete(id));
    model->erase(id);
  }
  fs.PowerOff();
  db.reset();
  ASSERT_OK(fs.DropUnsyncedData());
}

TEST(CommitLogTest, PowerCutKeepsAcknowledgedWritesThatOnlyTheCommitLogHolds) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  VectorMap model;
  WriteThenCutPower(fs, CommitLogOptions(), dir, 300, &model);
  // The shard logs lost their records (nothing synced them): what comes
  // back comes from the commit log.
  const uintmax_t shard_log_bytes = ShardLogBytes(dir);
  EXPECT_LT(shard_log_bytes, 300u * kDim * 4);
  ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(CommitLogOptions(), dir.path(), &fs));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  // Open appended them to the shard logs and started a new commit log file.
  EXPECT_GT(ShardLogBytes(dir), shard_log_bytes + 300u * kDim * 4);
  EXPECT_EQ(LogFiles(CommitDir(dir)).size(), 1u);
  // A second cut right after the reopen loses nothing either: Open made
  // what it took from the commit log durable before removing it.
  fs.PowerOff();
  db.reset();
  ASSERT_OK(fs.DropUnsyncedData());
  ASSERT_OK_AND_ASSIGN(db, test::OpenOnFileSystem(CommitLogOptions(), dir.path(), &fs));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  PutRange(*db, 1000, 10, &model);
  ASSERT_OK(db->Close());
}

TEST(CommitLogTest, OpenUnderAnotherPolicyStillReplaysTheCommitLog) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  VectorMap model;
  WriteThenCutPower(fs, CommitLogOptions(), dir, 100, &model);
  Options never = CommitLogOptions();
  never.fsync = FsyncPolicy::kNever;
  {
    ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(never, dir.path(), &fs));
    EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
    ASSERT_OK(db->Close());
  }
  EXPECT_TRUE(LogFiles(CommitDir(dir)).empty());
  Options per_shard = CommitLogOptions();
  per_shard.collection_commit_log = false;
  ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(per_shard, dir.path(), &fs));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

// Flips a byte inside the commit log's first record: later sync marks prove
// the bytes durable, so this is damage, not a torn sync.
void DamageFirstCommitRecord(const TempDir& dir) {
  const std::vector<std::string> files = LogFiles(CommitDir(dir));
  ASSERT_EQ(files.size(), 1u);
  std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(32 + 32 + 8 + 32 + 40);  // file header, record header, prefix, shard header, a float
  char c;
  f.seekg(f.tellp());
  f.get(c);
  f.seekp(32 + 32 + 8 + 32 + 40);
  f.put(static_cast<char>(c ^ 0x5a));
}

TEST(CommitLogTest, DamagedCommitLogIsDataLossNamingItAndSalvageKeepsThePrefix) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  VectorMap model;
  WriteThenCutPower(fs, CommitLogOptions(), dir, 50, &model);
  {
    ASSERT_OK_AND_ASSIGN(VerifyReport before, VerifyDatabase(&fs, dir.path()));
    EXPECT_TRUE(before.ok());
  }
  DamageFirstCommitRecord(dir);
  {
    // `shoal verify` reads the commit log too.
    ASSERT_OK_AND_ASSIGN(VerifyReport report, VerifyDatabase(&fs, dir.path()));
    EXPECT_FALSE(report.ok());
  }
  absl::StatusOr<std::unique_ptr<DB>> db =
      test::OpenOnFileSystem(CommitLogOptions(), dir.path(), &fs);
  ASSERT_EQ(db.status().code(), absl::StatusCode::kDataLoss) << db.status();
  EXPECT_NE(db.status().message().find("commit log"), std::string::npos) << db.status();
  EXPECT_NE(db.status().message().find("wal-000001.log"), std::string::npos) << db.status();
  EXPECT_EQ(LogFiles(CommitDir(dir)).size(), 1u);  // left for the next Open

  Options salvage = CommitLogOptions();
  salvage.salvage_corrupt_wal = true;
  db = test::OpenOnFileSystem(salvage, dir.path(), &fs);
  ASSERT_OK(db.status());
  // The damaged record was the first: nothing after it can be replayed.
  EXPECT_TRUE(absl::IsNotFound((*db)->Get(1).status()));
  VectorMap fresh;
  PutRange(**db, 5000, 10, &fresh);
  ASSERT_OK((*db)->Close());
}

// Damage to a shard's log older than the commit log (written before a clean
// Close): without salvage DataLossError; with it, the shard log is cut at
// the damage and the commit log's records for that shard, which can no
// longer follow it, are dropped too; the database opens, then also without
// salvage.
// A commit log record, checksum intact, naming shard 7 of a 2-shard
// collection: DataLossError, not a write into nowhere.
TEST(CommitLogTest, RecordNamingAShardTheCollectionLacksIsDataLoss) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  VectorMap model;
  WriteThenCutPower(fs, CommitLogOptions(), dir, 20, &model);
  const std::vector<std::string> files = LogFiles(CommitDir(dir));
  ASSERT_EQ(files.size(), 1u);
  std::string bytes;
  {
    std::ifstream in(files[0], std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  char* record = bytes.data() + 32;  // the first record, after the file header
  EncodeFixed32(record + 32, 7);     // its payload starts with the shard
  EncodeFixed64(record, Checksum64(record + 8, 24 + DecodeFixed32(record + 8)));
  std::ofstream(files[0], std::ios::binary) << bytes;
  absl::StatusOr<std::unique_ptr<DB>> db =
      test::OpenOnFileSystem(CommitLogOptions(), dir.path(), &fs);
  ASSERT_EQ(db.status().code(), absl::StatusCode::kDataLoss) << db.status();
  EXPECT_NE(db.status().message().find("names shard 7"), std::string::npos) << db.status();
}

TEST(CommitLogTest, SalvageOfAShardLogOlderThanTheCommitLogOpens) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(CommitLogOptions(), dir.path(), &fs));
    PutRange(*db, 0, 100, &model);
    ASSERT_OK(db->Close());
  }
  WriteThenCutPower(fs, CommitLogOptions(), dir, 50, &model);
  const std::vector<std::string> files = LogFiles(dir.path() + "/default/shard-0");
  ASSERT_FALSE(files.empty());
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(32 + 32 + 8 + 4);  // inside the first record's first float
    f.put('\x7f');
  }
  absl::StatusOr<std::unique_ptr<DB>> db =
      test::OpenOnFileSystem(CommitLogOptions(), dir.path(), &fs);
  ASSERT_EQ(db.status().code(), absl::StatusCode::kDataLoss) << db.status();
  Options salvage = CommitLogOptions();
  salvage.salvage_corrupt_wal = true;
  db = test::OpenOnFileSystem(salvage, dir.path(), &fs);
  ASSERT_OK(db.status());
  VectorMap more;
  PutRange(**db, 5000, 10, &more);
  ASSERT_OK((*db)->Close());
  db = test::OpenOnFileSystem(CommitLogOptions(), dir.path(), &fs);
  ASSERT_OK(db.status());
  for (const auto& [id, v] : more) {
    ASSERT_OK_AND_ASSIGN(std::vector<float> got, (*db)->Get(id));
    EXPECT_EQ(got, v);
  }
}

TEST(CommitLogTest, CheckpointsRetireFilesOnlyOnceTheShardLogsAreDurable) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  VectorMap model;
  // 64 KiB files: the commit log moves on every ~100 puts, and each move's
  // checkpoint syncs the shard logs and removes the older files.
  const Options options = CommitLogOptions(64 << 10);
  {
    ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, dir.path(), &fs));
    PutRange(*db, 0, 2000, &model);
    EXPECT_LE(LogFiles(CommitDir(dir)).size(), 2u);
    fs.PowerOff();
  }
  ASSERT_OK(fs.DropUnsyncedData());
  ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, dir.path(), &fs));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(CommitLogTest, CloseRetiresTheCommitLog) {
  TempDir dir;
  VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(CommitLogOptions(), dir.path()));
    PutRange(*db, 0, 100, &model);
    EXPECT_EQ(LogFiles(CommitDir(dir)).size(), 1u);
    ASSERT_OK(db->Close());
  }
  EXPECT_TRUE(LogFiles(CommitDir(dir)).empty());
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(CommitLogOptions(), dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

}  // namespace
}  // namespace shoal::test

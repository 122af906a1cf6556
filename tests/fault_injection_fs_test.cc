// Copyright 2026 The shoal Authors.
//
// Pins the behaviour of the fault-injecting file system
// (testutil/fault_injection_fs.h): which operations fail and how, what a
// power loss keeps of files, mappings and directory entries. The crash and
// I/O-error suites are only as good as these behaviours.

#include "testutil/fault_injection_fs.h"

#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

namespace stdfs = std::filesystem;

class FaultFsTest : public ::testing::Test {
 protected:
  std::string P(const std::string& name) const { return dir_.Sub(name); }
  std::string Read(const std::string& name) {
    absl::StatusOr<std::string> s = FileSystem::Default()->ReadFile(P(name));
    return s.ok() ? *s : "<absent>";
  }
  // Writes `content` to `name` through `fs` (create, append, optionally sync).
  void Write(const std::string& name, const std::string& content, bool sync) {
    ASSERT_OK_AND_ASSIGN(auto file, fs_.NewWritableFile(P(name)));
    ASSERT_OK(file->Append(content));
    if (sync) {
      ASSERT_OK(file->Sync());
    }
    ASSERT_OK(file->Close());
  }
  TempDir dir_;
  FaultInjectionFileSystem fs_;
};

// ---- Injected errors ----

TEST_F(FaultFsTest, FailNthFailsExactlyTheNthOperationOfItsKind) {
  fs_.FailNth(FsOp::kWrite, 2);
  ASSERT_OK_AND_ASSIGN(auto file, fs_.NewWritableFile(P("f")));
  EXPECT_OK(file->Append("a"));
  absl::Status s = file->Append("b");
  EXPECT_STATUS_CODE(s, absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("injected"), absl::string_view::npos) << s;
  EXPECT_OK(file->Append("c"));
  EXPECT_OK(file->Close());
  EXPECT_EQ(Read("f"), "ac");  // the failed append had no effect
  EXPECT_EQ(fs_.faults_injected(), 1u);
  EXPECT_EQ(fs_.op_count(FsOp::kWrite), 3u);
}

TEST_F(FaultFsTest, PersistentFaultFailsEveryOperationFromTheNth) {
  fs_.FailNth(FsOp::kSync, 2, /*persistent=*/true);
  ASSERT_OK_AND_ASSIGN(auto file, fs_.NewWritableFile(P("f")));
  EXPECT_OK(file->Sync());
  for (int i = 0; i < 5; ++i) EXPECT_STATUS_CODE(file->Sync(), absl::StatusCode::kInternal);
  EXPECT_STATUS_CODE(fs_.SyncDir(dir_.path()), absl::StatusCode::kInternal);
  EXPECT_EQ(fs_.faults_injected(), 6u);
  fs_.ClearFaults();
  EXPECT_OK(file->Sync());
}

TEST_F(FaultFsTest, AnyCountsEveryKindAndTheCodeIsChosen) {
  fs_.FailNth(FsOp::kAny, 3, false, absl::StatusCode::kResourceExhausted);
  EXPECT_OK(fs_.CreateDir(P("d")));                  // 1: mkdir
  EXPECT_OK(fs_.ListDir(P("d")));                    // 2: read
  EXPECT_STATUS_CODE(fs_.NewWritableFile(P("d/f")),  // 3: open
                     absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(stdfs::exists(P("d/f")));
  EXPECT_OK(fs_.NewWritableFile(P("d/f")));
}

TEST_F(FaultFsTest, EveryKindCanBeFailed) {
  Write("a", "x", true);
  ASSERT_OK(fs_.CreateDir(P("sub")));
  struct Case {
    FsOp op;
    std::function<absl::Status()> call;
  };
  const std::vector<Case> cases = {
      {FsOp::kOpen, [&] { return fs_.NewWritableFile(P("b")).status(); }},
      {FsOp::kRead, [&] { return fs_.ReadFile(P("a")).status(); }},
      {FsOp::kRename, [&] { return fs_.Rename(P("a"), P("c")); }},
      {FsOp::kRemove, [&] { return fs_.RemoveFile(P("a")); }},
      {FsOp::kRemove, [&] { return fs_.RemoveDirRecursive(P("sub")); }},
      {FsOp::kTruncate, [&] { return fs_.Truncate(P("a"), 0); }},
      {FsOp::kMkdir, [&] { return fs_.CreateDir(P("sub2")); }},
      {FsOp::kSync, [&] { return fs_.SyncDir(dir_.path()); }},
      {FsOp::kLock, [&] { return fs_.LockFile(P("LOCK")).status(); }},
      {FsOp::kMmap, [&] { return fs_.OpenMapped(P("m"), 4096, false).status(); }},
      {FsOp::kMmap, [&] { return fs_.OpenReadOnlyMapped(P("a")).status(); }},
  };
  for (const Case& c : cases) {
    fs_.FailNth(c.op, 1);
    EXPECT_STATUS_CODE(c.call(), absl::StatusCode::kInternal) << FsOpName(c.op);
    fs_.ClearFaults();
  }
  // None of them had an effect.
  EXPECT_EQ(Read("a"), "x");
  EXPECT_FALSE(stdfs::exists(P("b")));
  EXPECT_FALSE(stdfs::exists(P("c")));
  EXPECT_TRUE(stdfs::exists(P("sub")));
  EXPECT_FALSE(stdfs::exists(P("sub2")));
  EXPECT_FALSE(stdfs::exists(P("m")));
  EXPECT_FALSE(stdfs::exists(P("LOCK")));
}

TEST_F(FaultFsTest, MappedReserveSyncAndCloseAndTruncateCanFail) {
  ASSERT_OK_AND_ASSIGN(auto file, fs_.OpenMapped(P("m"), 4096, false));
  fs_.FailNth(FsOp::kReserve, 1, false, absl::StatusCode::kResourceExhausted);
  EXPECT_STATUS_CODE(file->Reserve(4096), absl::StatusCode::kResourceExhausted);
  ASSERT_OK(file->Reserve(4096));
  std::memcpy(file->data(), "hello", 5);
  fs_.FailNth(FsOp::kSync, 1);
  EXPECT_STATUS_CODE(file->Sync(), absl::StatusCode::kInternal);
  fs_.FailNth(FsOp::kTruncate, 1);
  EXPECT_STATUS_CODE(file->CloseAndTruncate(5), absl::StatusCode::kInternal);
  EXPECT_EQ(stdfs::file_size(P("m")), 4096u);  // not truncated
  // Closed all the same, as a real one: later calls are refused.
  EXPECT_STATUS_CODE(file->Sync(), absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(file->SyncPrefix(5), absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(file->CloseAndTruncate(5), absl::StatusCode::kFailedPrecondition);
}

TEST_F(FaultFsTest, TornWriteStoresAPrefixThenFails) {
  fs_.TearNthWrite(2, 3);
  ASSERT_OK_AND_ASSIGN(auto file, fs_.NewWritableFile(P("f")));
  EXPECT_OK(file->Append("0123"));
  EXPECT_STATUS_CODE(file->Append("abcdef"), absl::StatusCode::kInternal);
  EXPECT_OK(file->Close());
  EXPECT_EQ(Read("f"), "0123abc");
}

// ---- Power loss: file data ----

TEST_F(FaultFsTest, UnsyncedAppendsAreDroppedSyncedOnesKept) {
  Write("f", "", false);
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK_AND_ASSIGN(auto file, fs_.NewWritableFile(P("f")));
  ASSERT_OK(file->Append("synced"));
  ASSERT_OK(file->Sync());
  ASSERT_OK(file->Append("+lost"));
  ASSERT_OK(file->Close());
  file.reset();
  EXPECT_EQ(Read("f"), "synced+lost");  // a process sees everything
  EXPECT_EQ(fs_.UnsyncedFileCount(), 1u);
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("f"), "synced");
}

TEST_F(FaultFsTest, FilesNotWrittenSinceThePowerLossAreDurableAsTheyAre) {
  Write("f", "one", false);
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("f"), "");  // created durably, content never synced
  Write("g", "two", true);
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.DropUnsyncedData());
  ASSERT_OK(fs_.DropUnsyncedData());  // nothing happened in between: no change
  EXPECT_EQ(Read("g"), "two");
}

TEST_F(FaultFsTest, MappedStoresNeedSyncToSurvive) {
  {
    ASSERT_OK_AND_ASSIGN(auto file, fs_.OpenMapped(P("m"), 4096, false));
    std::memcpy(file->data(), "head", 4);
    ASSERT_OK(file->Sync());
    ASSERT_OK(fs_.SyncDir(dir_.path()));
    std::memcpy(file->data() + 4, "tail", 4);
    ASSERT_OK(file->CloseAndTruncate(8));
  }
  EXPECT_EQ(Read("m"), "headtail");
  ASSERT_OK(fs_.DropUnsyncedData());
  // Back to the image of the sync: 4096 bytes (the size was synced too).
  const std::string m = Read("m");
  ASSERT_EQ(m.size(), 4096u);
  EXPECT_EQ(m.substr(0, 8), std::string("head\0\0\0\0", 8));
}

TEST_F(FaultFsTest, UnsyncedTruncateIsUndone) {
  Write("f", "abcdef", true);
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.DropUnsyncedData());
  ASSERT_OK(fs_.Truncate(P("f"), 2));
  EXPECT_EQ(Read("f"), "ab");
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("f"), "abcdef");
}

TEST_F(FaultFsTest, KeepRandomPrefixKeepsAPrefixOfTheChangeInOrder) {
  const std::string durable(64, 'd');
  const std::string changed = std::string(16, 'd') + std::string(48, 'n');
  std::set<size_t> kept_lengths;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    Write("f", durable, true);
    ASSERT_OK(fs_.SyncDir(dir_.path()));
    ASSERT_OK(fs_.DropUnsyncedData());
    {
      ASSERT_OK_AND_ASSIGN(auto file, fs_.OpenMapped(P("f"), 64, false));
      std::memcpy(file->data(), changed.data(), 64);
      ASSERT_OK(file->CloseAndTruncate(64));
    }
    FaultInjectionFileSystem::DropOptions options;
    options.keep_random_prefix = true;
    options.seed = seed;
    ASSERT_OK(fs_.DropUnsyncedData(options));
    const std::string got = Read("f");
    ASSERT_EQ(got.size(), 64u);
    // changed[0, k) + durable[k, 64) for some k: never a later byte without
    // the earlier ones.
    const size_t k = got.find('d', 16) == std::string::npos ? 64 : got.find('d', 16);
    EXPECT_EQ(got, changed.substr(0, k) + durable.substr(k)) << "seed " << seed;
    kept_lengths.insert(k);
  }
  EXPECT_GT(kept_lengths.size(), 8u);  // really random
  EXPECT_TRUE(kept_lengths.count(16) || kept_lengths.count(64));
}

TEST_F(FaultFsTest, KeepRandomBlocksKeepsBlocksOfTheChangeInAnyOrder) {
  constexpr size_t kBlock = 4096, kBlocks = 6;
  const std::string durable(kBlock * kBlocks, 'd');
  const std::string changed(kBlock * kBlocks, 'n');
  bool later_without_earlier = false;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    Write("f", durable, true);
    ASSERT_OK(fs_.SyncDir(dir_.path()));
    ASSERT_OK(fs_.DropUnsyncedData());
    {
      ASSERT_OK_AND_ASSIGN(auto file, fs_.OpenMapped(P("f"), durable.size(), false));
      std::memcpy(file->data(), changed.data(), changed.size());
      ASSERT_OK(file->CloseAndTruncate(changed.size()));
    }
    FaultInjectionFileSystem::DropOptions options;
    options.keep_random_blocks = true;
    options.seed = seed;
    ASSERT_OK(fs_.DropUnsyncedData(options));
    const std::string got = Read("f");
    ASSERT_EQ(got.size(), durable.size());
    bool kept_before = true;
    for (size_t b = 0; b < kBlocks; ++b) {
      const std::string block = got.substr(b * kBlock, kBlock);
      // Each block whole: the durable one or the changed one.
      ASSERT_TRUE(block == durable.substr(0, kBlock) || block == changed.substr(0, kBlock))
          << "seed " << seed << " block " << b;
      const bool kept = block[0] == 'n';
      later_without_earlier |= kept && !kept_before;
      kept_before = kept;
    }
  }
  EXPECT_TRUE(later_without_earlier);  // not only prefixes
}

// ---- Power loss: directory entries ----

TEST_F(FaultFsTest, UnsyncedCreationIsUndoneSyncedOneKept) {
  Write("lost", "x", true);  // data synced, directory entry not
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_FALSE(stdfs::exists(P("lost")));

  Write("kept", "y", true);
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  Write("later", "z", true);
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("kept"), "y");
  EXPECT_FALSE(stdfs::exists(P("later")));
}

TEST_F(FaultFsTest, UnsyncedDirectoryCreationTakesItsFilesWithIt) {
  ASSERT_OK(fs_.CreateDir(P("a/b")));
  Write("a/b/f", "data", true);
  ASSERT_OK(fs_.SyncDir(P("a/b")));  // f is in b durably, but b is not in a
  ASSERT_OK(fs_.SyncDir(P("a")));    // b is in a, but a is not in the root
  EXPECT_EQ(fs_.UnsyncedDirOpCount(), 1u);
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_FALSE(stdfs::exists(P("a")));

  ASSERT_OK(fs_.CreateDir(P("a/b")));
  Write("a/b/f", "data", true);
  ASSERT_OK(fs_.SyncDir(P("a/b")));
  ASSERT_OK(fs_.SyncDir(P("a")));
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("a/b/f"), "data");
}

TEST_F(FaultFsTest, UnsyncedRenameOverAFileIsUndone) {
  Write("target", "old", true);
  Write("tmp", "new", true);
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.Rename(P("tmp"), P("target")));
  EXPECT_EQ(Read("target"), "new");
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("target"), "old");
  EXPECT_EQ(Read("tmp"), "new");

  ASSERT_OK(fs_.Rename(P("tmp"), P("target")));
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("target"), "new");
  EXPECT_FALSE(stdfs::exists(P("tmp")));
}

TEST_F(FaultFsTest, WriteFileAtomicIsOldOrNewAfterAPowerLossAtAnyOperation) {
  Write("MANIFEST", "old", true);
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.DropUnsyncedData());
  for (uint64_t n = 1;; ++n) {
    fs_.FailNth(FsOp::kAny, n, /*persistent=*/true);  // the machine stops at op n
    absl::Status s = WriteFileAtomic(&fs_, P("MANIFEST"), "new");
    const bool completed = s.ok();
    fs_.ClearFaults();
    ASSERT_OK(fs_.DropUnsyncedData());
    const std::string got = Read("MANIFEST");
    EXPECT_TRUE(got == "old" || got == "new") << "n " << n << ": " << got;
    if (completed) {
      EXPECT_EQ(got, "new");
      break;
    }
    Write("MANIFEST", "old", true);  // reset for the next n
    ASSERT_OK(fs_.SyncDir(dir_.path()));
    ASSERT_OK(fs_.DropUnsyncedData());
  }
}

TEST_F(FaultFsTest, UnsyncedRemovalsAreUndone) {
  ASSERT_OK(fs_.CreateDir(P("tree/sub")));
  Write("tree/sub/f", "deep", true);
  Write("g", "flat", true);
  ASSERT_OK(fs_.SyncDir(P("tree/sub")));
  ASSERT_OK(fs_.SyncDir(P("tree")));
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.RemoveDirRecursive(P("tree")));
  ASSERT_OK(fs_.RemoveFile(P("g")));
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Read("tree/sub/f"), "deep");
  EXPECT_EQ(Read("g"), "flat");

  ASSERT_OK(fs_.RemoveDirRecursive(P("tree")));
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_FALSE(stdfs::exists(P("tree")));
}

// A file removed (or made) in a directory never synced, then the whole
// directory removed durably: nothing is left to undo the file's operation
// in, and the directory stays gone.
TEST_F(FaultFsTest, ADurableRemovalOfADirectoryMootsThePendingOperationsInIt) {
  ASSERT_OK(fs_.CreateDir(P("tree/sub")));
  Write("tree/sub/f", "deep", true);
  ASSERT_OK(fs_.SyncDir(P("tree/sub")));
  ASSERT_OK(fs_.SyncDir(P("tree")));
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.RemoveFile(P("tree/sub/f")));  // tree/sub never synced after
  Write("tree/sub/g", "new", true);
  ASSERT_OK(fs_.Rename(P("tree/sub/g"), P("tree/sub/h")));
  ASSERT_OK(fs_.RemoveDirRecursive(P("tree")));
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  ASSERT_OK(fs_.CreateDir(P("tree")));  // after the removal: still undone
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_FALSE(stdfs::exists(P("tree")));
}

// ---- Power off ----

TEST_F(FaultFsTest, AfterPowerOffNothingBecomesDurableAndEveryOperationFails) {
  ASSERT_OK_AND_ASSIGN(auto file, fs_.OpenMapped(P("m"), 4096, false));
  ASSERT_OK(fs_.SyncDir(dir_.path()));
  std::memcpy(file->data(), "before", 6);
  ASSERT_OK(file->Sync());
  std::memcpy(file->data(), "AFTER!", 6);
  fs_.PowerOff();
  EXPECT_STATUS_CODE(file->Sync(), absl::StatusCode::kUnavailable);
  EXPECT_STATUS_CODE(fs_.ReadFile(P("m")), absl::StatusCode::kUnavailable);
  EXPECT_STATUS_CODE(fs_.CreateDir(P("d")), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(stdfs::exists(P("d")));
  // Handles must be gone before the image is restored.
  EXPECT_STATUS_CODE(fs_.DropUnsyncedData(), absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(file->CloseAndTruncate(6), absl::StatusCode::kUnavailable);
  file.reset();
  ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_FALSE(fs_.powered_off());
  EXPECT_EQ(Read("m").substr(0, 6), "before");
  EXPECT_OK(fs_.CreateDir(P("d")));
}

// ---- The engine on this file system ----

constexpr uint32_t kDim = 4;

Options DbOptions(FsyncPolicy policy) {
  Options o = DefaultOptions(kDim, Metric::kL2, /*shard_count=*/2);
  o.fsync = policy;
  o.wal_file_bytes = 4096;  // rotations; small files to copy on sync
  return o;
}

TEST(PowerLossDbTest, CleanCloseLosesNothingAcrossAPowerLoss) {
  for (FsyncPolicy policy : {FsyncPolicy::kNever, FsyncPolicy::kInterval, FsyncPolicy::kAlways}) {
    TempDir dir;
    FaultInjectionFileSystem fs;
    VectorMap model;
    {
      ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(DbOptions(policy), dir.path(), &fs));
      for (uint64_t id = 0; id < 300; ++id) {
        model[id % 97] = RandomVector(kDim, id);
        ASSERT_OK(db->Put(id % 97, model[id % 97]));
      }
      ASSERT_OK(db->Close());
    }
    ASSERT_OK(fs.DropUnsyncedData());
    ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(DbOptions(policy), dir.path(), &fs));
    EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model))
        << "policy " << static_cast<int>(policy);
  }
}

// The database directory does not exist beforehand: Open creates it, and
// its entry (and every directory below) must be durable before a write is
// acknowledged.
void KAlwaysKeepsEveryAcknowledgedWrite(TempDir::Storage storage) {
  TempDir tmp(storage);
  const std::string path = tmp.Sub("db");
  FaultInjectionFileSystem fs;
  VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db,
                         test::OpenOnFileSystem(DbOptions(FsyncPolicy::kAlways), path, &fs));
    for (uint64_t id = 0; id < 200; ++id) {
      model[id] = RandomVector(kDim, id);
      ASSERT_OK(db->Put(id, model[id]));
    }
    ASSERT_OK(db->Delete(5));
    model.erase(5);
    fs.PowerOff();  // the DB is still open: nothing of Close may count
    db.reset();
  }
  ASSERT_OK(fs.DropUnsyncedData());
  ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(DbOptions(FsyncPolicy::kAlways), path, &fs));
  const uint64_t absent[] = {5};
  EXPECT_TRUE(HoldsExactly(*db, kDefaultCollection, Metric::kL2, model, absent));
}

TEST(PowerLossDbTest, KAlwaysKeepsEveryAcknowledgedWriteOfAnOpenDb) {
  // On a disk, the log is written with direct I/O (FileSystem::OpenDirect).
  for (TempDir::Storage storage : {TempDir::Storage::kMemory, TempDir::Storage::kDisk}) {
    SCOPED_TRACE(storage == TempDir::Storage::kDisk ? "disk" : "memory");
    KAlwaysKeepsEveryAcknowledgedWrite(storage);
  }
}

TEST(PowerLossDbTest, KNeverLosesUnsyncedWritesButOpensCleanly) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  {
    ASSERT_OK_AND_ASSIGN(auto db,
                         test::OpenOnFileSystem(DbOptions(FsyncPolicy::kNever), dir.path(), &fs));
    ASSERT_OK(db->Put(1, RandomVector(kDim, 1)));  // first file of its shard, never synced
    fs.PowerOff();
    db.reset();
  }
  ASSERT_OK(fs.DropUnsyncedData());
  ASSERT_OK_AND_ASSIGN(auto db,
                       test::OpenOnFileSystem(DbOptions(FsyncPolicy::kNever), dir.path(), &fs));
  EXPECT_STATUS_CODE(db->Get(1), absl::StatusCode::kNotFound);
  EXPECT_OK(db->Put(2, RandomVector(kDim, 2)));
}

// A bulk load's segment is durable when BulkLoad returns (its manifest edit
// is synced); the barrier record that ranks the log records before it as
// older must be too. Regression: under kNever the barrier sat unsynced in a
// new log file, a power loss dropped it, and recovery let the older Put win
// over the bulk-loaded vector.
TEST(PowerLossDbTest, BulkLoadStaysNewerThanEarlierWritesAfterAPowerLoss) {
  TempDir dir;
  FaultInjectionFileSystem fs;
  Options options = DbOptions(FsyncPolicy::kNever);
  options.default_collection.shard_count = 1;
  const std::vector<float> older = RandomVector(kDim, 1), bulk = RandomVector(kDim, 2);
  {
    ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, dir.path(), &fs));
    ASSERT_OK(db->Put(7, older));
    const uint64_t ids[] = {7, 8};
    std::vector<float> rows = bulk;
    rows.insert(rows.end(), older.begin(), older.end());
    ASSERT_OK(db->BulkLoad(ids, rows));
    fs.PowerOff();
    db.reset();
  }
  ASSERT_OK(fs.DropUnsyncedData());
  ASSERT_OK_AND_ASSIGN(auto db, test::OpenOnFileSystem(options, dir.path(), &fs));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db->Get(7));
  EXPECT_TRUE(VectorsNear(got, bulk));
  EXPECT_OK(db->Get(8));
}

}  // namespace
}  // namespace shoal::test

// Copyright 2026 The shoal Authors.
//
// DB::Checkpoint: the copy opens and holds, record by record (DB::Export on
// both), the source's state at the checkpoint: memtables, segments of a
// shard's own and shared ones (one graph while small), deletes and
// overwrites; segments are hard links on the same file system and copies on
// another; a checkpoint's leftovers are removed and nothing else is; and
// under concurrent PutBatch, Flush and Compact the copy is the state after
// some whole prefix of the batches: every batch acknowledged before the call,
// none begun after it returned, no batch in part.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "shoal/record_iterator.h"
#include "testutil/fault_injection_fs.h"
#include "testutil/sanitized.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

constexpr uint32_t kDim = 8;
constexpr char kName[] = "docs";

using Model = absl::flat_hash_map<uint64_t, std::vector<float>>;

// id -> vector of every live record of `collection`.
Model ExportAll(DB& db, const char* collection) {
  Model out;
  absl::StatusOr<std::unique_ptr<RecordIterator>> it = db.Export(collection);
  EXPECT_OK(it);
  if (!it.ok()) return out;
  for (; (*it)->Valid(); (*it)->Next()) {
    EXPECT_TRUE(out.emplace((*it)->record().id, (*it)->record().vector).second)
        << "id " << (*it)->record().id << " twice";
  }
  EXPECT_OK((*it)->status());
  return out;
}

// The vector written for `id` by write number `version`: exact in float.
std::vector<float> VectorOf(uint64_t id, uint64_t version) {
  std::vector<float> v(kDim);
  for (uint32_t i = 0; i < kDim; ++i) {
    v[i] = static_cast<float>((id * 31 + version * 7 + i) % 1000) * 0.5f;
  }
  return v;
}

// The batches of the concurrent cases: batch b puts K new ids [b K, (b+1) K)
// and overwrites the first K/2 ids of batch b/2, all as version b.
constexpr uint64_t K = 64;
void MakeBatch(uint64_t b, std::vector<uint64_t>* ids, std::vector<float>* rows) {
  ids->clear();
  rows->clear();
  auto add = [&](uint64_t id) {
    ids->push_back(id);
    const std::vector<float> v = VectorOf(id, b);
    rows->insert(rows->end(), v.begin(), v.end());
  };
  for (uint64_t id = b * K; id < (b + 1) * K; ++id) add(id);
  if (b > 0) {
    for (uint64_t id = (b / 2) * K; id < (b / 2) * K + K / 2; ++id) add(id);
  }
}
// How many batches `got` holds (0..c-1), checking that it is exactly the
// state after them: no batch in part, nothing else.
uint64_t ExpectWholeBatches(const Model& got, const std::string& where) {
  uint64_t batches = 0;
  while (got.contains(batches * K)) ++batches;
  Model want;
  std::vector<uint64_t> ids;
  std::vector<float> rows;
  for (uint64_t b = 0; b < batches; ++b) {
    MakeBatch(b, &ids, &rows);
    for (size_t i = 0; i < ids.size(); ++i) {
      want[ids[i]] = std::vector<float>(rows.begin() + i * kDim, rows.begin() + (i + 1) * kDim);
    }
  }
  EXPECT_EQ(got.size(), want.size()) << where;
  size_t wrong = 0;
  for (const auto& [id, v] : want) {
    auto it = got.find(id);
    if (it == got.end() || it->second != v) ++wrong;
  }
  EXPECT_EQ(wrong, 0u) << where << ": of " << want.size() << " records, " << batches
                       << " batches";
  return batches;
}

// (the copy on another file system: tmpfs to disk, fsync policy).
class CheckpointTest
    : public ::testing::TestWithParam<std::tuple<TempDir::Storage, FsyncPolicy>> {
 protected:
  CheckpointTest() : target_(std::get<0>(GetParam())) {}

  Options DbOptions() const {
    Options o = DefaultOptions(0);
    o.fsync = std::get<1>(GetParam());
    o.compaction.automatic = false;  // merges when the test says
    return o;
  }
  void Open(size_t memtable_bytes = 64 << 20, bool automatic = false) {
    Options o = DbOptions();
    o.memtable_bytes = memtable_bytes;
    o.compaction.automatic = automatic;
    ASSERT_OK_AND_ASSIGN(db_, DB::Open(o, source_.path()));
    CollectionOptions co;
    co.dim = kDim;
    co.shard_count = 3;
    ASSERT_OK(db_->CreateCollection(kName, co));
  }
  void PutBatch(uint64_t first, uint64_t count, uint64_t version) {
    std::vector<uint64_t> ids;
    std::vector<float> rows;
    for (uint64_t id = first; id < first + count; ++id) {
      ids.push_back(id);
      const std::vector<float> v = VectorOf(id, version);
      rows.insert(rows.end(), v.begin(), v.end());
    }
    ASSERT_OK(db_->PutBatch(kName, ids, rows));
  }
  std::unique_ptr<DB> OpenCopy() {
    Options o = DbOptions();
    o.create_if_missing = false;
    absl::StatusOr<std::unique_ptr<DB>> copy = DB::Open(o, copy_path());
    EXPECT_OK(copy);
    return copy.ok() ? std::move(copy).value() : nullptr;
  }
  std::string copy_path() const { return target_.Sub("copy"); }

  TempDir source_;
  TempDir target_;
  std::unique_ptr<DB> db_;
};

TEST_P(CheckpointTest, CopyHoldsMemtablesAndSegments) {
  Open();
  PutBatch(1, 300, 0);
  ASSERT_OK(db_->Flush());
  ASSERT_OK(db_->Compact());  // small: one graph for the three shards (shared)
  PutBatch(200, 300, 1);      // overwrites 200..299, adds 300..499
  for (uint64_t id = 10; id < 60; id += 7) ASSERT_OK(db_->Delete(kName, id));
  ASSERT_OK(db_->Flush());    // a segment of each shard's own
  PutBatch(250, 20, 2);       // overwrites in the memtable
  PutBatch(600, 50, 0);       // new in the memtable
  for (uint64_t id = 400; id < 420; id += 3) ASSERT_OK(db_->Delete(kName, id));

  const Model before = ExportAll(*db_, kName);
  ASSERT_EQ(before.size(), 499u + 50 - 8 - 7);
  std::vector<std::pair<uint64_t, uint64_t>> progress;
  CheckpointOptions options;
  options.progress = [&](uint64_t done, uint64_t total) { progress.emplace_back(done, total); };
  ASSERT_OK(db_->Checkpoint(copy_path(), options));
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().first, progress.back().second);
  EXPECT_GT(progress.back().second, 0u);
  EXPECT_FALSE(std::filesystem::exists(copy_path() + ".tmp"));

  // Later writes are the source's alone.
  PutBatch(700, 10, 0);
  ASSERT_OK(db_->Delete(kName, 1));

  // Segments are links on the same file system, copies on another.
  const std::vector<std::string> segments = SegmentFiles(copy_path());
  ASSERT_FALSE(segments.empty());
  const bool same_fs = std::get<0>(GetParam()) == TempDir::Storage::kMemory;
  for (const std::string& s : segments) {
    EXPECT_EQ(std::filesystem::hard_link_count(s) > 1, same_fs) << s;
  }

  std::unique_ptr<DB> copy = OpenCopy();
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(ExportAll(*copy, kName), before);
  // The copy is a database of its own: it takes writes and reopens.
  ASSERT_OK(copy->Put(kName, 9999, VectorOf(9999, 0)));
  ASSERT_OK(copy->Close());
  copy = OpenCopy();
  ASSERT_NE(copy, nullptr);
  Model want = before;
  want[9999] = VectorOf(9999, 0);
  EXPECT_EQ(ExportAll(*copy, kName), want);
}

TEST_P(CheckpointTest, ExistingDirectoryIsAlreadyExists) {
  Open();
  std::filesystem::create_directories(copy_path());
  EXPECT_STATUS_CODE(db_->Checkpoint(copy_path()), absl::StatusCode::kAlreadyExists);
  // Someone's directory that merely ends in .tmp is not removed either,
  // unless it is empty (what a crash leaves between the staging
  // directory's creation and its marker).
  std::filesystem::remove(copy_path());
  std::filesystem::create_directories(copy_path() + ".tmp");
  { std::ofstream(copy_path() + ".tmp/someones"); }
  EXPECT_STATUS_CODE(db_->Checkpoint(copy_path()), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(std::filesystem::exists(copy_path() + ".tmp/someones"));
  std::filesystem::remove(copy_path() + ".tmp/someones");
  EXPECT_OK(db_->Checkpoint(copy_path()));
  EXPECT_FALSE(std::filesystem::exists(copy_path() + ".tmp"));
}

TEST_P(CheckpointTest, LeftoversOfACheckpointAreRemoved) {
  Open();
  PutBatch(1, 50, 0);
  // What a crash leaves: a marked staging directory, or the renamed
  // directory before its MANIFEST.
  for (const std::string& leftover : {copy_path() + ".tmp", copy_path()}) {
    std::filesystem::create_directories(leftover + "/docs/shard-0");
    { std::ofstream(leftover + "/.checkpoint-staging"); }
  }
  ASSERT_OK(db_->Checkpoint(copy_path()));
  std::unique_ptr<DB> copy = OpenCopy();
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(ExportAll(*copy, kName).size(), 50u);
}

// A collection dropped while a checkpoint whose cut holds it is copying:
// the drop waits for the copy, which holds the collection whole; the drop
// then removes the files, and a new collection of the name starts empty.
TEST_P(CheckpointTest, DropCollectionWaitsForACheckpointThatHoldsIt) {
  Open();
  PutBatch(1, 200, 0);
  ASSERT_OK(db_->Flush());
  PutBatch(300, 50, 0);
  const Model before = ExportAll(*db_, kName);
  std::atomic<bool> dropped{false};
  std::thread drop;
  CheckpointOptions options;
  options.progress = [&](uint64_t done, uint64_t total) {
    if (drop.joinable()) return;
    drop = std::thread([&] {
      EXPECT_OK(db_->DropCollection(kName));
      dropped.store(true);
    });
    // The drop is marked at once (NotFound), its files stay meanwhile.
    for (int i = 0; i < 1000 && db_->Get(kName, 1).ok(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_STATUS_CODE(db_->Get(kName, 1).status(), absl::StatusCode::kNotFound);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(dropped.load());
  };
  ASSERT_OK(db_->Checkpoint(copy_path(), options));
  ASSERT_TRUE(drop.joinable());
  drop.join();
  EXPECT_TRUE(dropped.load());
  EXPECT_FALSE(std::filesystem::exists(source_.Sub(kName)));
  std::unique_ptr<DB> copy = OpenCopy();
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(ExportAll(*copy, kName), before);
  // A later checkpoint leaves the dropped collection out.
  CollectionOptions other;
  other.dim = kDim;
  ASSERT_OK(db_->CreateCollection("other", other));
  ASSERT_OK(db_->Checkpoint(copy_path() + "2"));
  Options o = DbOptions();
  o.create_if_missing = false;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> copy2, DB::Open(o, copy_path() + "2"));
  EXPECT_EQ(copy2->ListCollections(), std::vector<std::string>{"other"});
}

// Writers, flushes and merges run during the checkpoint. Batch b puts K new
// ids [b K, (b+1) K) and overwrites the first K/2 ids of batch b/2, all as
// version b, across every shard: the copy must equal the state after
// batches 0..c for one c, with every batch acknowledged before the call in
// it and none begun after the call returned.
TEST_P(CheckpointTest, ConcurrentWritersFlushesAndMerges) {
  Open(/*memtable_bytes=*/64 << 10, /*automatic=*/true);
  std::atomic<uint64_t> acknowledged{0};  // batches 0..acknowledged-1 returned OK
  std::atomic<uint64_t> begun{0};         // batches 0..begun-1 were begun
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::vector<uint64_t> ids;
    std::vector<float> rows;
    for (uint64_t b = 0; !stop.load(); ++b) {
      MakeBatch(b, &ids, &rows);
      begun.store(b + 1);
      ASSERT_OK(db_->PutBatch(kName, ids, rows));
      acknowledged.store(b + 1);
    }
  });
  std::thread flusher([&] {
    while (!stop.load()) {
      ASSERT_OK(db_->Flush());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::thread compactor([&] {
    while (!stop.load()) {
      ASSERT_OK(db_->Compact());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  // Fewer batches under a sanitizer (TSan runs this case in CI).
  const uint64_t before_checkpoint = test::kSanitized ? 40 : 200;
  while (acknowledged.load() < before_checkpoint) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const uint64_t acknowledged_before = acknowledged.load();
  const absl::Status s = db_->Checkpoint(copy_path());
  const uint64_t begun_after = begun.load();
  // Some more writing after the checkpoint, then stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop.store(true);
  writer.join();
  flusher.join();
  compactor.join();
  ASSERT_OK(s);

  std::unique_ptr<DB> copy = OpenCopy();
  ASSERT_NE(copy, nullptr);
  const uint64_t batches = ExpectWholeBatches(ExportAll(*copy, kName), "copy");
  EXPECT_GE(batches, acknowledged_before);
  EXPECT_LE(batches, begun_after);
}

// The source on a file system that fails or loses power at the n-th
// operation of the checkpoint, for every n: a checkpoint that fails leaves
// nothing at the copy's path; after a power cut the copy either opens with
// the whole state or does not open as a database.
class CheckpointFaultTest : public ::testing::Test {
 protected:
  // A fresh source with a segment and a memtable; *state: its records.
  void OpenSource(Model* state) {
    db_.reset();
    std::filesystem::remove_all(source_path());
    fs_ = std::make_unique<FaultInjectionFileSystem>();
    Options o = DefaultOptions(0);
    o.compaction.automatic = false;
    ASSERT_OK_AND_ASSIGN(db_, OpenOnFileSystem(o, source_path(), fs_.get()));
    CollectionOptions co;
    co.dim = kDim;
    co.shard_count = 2;
    ASSERT_OK(db_->CreateCollection(kName, co));
    for (uint64_t version = 0; version < 2; ++version) {
      std::vector<uint64_t> ids;
      std::vector<float> rows;
      for (uint64_t id = 100 * version; id < 100 * version + 150; ++id) {
        ids.push_back(id);
        const std::vector<float> v = VectorOf(id, version);
        rows.insert(rows.end(), v.begin(), v.end());
      }
      ASSERT_OK(db_->PutBatch(kName, ids, rows));
      if (version == 0) {
        ASSERT_OK(db_->Flush());
      }
    }
    *state = ExportAll(*db_, kName);
    ASSERT_EQ(state->size(), 250u);
  }
  // Whether the copy's path holds a database, and if so that it is `want`.
  void ExpectCopyIsWholeOrNone(const Model& want, const std::string& where) {
    EXPECT_FALSE(std::filesystem::exists(copy_path() + ".tmp") &&
                 std::filesystem::exists(copy_path() + ".tmp/MANIFEST"))
        << where;
    if (!std::filesystem::exists(copy_path() + "/MANIFEST")) {
      Options o = DefaultOptions(0);
      o.create_if_missing = false;
      EXPECT_FALSE(DB::Open(o, copy_path()).ok()) << where;
      return;
    }
    Options o = DefaultOptions(0);
    o.create_if_missing = false;
    absl::StatusOr<std::unique_ptr<DB>> copy = DB::Open(o, copy_path());
    ASSERT_OK(copy) << where;
    EXPECT_EQ(ExportAll(**copy, kName), want) << where;
  }
  void RemoveCopy() {
    std::filesystem::remove_all(copy_path());
    std::filesystem::remove_all(copy_path() + ".tmp");
  }
  std::string source_path() const { return dir_.Sub("db"); }
  std::string copy_path() const { return dir_.Sub("copy"); }

  TempDir dir_;
  std::unique_ptr<FaultInjectionFileSystem> fs_;
  std::unique_ptr<DB> db_;
};

TEST_F(CheckpointFaultTest, AnErrorAtAnyStepLeavesNothing) {
  Model state;
  OpenSource(&state);
  for (uint64_t n = 1;; ++n) {
    const std::string where = "fault at operation " + std::to_string(n);
    const uint64_t injected = fs_->faults_injected();
    fs_->FailNth(FsOp::kAny, n);
    const absl::Status s = db_->Checkpoint(copy_path());
    fs_->ClearFaults();
    if (fs_->faults_injected() == injected) {  // past the last operation
      ASSERT_OK(s) << where;
      ExpectCopyIsWholeOrNone(state, where);
      EXPECT_TRUE(std::filesystem::exists(copy_path() + "/MANIFEST"));
      EXPECT_GT(n, 20u);
      break;
    }
    if (s.ok()) {
      // A best-effort step after MANIFEST (the marker's removal) failed.
      ExpectCopyIsWholeOrNone(state, where);
    } else {
      EXPECT_FALSE(std::filesystem::exists(copy_path())) << where << ": " << s;
      EXPECT_FALSE(std::filesystem::exists(copy_path() + ".tmp")) << where << ": " << s;
    }
    RemoveCopy();
    // The source is unharmed.
    ASSERT_EQ(ExportAll(*db_, kName), state) << where;
  }
}

TEST_F(CheckpointFaultTest, APowerCutAtAnyStepLeavesTheWholeCopyOrNone) {
  for (uint64_t n = 1;; ++n) {
    const std::string where = "power cut at operation " + std::to_string(n);
    Model state;
    OpenSource(&state);
    if (HasFatalFailure()) return;
    fs_->PowerOffAtNth(FsOp::kAny, n);
    (void)db_->Checkpoint(copy_path());
    fs_->ClearFaults();
    const bool cut = fs_->powered_off();
    db_.reset();
    if (cut) {
      ASSERT_OK(fs_->DropUnsyncedData()) << where;
    }
    ExpectCopyIsWholeOrNone(state, where);
    RemoveCopy();
    if (!cut) {
      EXPECT_GT(n, 20u);
      break;
    }
  }
}

// kill -9 of a process that checkpoints in a loop while it writes, flushes
// and merges: every checkpoint directory it leaves either opens with a whole
// prefix of the batches or does not open as a database. (A first step
// towards the crash loop, tests/crash/.)
TEST(CheckpointKillTest, KillNineLeavesWholeCopiesOrNone) {
  TempDir dir;
  std::mt19937_64 rng(20261205);
  size_t opened = 0, refused = 0;
  for (int cycle = 0; cycle < 20; ++cycle) {
    const std::string source = dir.Sub("db" + std::to_string(cycle));
    const std::string copies = dir.Sub("copies" + std::to_string(cycle));
    std::filesystem::create_directories(copies);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child: writes, flushes (64 KiB memtables) and merges in the
      // background, and checkpoints until it is killed.
      Options o = DefaultOptions(0);
      o.memtable_bytes = 64 << 10;
      auto db = DB::Open(o, source);
      if (!db.ok()) _exit(2);
      CollectionOptions co;
      co.dim = kDim;
      co.shard_count = 3;
      if (!(*db)->CreateCollection(kName, co).ok()) _exit(2);
      std::thread writer([&] {
        std::vector<uint64_t> ids;
        std::vector<float> rows;
        for (uint64_t b = 0;; ++b) {
          MakeBatch(b, &ids, &rows);
          if (!(*db)->PutBatch(kName, ids, rows).ok()) _exit(3);
        }
      });
      for (int k = 0;; ++k) {
        if (!(*db)->Checkpoint(copies + "/" + std::to_string(k)).ok()) _exit(4);
        // Only the last two stay, so that the parent checks a few copies a
        // cycle (and the one the kill cut short).
        // Renamed first: a kill during the removal leaves a torn "trash-*",
        // which the parent skips.
        if (k >= 2) {
          const std::string trash = copies + "/trash-" + std::to_string(k - 2);
          std::filesystem::rename(copies + "/" + std::to_string(k - 2), trash);
          std::filesystem::remove_all(trash);
        }
      }
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(100, 400)(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
    for (const auto& entry : std::filesystem::directory_iterator(copies)) {
      const std::string path = entry.path().string();
      if (entry.path().filename().string().starts_with("trash-")) continue;
      // Killed right after creating the staging directory: nothing in it
      // (any empty directory opens as a new database, so it is not asked).
      if (std::filesystem::is_empty(path)) {
        ++refused;
        continue;
      }
      Options o = DefaultOptions(0);
      o.create_if_missing = false;
      absl::StatusOr<std::unique_ptr<DB>> copy = DB::Open(o, path);
      if (!std::filesystem::exists(path + "/MANIFEST")) {
        EXPECT_FALSE(copy.ok()) << path;
        ++refused;
        continue;
      }
      ASSERT_OK(copy) << path;
      ExpectWholeBatches(ExportAll(**copy, kName), path);
      ++opened;
    }
    std::filesystem::remove_all(source);
    std::filesystem::remove_all(copies);
  }
  EXPECT_GT(opened, 0u);
  std::printf("kill -9 mid-checkpoint: %zu copies opened whole, %zu cut short refused\n", opened,
              refused);
}

INSTANTIATE_TEST_SUITE_P(
    All, CheckpointTest,
    ::testing::Combine(::testing::Values(TempDir::Storage::kMemory, TempDir::Storage::kDisk),
                       ::testing::Values(FsyncPolicy::kNever, FsyncPolicy::kAlways)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == TempDir::Storage::kMemory ? "SameFs"
                                                                              : "ToDisk") +
             (std::get<1>(info.param) == FsyncPolicy::kAlways ? "Always" : "Never");
    });

}  // namespace
}  // namespace shoal::test

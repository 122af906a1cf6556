// Copyright 2026 The shoal Authors.
//
// Many threads on one DB: concurrent writers never lose or reorder a write,
// concurrent searches always see a consistent top-k, and the final state
// (in memory and after reopen) is exactly what the writers' program order
// implies. Run under every FsyncPolicy, so that group commit (kAlways) and
// the background sync (kInterval) are exercised with several writers.
//
// Op counts are small enough for a Debug + AddressSanitizer build on two
// cores to finish each test in a few seconds.

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/filter.h"
#include "shoal/options.h"
#include "shoal/record.h"
#include "testutil/forced_plan.h"
#include "testutil/sanitized.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

using ::absl::StatusCode;

constexpr uint32_t kDim = 16;

std::string PolicyName(FsyncPolicy p) {
  switch (p) {
    case FsyncPolicy::kNever:
      return "Never";
    case FsyncPolicy::kAlways:
      return "Always";
    case FsyncPolicy::kInterval:
      return "Interval";
  }
  return "Unknown";
}

class ConcurrencyTest : public ::testing::TestWithParam<FsyncPolicy> {
 protected:
  void SetUp() override {
    options_ = DefaultOptions(kDim, Metric::kL2, 4);
    options_.fsync = GetParam();
    options_.sync_interval_us = 2000;
    options_.worker_threads = 2;
    ASSERT_NO_FATAL_FAILURE(Open());
  }
  void Open() {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, dir_.path());
    ASSERT_OK(db);
    db_ = std::move(db).value();
  }
  void Reopen() {
    ASSERT_OK(db_->Close());
    ASSERT_NO_FATAL_FAILURE(Open());
  }
  // Op counts: kAlways waits for the disk on every write, so it does fewer.
  int Scaled(int n) const {
    return GetParam() == FsyncPolicy::kAlways ? std::max(1, n / 4) : n;
  }

  // Every id of `model` Gets its vector, every other id in [0, universe) is
  // NotFound, and searches equal the oracle.
  void ExpectFinalState(const VectorMap& model,
                        const std::vector<uint64_t>& absent) {
    EXPECT_TRUE(HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model,
                             absent));
    for (uint64_t q = 0; q < 5; ++q) {
      const std::vector<float> query = RandomVector(kDim, 777 + q);
      SearchOptions so;
      so.k = 20;
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(query, so);
      ASSERT_OK(got);
      EXPECT_TRUE(MatchesOracle(*got, model, query, Metric::kL2, 20))
          << "query " << q;
    }
    // A stored vector as the query finds itself first (distance 0).
    if (!model.empty()) {
      const auto& [id, v] = *std::next(model.begin(), model.size() / 2);
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(v);
      ASSERT_OK(got);
      ASSERT_FALSE(got->empty());
      EXPECT_EQ((*got)[0].distance, 0.0f);
      EXPECT_TRUE(MatchesOracle(*got, model, v, Metric::kL2, 10));
    }
  }

  TempDir dir_;
  Options options_;
  std::unique_ptr<DB> db_;
};

// Records the first failure seen by any thread (gtest assertions from many
// threads would flood the log; one precise message is enough).
class FirstFailure {
 public:
  void Record(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.exchange(true)) message_ = what;
  }
  bool failed() const { return failed_.load(); }
  std::string message() {
    std::lock_guard<std::mutex> lock(mu_);
    return message_;
  }

 private:
  std::mutex mu_;
  std::atomic<bool> failed_{false};
  std::string message_;
};

TEST_P(ConcurrencyTest, ConcurrentPutsWithSearchersLoseNothing) {
  constexpr int kWriters = 8;
  constexpr uint64_t kRange = 10000;  // writer t owns [t*kRange, t*kRange+ids)
  const int ids_per_writer = Scaled(400);
  const int overwrites_per_writer = Scaled(300);

  // started[t]: ids t*kRange + [0, started) may appear in a search;
  // done[t]: ids t*kRange + [0, done) must be readable.
  std::vector<std::atomic<uint64_t>> started(kWriters);
  std::vector<std::atomic<uint64_t>> done(kWriters);
  std::vector<VectorMap> models(kWriters);
  std::atomic<int> writers_left{kWriters};
  std::atomic<int> searches{0};
  FirstFailure failure;

  auto writer = [&](int t) {
    std::mt19937_64 rng(t);
    VectorMap& model = models[t];
    const uint64_t base = t * kRange;
    int op = 0;
    for (int i = 0; i < ids_per_writer + overwrites_per_writer; ++i) {
      if (failure.failed()) break;
      const uint64_t off = i < ids_per_writer ? i : rng() % ids_per_writer;
      const std::vector<float> v = RandomVector(kDim, (t + 1) * 1000003 + op++);
      if (i < ids_per_writer) started[t].store(off + 1);
      const absl::Status s = db_->Put(base + off, v);
      if (!s.ok()) {
        failure.Record("Put: " + s.ToString());
        break;
      }
      model[base + off] = v;
      if (i < ids_per_writer) done[t].store(off + 1);
    }
    writers_left.fetch_sub(1);
  };

  auto searcher = [&](int s) {
    std::mt19937_64 rng(100 + s);
    uint64_t seed = 50000 * (s + 1);
    do {
      SearchOptions so;
      so.k = 1 + rng() % 20;
      so.list_size = 100;
      const std::vector<float> q = RandomVector(kDim, seed++);
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(q, so);
      if (!got.ok()) {
        failure.Record("Search: " + got.status().ToString());
        return;
      }
      if (::testing::AssertionResult r = IsSortedTopK(*got, so.k); !r) {
        failure.Record(r.message());
        return;
      }
      for (const Neighbor& n : *got) {
        const uint64_t t = n.id / kRange, off = n.id % kRange;
        if (t >= kWriters || off >= started[t].load()) {
          failure.Record("Search returned id " + std::to_string(n.id) +
                         " that no Put had started");
          return;
        }
      }
      // Reads of finished writes succeed.
      const int t = rng() % kWriters;
      const uint64_t finished = done[t].load();
      if (finished > 0) {
        const uint64_t id = t * kRange + rng() % finished;
        absl::StatusOr<std::vector<float>> v = db_->Get(id);
        if (!v.ok() || v->size() != kDim) {
          failure.Record("Get(" + std::to_string(id) + ") after its Put: " +
                         v.status().ToString());
          return;
        }
      }
      searches.fetch_add(1);
    } while (writers_left.load() > 0 && !failure.failed());
  };

  std::vector<std::thread> threads;
  for (int s = 0; s < 2; ++s) threads.emplace_back(searcher, s);
  for (int t = 0; t < kWriters; ++t) threads.emplace_back(writer, t);
  for (std::thread& th : threads) th.join();
  ASSERT_FALSE(failure.failed()) << failure.message();
  EXPECT_GE(searches.load(), 2);

  VectorMap model;
  std::vector<uint64_t> absent;
  for (int t = 0; t < kWriters; ++t) {
    model.insert(models[t].begin(), models[t].end());
    absent.push_back(t * kRange + ids_per_writer);  // never written
  }
  ASSERT_EQ(model.size(), static_cast<size_t>(kWriters * ids_per_writer));
  ASSERT_NO_FATAL_FAILURE(ExpectFinalState(model, absent));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  SCOPED_TRACE("after reopen");
  ASSERT_NO_FATAL_FAILURE(ExpectFinalState(model, absent));
}

TEST_P(ConcurrencyTest, ConcurrentBatchesAndDeletesOnOverlappingIds) {
  // Phase 1: every thread writes and deletes random ids from one shared
  // universe (heavy overlap, duplicates inside batches). Phase 2, after a
  // barrier: thread t owns the ids with id % kThreads == t and writes their
  // final state (batches spanning every shard, deletes, re-puts), while the
  // other threads do the same for theirs. The final state is then known.
  constexpr int kThreads = 6;
  constexpr uint64_t kUniverse = 300;
  const int chaos_rounds = Scaled(150);
  const int owner_rounds = Scaled(80);
  const bool check_each_write = GetParam() == FsyncPolicy::kAlways;

  std::barrier phase(kThreads);
  std::vector<VectorMap> finals(kThreads);
  std::vector<std::vector<uint64_t>> deleted(kThreads);
  std::atomic<int> writers_left{kThreads};
  FirstFailure failure;

  auto put_batch = [&](const std::vector<uint64_t>& ids,
                       const std::vector<float>& rows) {
    const absl::Status s = db_->PutBatch(ids, rows);
    if (!s.ok()) failure.Record("PutBatch: " + s.ToString());
    return s.ok();
  };
  auto del = [&](uint64_t id) {
    const absl::Status s = db_->Delete(id);
    if (!s.ok()) failure.Record("Delete: " + s.ToString());
    return s.ok();
  };

  auto worker = [&](int t) {
    std::mt19937_64 rng(1000 + t);
    uint64_t seed = (t + 1) * 7000003;
    // ---- Phase 1: chaos on shared ids ----
    for (int r = 0; r < chaos_rounds && !failure.failed(); ++r) {
      const size_t n = 1 + rng() % 24;
      std::vector<uint64_t> ids;
      for (size_t i = 0; i < n; ++i) ids.push_back(rng() % kUniverse);
      if (!put_batch(ids, RandomVectors(n, kDim, seed++))) break;
      for (int d = 0; d < 3; ++d) {
        if (!del(rng() % kUniverse)) break;
      }
    }
    phase.arrive_and_wait();
    // ---- Phase 2: each thread settles its own ids ----
    std::vector<uint64_t> mine;
    for (uint64_t id = t; id < kUniverse; id += kThreads) mine.push_back(id);
    std::map<uint64_t, std::vector<float>>& model = finals[t];
    std::vector<bool> is_deleted(kUniverse, false);
    for (int r = 0; r < owner_rounds + 1 && !failure.failed(); ++r) {
      // The last round writes every owned id (so nothing from phase 1
      // survives unexamined); others write a random subset, with duplicates.
      std::vector<uint64_t> ids;
      if (r == owner_rounds) {
        ids = mine;
      } else {
        const size_t n = 1 + rng() % 16;
        for (size_t i = 0; i < n; ++i) ids.push_back(mine[rng() % mine.size()]);
      }
      const std::vector<float> rows = RandomVectors(ids.size(), kDim, seed++);
      if (!put_batch(ids, rows)) break;
      for (size_t i = 0; i < ids.size(); ++i) {
        model[ids[i]] = std::vector<float>(Row(rows, i, kDim).begin(),
                                           Row(rows, i, kDim).end());
        is_deleted[ids[i]] = false;
      }
      // Delete a few owned ids (some twice, some never written in phase 2).
      const int deletes = r == owner_rounds ? static_cast<int>(mine.size() / 4)
                                            : static_cast<int>(rng() % 4);
      for (int d = 0; d < deletes; ++d) {
        const uint64_t id = mine[rng() % mine.size()];
        if (!del(id)) break;
        model.erase(id);
        is_deleted[id] = true;
      }
      if (check_each_write) {
        // Read-your-writes: every id this thread owns reads as it left it.
        for (uint64_t id : ids) {
          absl::StatusOr<std::vector<float>> got = db_->Get(id);
          const bool want_present = !is_deleted[id];
          if (got.ok() != want_present ||
              (want_present && *got != model[id])) {
            failure.Record("Get(" + std::to_string(id) +
                           ") right after its owner's write: " +
                           got.status().ToString());
            break;
          }
        }
      }
    }
    for (uint64_t id : mine) {
      if (is_deleted[id]) deleted[t].push_back(id);
    }
    writers_left.fetch_sub(1);
  };

  std::atomic<int> searches{0};
  auto searcher = [&] {
    uint64_t seed = 123456;
    do {
      const std::vector<float> q = RandomVector(kDim, seed++);
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(q);
      if (!got.ok()) {
        failure.Record("Search: " + got.status().ToString());
        return;
      }
      if (::testing::AssertionResult r = IsSortedTopK(*got, 10); !r) {
        failure.Record(r.message());
        return;
      }
      for (const Neighbor& n : *got) {
        if (n.id >= kUniverse) {
          failure.Record("Search returned unknown id " + std::to_string(n.id));
          return;
        }
      }
      searches.fetch_add(1);
    } while (writers_left.load() > 0 && !failure.failed());
  };

  std::vector<std::thread> threads;
  threads.emplace_back(searcher);
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& th : threads) th.join();
  ASSERT_FALSE(failure.failed()) << failure.message();
  EXPECT_GE(searches.load(), 1);

  VectorMap model;
  std::vector<uint64_t> absent;
  for (int t = 0; t < kThreads; ++t) {
    model.insert(finals[t].begin(), finals[t].end());
    absent.insert(absent.end(), deleted[t].begin(), deleted[t].end());
  }
  ASSERT_EQ(model.size() + absent.size(), kUniverse);
  ASSERT_NO_FATAL_FAILURE(ExpectFinalState(model, absent));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  SCOPED_TRACE("after reopen");
  ASSERT_NO_FATAL_FAILURE(ExpectFinalState(model, absent));
}

TEST_P(ConcurrencyTest, ConcurrentWritersToSeveralCollectionsStayIsolated) {
  // Writers on different collections at once; each collection ends with
  // exactly its own writes.
  constexpr int kCollections = 3;
  constexpr int kWritersPerCollection = 2;
  const int puts = Scaled(300);
  for (int c = 0; c < kCollections; ++c) {
    CollectionOptions co;
    co.dim = kDim;
    co.metric = Metric::kL2;
    co.shard_count = 1 + c;
    ASSERT_OK(db_->CreateCollection("c" + std::to_string(c), co));
  }
  std::vector<VectorMap> models(kCollections * kWritersPerCollection);
  FirstFailure failure;
  auto writer = [&](int c, int w) {
    const std::string name = "c" + std::to_string(c);
    VectorMap& model = models[c * kWritersPerCollection + w];
    for (int i = 0; i < puts && !failure.failed(); ++i) {
      // The same ids in every collection; writers of one collection split
      // them by parity.
      const uint64_t id = 2 * (i % 50) + w;
      const std::vector<float> v =
          RandomVector(kDim, (c * 10 + w + 1) * 100003 + i);
      const absl::Status s = db_->Put(name, id, v);
      if (!s.ok()) {
        failure.Record("Put: " + s.ToString());
        return;
      }
      model[id] = v;
    }
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < kCollections; ++c) {
    for (int w = 0; w < kWritersPerCollection; ++w) {
      threads.emplace_back(writer, c, w);
    }
  }
  for (std::thread& th : threads) th.join();
  ASSERT_FALSE(failure.failed()) << failure.message();
  auto check = [&] {
    for (int c = 0; c < kCollections; ++c) {
      VectorMap model;
      for (int w = 0; w < kWritersPerCollection; ++w) {
        const VectorMap& m = models[c * kWritersPerCollection + w];
        model.insert(m.begin(), m.end());
      }
      const std::string name = "c" + std::to_string(c);
      EXPECT_TRUE(HoldsExactly(*db_, name, Metric::kL2, model)) << name;
      const std::vector<float> q = RandomVector(kDim, 31 + c);
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(name, q);
      ASSERT_OK(got);
      EXPECT_TRUE(MatchesOracle(*got, model, q, Metric::kL2, 10)) << name;
    }
  };
  ASSERT_NO_FATAL_FAILURE(check());
  ASSERT_NO_FATAL_FAILURE(Reopen());
  SCOPED_TRACE("after reopen");
  ASSERT_NO_FATAL_FAILURE(check());
}

INSTANTIATE_TEST_SUITE_P(EveryFsyncPolicy, ConcurrencyTest,
                         ::testing::Values(FsyncPolicy::kNever,
                                           FsyncPolicy::kInterval,
                                           FsyncPolicy::kAlways),
                         [](const auto& info) { return PolicyName(info.param); });

// Large batches on tmpfs: the memtables read their rows in the log files'
// views, and flushes remove those files while readers still search and Get
// the frozen memtables. Every row read back is the one written (its first
// component is its id), under ASan (no read of unmapped memory) and TSan.
TEST(ConcurrencyInPlaceTest, ReadersWhileFlushesRemoveTheLogsTheirRowsAreIn) {
  TempDir dir;
  Options options = DefaultOptions(kDim, Metric::kL2, 2);
  options.worker_threads = 2;
  options.memtable_bytes = 256 << 10;  // a freeze and a flush every few batches
  options.wal_file_bytes = 128 << 10;
  options.compaction.automatic = false;  // flushes remove logs; merges would only add time
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  constexpr uint64_t kUniverse = 12000;
  constexpr size_t kBatch = 5000;  // 80,000 floats: the pool writes them through the log
  auto row_of = [](uint64_t id, uint64_t version) {
    std::vector<float> v = RandomVector(kDim, version * kUniverse + id);
    v[0] = static_cast<float>(id);
    return v;
  };
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};  // ids below this have been written
  FirstFailure failure;
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(r);
      while (!stop.load()) {
        const uint64_t bound = written.load();
        if (bound == 0) continue;
        const uint64_t id = rng() % bound;
        absl::StatusOr<std::vector<float>> got = db->Get(id);
        if (!got.ok() || got->size() != kDim || (*got)[0] != static_cast<float>(id)) {
          failure.Record("Get(" + std::to_string(id) + "): " + got.status().ToString());
        }
        absl::StatusOr<std::vector<Neighbor>> found = db->Search(row_of(id, 0));
        if (!found.ok() || found->empty()) {
          failure.Record("Search: " + found.status().ToString());
        }
      }
    });
  }
  for (uint64_t b = 0; b < 5 && !failure.failed(); ++b) {
    std::vector<uint64_t> ids(kBatch);
    std::vector<float> rows;
    rows.reserve(kBatch * kDim);
    for (size_t i = 0; i < kBatch; ++i) {
      ids[i] = (b * kBatch + i) % kUniverse;
      const std::vector<float> v = row_of(ids[i], b);
      rows.insert(rows.end(), v.begin(), v.end());
    }
    ASSERT_OK(db->PutBatch(ids, rows));
    written.store(std::min<uint64_t>(kUniverse, (b + 1) * kBatch));
  }
  ASSERT_OK(db->Flush());
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_FALSE(failure.failed()) << failure.message();
  ASSERT_OK(db->Close());
}

// Records (issue 43) read while writers put new versions of them in large
// batches (their parts read in place in the log's view), memtables flush
// and merges run: every record a reader gets is whole and of one version
// (its vector, labels, attribute and payload all say the same version).
TEST(ConcurrencyInPlaceTest, RecordReadersSeeWholeRecordsWhileWritesFlushAndMerge) {
  TempDir dir;
  Options options = DefaultOptions(kDim, Metric::kL2, 2);
  options.default_collection.attributes = {"version"};
  options.worker_threads = 2;
  options.memtable_bytes = 256 << 10;
  options.wal_file_bytes = 128 << 10;
  options.compaction.one_graph_max_vectors = 0;  // the shards' own merges
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  constexpr uint64_t kUniverse = 3000;
  constexpr size_t kBatch = 1500;
  struct Version {
    std::vector<float> vector;
    std::vector<uint32_t> labels;
    AttributeValue attribute;
    std::string payload;
  };
  auto version_of = [](uint64_t id, uint64_t version) {
    Version v;
    v.vector = RandomVector(kDim, version * kUniverse + id);
    v.vector[0] = static_cast<float>(id);
    v.vector[1] = static_cast<float>(version);
    v.labels = {static_cast<uint32_t>(id % 5), static_cast<uint32_t>(1000 + version)};
    v.attribute = {0, static_cast<int64_t>(version)};
    v.payload = absl::StrCat(id, ":", version, ":", std::string(id % 300, 'p'));
    return v;
  };
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  FirstFailure failure;
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(r);
      while (!stop.load()) {
        const uint64_t bound = written.load();
        if (bound == 0) continue;
        const uint64_t id = rng() % bound;
        absl::StatusOr<RecordData> got = db->GetRecord(id);
        if (!got.ok() || got->vector.size() != kDim) {
          failure.Record("GetRecord(" + std::to_string(id) + "): " + got.status().ToString());
          continue;
        }
        const uint64_t version = static_cast<uint64_t>(got->vector[1]);
        const Version want = version_of(id, version);
        if (got->vector != want.vector || got->labels != want.labels ||
            got->attributes != std::vector<AttributeValue>{want.attribute} ||
            got->payload != want.payload) {
          failure.Record("GetRecord(" + std::to_string(id) + ") is not one whole version");
        }
      }
    });
  }
  for (uint64_t b = 0; b < 8 && !failure.failed(); ++b) {
    std::vector<Version> versions;
    std::vector<Record> records;
    versions.reserve(kBatch);
    for (size_t i = 0; i < kBatch; ++i) {
      const uint64_t id = (b * kBatch + i) % kUniverse;
      versions.push_back(version_of(id, b));
      const Version& v = versions.back();
      records.push_back(Record{id, v.vector, v.labels, {&v.attribute, 1}, v.payload});
    }
    ASSERT_OK(db->PutBatch(records));
    written.store(std::min<uint64_t>(kUniverse, (b + 1) * kBatch));
  }
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->WaitForCompact());
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_FALSE(failure.failed()) << failure.message();
  ASSERT_OK(db->Close());
}

// ---- Filtered searches (issue 44) while writers, flushes and merges run ----

// Three id ranges, each record's labels and "ts" attribute a function of its
// id (so a reader can check any result it gets):
//   stable  [0, kStableIds): written before the readers start, overwritten
//           during the run with the same labels (never deleted): always live.
//   flip    kFlipBase + [0, kFlipIds): written before the readers start with
//           kFlipLabel; during the run the writer retires them in order, the
//           odd ones overwritten without kFlipLabel, the even ones deleted.
//           The last kFlipKept are never touched.
//   grown   kGrowBase + [0, ...): written during the run.
// Base labels, in every version: 1 on even ids, 2 on ids = 3 mod 10, 3 on
// ids = 7 mod 100; ts = id. Stable ids = 0 mod 13 are plain vectors (no
// labels, no ts).
constexpr uint64_t kStableIds = 2000;
constexpr uint64_t kFlipBase = 100000;
constexpr uint64_t kFlipIds = 400;
constexpr uint64_t kFlipKept = 40;
constexpr uint64_t kGrowBase = 200000;
constexpr uint32_t kFlipLabel = 100;

bool PlainId(uint64_t id) { return id < kFlipBase && id % 13 == 0; }
bool IsFlipId(uint64_t id) { return id >= kFlipBase && id < kFlipBase + kFlipIds; }
bool HasBaseLabel(uint64_t id, uint32_t label) {
  if (PlainId(id)) return false;
  switch (label) {
    case 1: return id % 2 == 0;
    case 2: return id % 10 == 3;
    case 3: return id % 100 == 7;
  }
  return false;
}
bool HasTs(uint64_t id) { return !PlainId(id); }

struct OwnedRecord {
  uint64_t id = 0;
  std::vector<float> vector;
  std::vector<uint32_t> labels;
  std::vector<AttributeValue> attributes;
};

OwnedRecord RecordOf(uint64_t id, uint64_t version, bool flip_label) {
  OwnedRecord r;
  r.id = id;
  r.vector = RandomVector(kDim, id * 1009 + version);
  if (PlainId(id)) return r;
  for (uint32_t label : {1u, 2u, 3u}) {
    if (HasBaseLabel(id, label)) r.labels.push_back(label);
  }
  if (flip_label) r.labels.push_back(kFlipLabel);
  r.attributes = {{0, static_cast<int64_t>(id)}};
  return r;
}

absl::Status PutRecords(DB& db, const std::vector<OwnedRecord>& owned) {
  std::vector<Record> records;
  records.reserve(owned.size());
  for (const OwnedRecord& r : owned) {
    records.push_back(Record{r.id, r.vector, r.labels, r.attributes, {}});
  }
  return db.PutBatch(records);
}

// A filter and the same predicate on ids (for ids not retired).
struct FilteredQuery {
  std::string what;
  Filter filter;
  std::function<bool(uint64_t)> matches;
  bool flip = false;  // the filter is AnyLabel({kFlipLabel})
};

FilteredQuery RandomFilteredQuery(std::mt19937_64& rng) {
  const uint64_t a = rng() % kStableIds;
  const uint64_t w = std::array<uint64_t, 3>{5, 60, 700}[rng() % 3];
  const auto ts_in = [a, w](uint64_t id) { return HasTs(id) && id >= a && id < a + w; };
  switch (rng() % 6) {
    case 0:
      return {"AnyLabel{2,3}", Filter::AnyLabel({2, 3}),
              [](uint64_t id) { return HasBaseLabel(id, 2) || HasBaseLabel(id, 3); }};
    case 1:
      return {absl::StrCat("Range(ts, ", a, ", ", a + w, ")"),
              Filter::Range("ts", static_cast<int64_t>(a), static_cast<int64_t>(a + w)),
              ts_in};
    case 2:
      return {absl::StrCat("And{AnyLabel{1}, Range(ts, ", a, ", ", a + w, ")}"),
              Filter::And({Filter::AnyLabel({1}),
                           Filter::Range("ts", static_cast<int64_t>(a),
                                         static_cast<int64_t>(a + w))}),
              [ts_in](uint64_t id) { return HasBaseLabel(id, 1) && ts_in(id); }};
    case 3:
      return {"AnyLabel{flip}", Filter::AnyLabel({kFlipLabel}), IsFlipId, true};
    case 4:
      return {"Or{AnyLabel{3}, AtLeast(ts, grown)}",
              Filter::Or({Filter::AnyLabel({3}),
                          Filter::AtLeast("ts", static_cast<int64_t>(kGrowBase))}),
              [](uint64_t id) { return HasBaseLabel(id, 3) || id >= kGrowBase; }};
    default:
      // The caller's predicate is called from the search threads.
      return {"And{NoLabel{1}, Ids(id % 3 == 0)}",
              Filter::And({Filter::NoLabel({1}),
                           Filter::Ids([](uint64_t id) { return id % 3 == 0; })}),
              [](uint64_t id) { return !HasBaseLabel(id, 1) && id % 3 == 0; }};
  }
}

// Stable ids the writer overwrites during the run (same labels).
bool OverwrittenStableId(uint64_t id) { return id < kStableIds && id % 4 == 1; }

// (storage, one graph for the shards while small), as RecordsTest.
class FilteredConcurrencyTest
    : public ::testing::TestWithParam<std::tuple<SegmentStorage, bool>> {
 protected:
  // Filtered Search and SearchBatch while one writer adds records and
  // overwrites others (same labels), another retires records from a label
  // (overwrites without it, deletes), and a third thread flushes and
  // compacts (background flushes and merges run too): every id answered
  // matches the filter, none retired or deleted before the search started
  // comes back, and a search answers exactly k whenever at least k ids that
  // stay live match - counting the ids being overwritten among them only
  // when `count_overwritten`.
  void Run(bool count_overwritten);
};

void FilteredConcurrencyTest::Run(bool count_overwritten) {
  TempDir dir;
  Options options = DefaultOptions(kDim, Metric::kL2, 2);
  options.default_collection.attributes = {"ts"};
  options.default_collection.graph.max_degree = 16;
  options.default_collection.graph.build_list_size = 32;
  options.segment_storage = std::get<0>(GetParam());
  if (!std::get<1>(GetParam())) options.compaction.one_graph_max_vectors = 0;
  options.worker_threads = 2;
  options.memtable_bytes = 64 << 10;  // background flushes during the run
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));

  // What stays live and matching whatever the writers do: the stable ids
  // and the flip ids never touched (kFlipLabel kept); with
  // count_overwritten, also the stable ids overwritten and the odd flip ids
  // (overwritten, never deleted, base labels kept).
  std::vector<uint64_t> always_live;
  {
    std::vector<OwnedRecord> initial;
    for (uint64_t id = 0; id < kStableIds; ++id) {
      initial.push_back(RecordOf(id, 0, false));
      if (count_overwritten || !OverwrittenStableId(id)) always_live.push_back(id);
    }
    for (uint64_t off = 0; off < kFlipIds; ++off) {
      initial.push_back(RecordOf(kFlipBase + off, 0, true));
      if (off >= kFlipIds - kFlipKept || (count_overwritten && off % 2 == 1)) {
        always_live.push_back(kFlipBase + off);
      }
    }
    ASSERT_OK(PutRecords(*db, initial));
    ASSERT_OK(db->Flush());
  }
  auto always_live_matching = [&](const FilteredQuery& q) {
    size_t n = 0;
    for (uint64_t id : always_live) {
      const bool flip_kept = IsFlipId(id) && id - kFlipBase >= kFlipIds - kFlipKept;
      n += q.flip ? flip_kept : q.matches(id);
    }
    return n;
  };

  const int grow_batches = kSanitized ? 12 : 30;
  constexpr uint64_t kGrowBatch = 100;
  constexpr uint64_t kRetireStep = 20;
  std::atomic<uint64_t> grow_started{0};  // grown ids below this may be answered
  std::atomic<uint64_t> retired{0};       // flip offsets below this are retired
  std::atomic<int> writers_left{2};
  std::atomic<bool> stop{false};
  std::atomic<int> searches{0};
  FirstFailure failure;

  std::thread grower([&] {
    std::mt19937_64 rng(7);
    for (int b = 0; b < grow_batches && !failure.failed(); ++b) {
      std::vector<OwnedRecord> batch;
      for (uint64_t i = 0; i < kGrowBatch; ++i) {
        batch.push_back(RecordOf(kGrowBase + b * kGrowBatch + i, 0, false));
      }
      grow_started.store((b + 1) * kGrowBatch);
      if (absl::Status s = PutRecords(*db, batch); !s.ok()) {
        failure.Record("PutBatch (grow): " + s.ToString());
        break;
      }
      // New versions of stable ids, with the same labels.
      batch.clear();
      for (int i = 0; i < 100; ++i) {
        batch.push_back(RecordOf((rng() % (kStableIds / 4)) * 4 + 1, b + 1, false));
      }
      if (absl::Status s = PutRecords(*db, batch); !s.ok()) {
        failure.Record("PutBatch (overwrite): " + s.ToString());
        break;
      }
    }
    writers_left.fetch_sub(1);
  });
  std::thread retirer([&] {
    for (uint64_t off = 0; off + kFlipKept < kFlipIds && !failure.failed(); off += kRetireStep) {
      std::vector<OwnedRecord> batch;
      for (uint64_t o = off; o < off + kRetireStep; ++o) {
        if (o % 2 == 1) batch.push_back(RecordOf(kFlipBase + o, 1, false));
      }
      if (absl::Status s = PutRecords(*db, batch); !s.ok()) {
        failure.Record("PutBatch (retire): " + s.ToString());
        break;
      }
      for (uint64_t o = off; o < off + kRetireStep; o += 2) {
        if (absl::Status s = db->Delete(kFlipBase + o); !s.ok()) {
          failure.Record("Delete: " + s.ToString());
          break;
        }
      }
      retired.store(off + kRetireStep);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    writers_left.fetch_sub(1);
  });
  std::thread flusher([&] {
    for (int round = 0; writers_left.load() > 0 && !failure.failed(); ++round) {
      const absl::Status s = round % 4 == 3 ? db->Compact()
                             : round % 4 == 1 ? db->WaitForCompact()
                                              : db->Flush();
      if (!s.ok()) failure.Record("Flush/Compact: " + s.ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });

  // Checks one answer to `q`, searched with k when `retired_before` flip
  // offsets had been retired.
  auto check = [&](const FilteredQuery& q, uint32_t k, uint64_t retired_before,
                   const std::vector<Neighbor>& got) {
    if (::testing::AssertionResult r = IsSortedTopK(got, k); !r) {
      failure.Record(q.what + ": " + r.message());
      return;
    }
    for (const Neighbor& n : got) {
      const uint64_t id = n.id;
      const bool known = id < kStableIds || IsFlipId(id) ||
                         (id >= kGrowBase && id - kGrowBase < grow_started.load());
      const bool retired_flip = IsFlipId(id) && id - kFlipBase < retired_before;
      const bool deleted = retired_flip && (id - kFlipBase) % 2 == 0;
      const bool matches = q.flip ? IsFlipId(id) && !retired_flip : q.matches(id);
      if (!known || deleted || !matches) {
        failure.Record(absl::StrCat(q.what, " answered id ", id,
                                    !known    ? " (never written)"
                                    : deleted ? " (deleted before the search)"
                                              : " (fails the filter)",
                                    "; retired flip offsets: ", retired_before));
        return;
      }
    }
    const size_t floor = std::min<size_t>(k, always_live_matching(q));
    if (got.size() < floor) {
      std::string ids;
      for (const Neighbor& n : got) absl::StrAppend(&ids, " ", n.id);
      failure.Record(absl::StrCat(q.what, " answered ", got.size(), " of k ", k, " with ",
                                  always_live_matching(q), " always-live ids matching:", ids));
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(1000 + r);
      uint64_t seed = 900000 * (r + 1);
      for (int i = 0; (!stop.load() || i < 20) && !failure.failed(); ++i) {
        const FilteredQuery q = RandomFilteredQuery(rng);
        SearchOptions so;
        so.k = 1 + rng() % 20;
        so.list_size = std::array<uint32_t, 3>{so.k, 50, 100}[rng() % 3];
        so.filter = &q.filter;
        const uint64_t retired_before = retired.load();
        if (i % 2 == 0) {
          absl::StatusOr<std::vector<Neighbor>> got = db->Search(RandomVector(kDim, seed++), so);
          if (!got.ok()) {
            failure.Record(q.what + " Search: " + got.status().ToString());
            return;
          }
          check(q, so.k, retired_before, *got);
        } else {
          constexpr size_t kQueries = 3;
          absl::StatusOr<std::vector<std::vector<Neighbor>>> got =
              db->SearchBatch(RandomVectors(kQueries, kDim, seed++), so);
          if (!got.ok() || got->size() != kQueries) {
            failure.Record(q.what + " SearchBatch: " + got.status().ToString());
            return;
          }
          for (const std::vector<Neighbor>& row : *got) check(q, so.k, retired_before, row);
        }
        searches.fetch_add(1);
      }
    });
  }
  grower.join();
  retirer.join();
  flusher.join();
  stop.store(true);
  for (std::thread& t : readers) t.join();
  ASSERT_FALSE(failure.failed()) << failure.message();
  EXPECT_GE(searches.load(), 40);

  // At rest, merged: the flip label is on exactly the ids never retired.
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->WaitForCompact());
  const Filter flip = Filter::AnyLabel({kFlipLabel});
  SearchOptions so;
  so.k = 1000;
  so.filter = &flip;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> kept, db->Search(RandomVector(kDim, 5), so));
  std::vector<uint64_t> kept_ids;
  for (const Neighbor& n : kept) kept_ids.push_back(n.id);
  std::sort(kept_ids.begin(), kept_ids.end());
  std::vector<uint64_t> want;
  for (uint64_t off = kFlipIds - kFlipKept; off < kFlipIds; ++off) want.push_back(kFlipBase + off);
  EXPECT_EQ(kept_ids, want);
  ASSERT_OK(db->Close());
}

TEST_P(FilteredConcurrencyTest, FilteredSearchesHonourTheFilterWhileWritesFlushAndMerge) {
  Run(/*count_overwritten=*/false);
}

// Engine bug (found 2026-12, open): Shard::Search (src/shard/shard_read.cc)
// scans the active memtable under its lock, lets go, and later decides
// whether an older source's id is hidden by asking the *same, still
// written* active memtable (Shard::VisibleAt). An overwrite applied between
// the two hides the old version although the search never saw the new one:
// the id is missing from the answer (a search matching 5 live ids answers 4;
// unfiltered searches with k and list_size past the collection miss
// overwritten ids the same way). Enable once a search decides visibility at
// the moment it scanned the memtable.
TEST_P(FilteredConcurrencyTest,
       DISABLED_FilteredSearchesFindIdsWhileTheyAreOverwrittenWithTheSameLabels) {
  Run(/*count_overwritten=*/true);
}

// Label graphs are built on the DB's pool after a search asks for one,
// while searches for every label go on from three threads and a writer
// flushes and compacts (merges drop the segments whose builds are queued or
// running; TSan watches the slots, the queue and the publication). Every
// answer holds k ids of its label alone, and the graphs get used.
TEST(LabelGraphConcurrencyTest, SearchesBuildsAndMergesRunTogether) {
  TempDir dir;
  Options options = DefaultOptions(kDim, Metric::kL2, 2);
  options.compaction.one_graph_max_vectors = 0;  // a segment a shard: more builds
  options.worker_threads = 2;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  constexpr uint32_t kLabels = 10;  // a tenth each: every label gets a graph
  auto put_range = [&](uint64_t begin, uint64_t end) -> absl::Status {
    std::mt19937 rng(static_cast<uint32_t>(begin));
    std::normal_distribution<float> gauss;
    std::vector<std::vector<float>> vectors;
    std::vector<uint32_t> labels;
    for (uint64_t id = begin; id < end; ++id) {
      vectors.emplace_back(kDim);
      for (float& x : vectors.back()) x = gauss(rng);
      labels.push_back(static_cast<uint32_t>(id % kLabels));
    }
    std::vector<Record> records;
    for (uint64_t id = begin; id < end; ++id) {
      records.push_back(Record{id, vectors[id - begin], {&labels[id - begin], 1}, {}, {}});
    }
    return db->PutBatch(records);
  };
  ASSERT_OK(put_range(0, 4000));
  ASSERT_OK(db->Flush());
  const ForcedPlan walk(0);  // every filtered segment walked, none scanned
  std::atomic<bool> done{false};
  std::atomic<uint64_t> graph_walks{0};
  std::vector<std::thread> searchers;
  for (int t = 0; t < 3; ++t) {
    searchers.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::normal_distribution<float> gauss;
      std::vector<float> query(kDim);
      for (int i = 0; !done.load() || i < 50; ++i) {
        const uint32_t label = static_cast<uint32_t>(rng() % kLabels);
        const Filter filter = Filter::AnyLabel({label});
        for (float& x : query) x = gauss(rng);
        SearchStats stats;
        SearchOptions so;
        so.k = 10;
        so.filter = &filter;
        so.stats = &stats;
        absl::StatusOr<std::vector<Neighbor>> found = db->Search(query, so);
        ASSERT_OK(found.status());
        ASSERT_EQ(found->size(), 10u);
        for (const Neighbor& nb : *found) ASSERT_EQ(nb.id % kLabels, label) << nb.id;
        graph_walks += stats.filter_label_graph_walks;
      }
    });
  }
  const int rounds = kSanitized ? 3 : 6;
  for (int r = 0; r < rounds; ++r) {
    ASSERT_OK(put_range(4000 + r * 500, 4500 + r * 500));
    ASSERT_OK(db->Flush());
    ASSERT_OK(db->Compact());
  }
  done = true;
  for (std::thread& t : searchers) t.join();
  EXPECT_GT(graph_walks.load(), 0u);
  ASSERT_OK(db->Close());
}

INSTANTIATE_TEST_SUITE_P(
    Storage, FilteredConcurrencyTest,
    ::testing::Combine(::testing::Values(SegmentStorage::kMapped, SegmentStorage::kDisk),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == SegmentStorage::kMapped ? "Mapped" : "Disk") +
             (std::get<1>(info.param) ? "OneGraph" : "GraphAShard");
    });

// Whole-database Flush and Compact while another thread creates, writes and
// drops a collection in a loop: each call succeeds and reaches every other
// collection. Until 2026-11-25 most Flush() calls returned the dropped
// collection's error (NotFound "was dropped", or FailedPrecondition
// "closing") and skipped the collections after it.
TEST(ConcurrencyDropTest, FlushAndCompactSkipACollectionDroppedMeanwhile) {
  TempDir dir;
  Options options = DefaultOptions(kDim, Metric::kL2, 2);
  options.worker_threads = 2;
  // Every Flush must add segments to "keep" (what the test counts), so no
  // background merge takes them away.
  options.compaction.automatic = false;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  CollectionOptions co;
  co.dim = kDim;
  co.shard_count = 2;
  // "a_victim" sorts before "keep" and the default collection.
  ASSERT_OK(db->CreateCollection("keep", co));
  std::atomic<bool> stop{false};
  std::atomic<int> drops{0};
  std::thread victim([&] {
    for (uint64_t round = 0; !stop.load(); ++round) {
      if (!db->CreateCollection("a_victim", co).ok()) continue;
      std::vector<uint64_t> ids(64);
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = round * 64 + i;
      (void)db->PutBatch("a_victim", ids, RandomVectors(ids.size(), kDim, round));
      if (db->DropCollection("a_victim").ok()) drops.fetch_add(1);
    }
  });
  VectorMap keep;
  size_t segments = 0;
  for (uint64_t round = 0; round < 40; ++round) {
    for (uint64_t i = 0; i < 16; ++i) {
      const uint64_t id = round * 16 + i;
      keep[id] = RandomVector(kDim, 5000 + id);
      ASSERT_OK(db->Put("keep", id, keep[id]));
    }
    if (round % 10 == 9) {
      EXPECT_OK(db->Compact()) << "round " << round;
      segments = SegmentFiles(dir.path() + "/keep").size();
    } else {
      EXPECT_OK(db->Flush()) << "round " << round;
      // The memtables of "keep" became segments.
      const size_t now = SegmentFiles(dir.path() + "/keep").size();
      EXPECT_GT(now, segments) << "round " << round;
      segments = now;
    }
  }
  stop.store(true);
  victim.join();
  EXPECT_GT(drops.load(), 0);
  EXPECT_TRUE(HoldsExactly(*db, "keep", Metric::kL2, keep));
}

// A CreateCollection racing a DropCollection of the same name either finds
// the old collection (AlreadyExists) or waits until the drop has removed
// its files, then creates: the new collection is empty and keeps what is
// written to it (a drop that closed the old one without holding the DB's
// lock must not remove the new one's files), also after reopening.
TEST(ConcurrencyDropTest, CreateRacingADropOfTheSameNameGetsAWorkingCollection) {
  TempDir dir;
  Options options = DefaultOptions(kDim, Metric::kL2, 2);
  options.worker_threads = 2;
  CollectionOptions co;
  co.dim = kDim;
  co.shard_count = 2;
  VectorMap last;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
    const int rounds = kSanitized ? 10 : 40;
    for (int round = 0; round < rounds; ++round) {
      ASSERT_OK(db->CreateCollection("c", co));
      std::vector<uint64_t> ids(256);
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
      // A segment on disk, so that the drop has files to remove.
      ASSERT_OK(db->BulkLoad("c", ids, RandomVectors(ids.size(), kDim, round)));
      absl::Status dropped;
      std::thread dropper([&] { dropped = db->DropCollection("c"); });
      absl::Status created = db->CreateCollection("c", co);
      dropper.join();
      ASSERT_OK(dropped) << "round " << round;
      if (absl::IsAlreadyExists(created)) created = db->CreateCollection("c", co);
      ASSERT_OK(created) << "round " << round;
      // The new collection is empty, and keeps what it is given.
      ASSERT_OK_AND_ASSIGN(auto none, db->Search("c", RandomVector(kDim, 1), {.k = 5}));
      EXPECT_TRUE(none.empty()) << "round " << round;
      last.clear();
      for (uint64_t id = 0; id < 8; ++id) {
        last[id] = RandomVector(kDim, 1000 * round + id);
        ASSERT_OK(db->Put("c", id, last[id]));
      }
      ASSERT_OK(db->Flush());
      EXPECT_TRUE(HoldsExactly(*db, "c", Metric::kL2, last)) << "round " << round;
      if (round + 1 < rounds) ASSERT_OK(db->DropCollection("c"));
    }
    ASSERT_OK(db->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  EXPECT_TRUE(HoldsExactly(*db, "c", Metric::kL2, last));
}

// Seconds CallsRacingADropReturnOkOrNotFound runs: SHOAL_DROP_RACE_SECONDS,
// default 3 (scripts/test.sh runs it under ThreadSanitizer too).
double DropRaceSeconds() {
  const char* env = std::getenv("SHOAL_DROP_RACE_SECONDS");
  if (env == nullptr) return 3;
  const double seconds = std::atof(env);
  return seconds > 0 ? seconds : 3;
}

// Every call on a collection that another thread drops and creates again in
// a loop (writing, bulk loading, flushing and compacting it in between)
// returns OK or NotFound: a call that raced with the drop finds the
// collection gone, never a closed database. Until 2026-12-05 a few in a
// million returned FailedPrecondition "database is closed" (the dropped
// collection's shards were closed under the call).
TEST(ConcurrencyDropTest, CallsRacingADropReturnOkOrNotFound) {
  TempDir dir;
  Options options = DefaultOptions(kDim, Metric::kL2, 2);
  options.worker_threads = 2;
  options.memtable_bytes = 32 << 10;  // background flushes during the race
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(options, dir.path()));
  CollectionOptions co;
  co.dim = kDim;
  co.shard_count = 2;
  co.graph.max_degree = 16;
  co.graph.build_list_size = 32;
  constexpr std::string_view kName = "race";
  enum Op { kSearch, kSearchBatch, kPut, kPutBatch, kGet, kDelete, kFlush, kCompact,
            kBulkLoad, kCycle, kOps };
  static constexpr const char* kOpNames[kOps] = {
      "Search", "SearchBatch", "Put", "PutBatch", "Get", "Delete", "Flush", "Compact",
      "BulkLoad", "cycle (create, write, drop)"};
  // calls[op][code] (absl::StatusCode 0..16; kRaced: see `check`): per
  // thread, summed at the end.
  constexpr size_t kRaced = 17;
  using Counts = std::array<std::array<uint64_t, kRaced + 1>, kOps>;
  constexpr int kCallers = 3;
  std::vector<Counts> counts(kCallers + 1, Counts{});
  FirstFailure failure;
  // Column kRaced counts NotFound "was dropped during the call": the calls
  // that did race with a drop (the others came after it).
  auto check = [&](Counts& c, Op op, const absl::Status& s) {
    c[op][std::min<size_t>(static_cast<size_t>(s.code()), kRaced - 1)] += 1;
    if (std::string(s.message()).find("during the call") != std::string::npos) {
      c[op][kRaced] += 1;
    }
    if (!s.ok() && s.code() != StatusCode::kNotFound) {
      failure.Record(std::string(kOpNames[op]) + ": " + s.ToString());
    } else if (s.code() == StatusCode::kNotFound && op != kGet && op != kCycle &&
               std::string(s.message()).find(kName) == std::string::npos) {
      failure.Record(std::string(kOpNames[op]) + " NotFound without the name: " + s.ToString());
    }
  };
  std::atomic<bool> stop{false};
  std::thread cycler([&] {
    Counts& c = counts[kCallers];
    for (uint64_t round = 0; !stop.load(); ++round) {
      check(c, kCycle, db->CreateCollection(kName, co));
      std::vector<uint64_t> ids(200);
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
      check(c, kPutBatch, db->PutBatch(kName, ids, RandomVectors(ids.size(), kDim, round)));
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = 1000 + i;
      check(c, kBulkLoad, db->BulkLoad(kName, ids, RandomVectors(ids.size(), kDim, ~round)));
      check(c, kFlush, db->Flush());
      if (round % 4 == 3) check(c, kCompact, db->Compact());
      check(c, kCycle, db->DropCollection(kName));
    }
  });
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([&, t] {
      Counts& c = counts[t];
      std::mt19937_64 rng(t);
      std::vector<uint64_t> ids(16);
      while (!stop.load()) {
        const uint64_t id = rng() % 1200;
        switch (rng() % 20) {
          case 0: case 1: case 2: case 3: case 4:
            check(c, kSearch, db->Search(kName, RandomVector(kDim, rng())).status());
            break;
          case 5: case 6:
            check(c, kSearchBatch, db->SearchBatch(kName, RandomVectors(4, kDim, rng())).status());
            break;
          case 7: case 8: case 9:
            check(c, kPut, db->Put(kName, id, RandomVector(kDim, rng())));
            break;
          case 10:
            for (uint64_t& i : ids) i = rng() % 1200;
            check(c, kPutBatch, db->PutBatch(kName, ids, RandomVectors(ids.size(), kDim, rng())));
            break;
          case 11: case 12: case 13:
            check(c, kGet, db->Get(kName, id).status());
            break;
          case 14:
            check(c, kDelete, db->Delete(kName, id));
            break;
          case 15:
            for (uint64_t& i : ids) i = 2000 + rng() % 1000;
            check(c, kBulkLoad, db->BulkLoad(kName, ids, RandomVectors(ids.size(), kDim, rng())));
            break;
          case 16: case 17:
            check(c, kFlush, db->Flush());
            break;
          default:
            check(c, kCompact, db->Compact());
            break;
        }
      }
    });
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(DropRaceSeconds());
  while (!failure.failed() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop.store(true);
  for (std::thread& t : callers) t.join();
  cycler.join();
  EXPECT_FALSE(failure.failed()) << failure.message();
  Counts total{};
  for (const Counts& c : counts) {
    for (size_t op = 0; op < kOps; ++op) {
      for (size_t code = 0; code <= kRaced; ++code) total[op][code] += c[op][code];
    }
  }
  uint64_t calls = 0;
  std::string summary;
  for (size_t op = 0; op < kOps; ++op) {
    summary += absl::StrCat("  ", kOpNames[op], ":");
    for (size_t code = 0; code < kRaced; ++code) {
      if (total[op][code] == 0) continue;
      calls += total[op][code];
      summary += absl::StrCat(" ", absl::StatusCodeToString(static_cast<StatusCode>(code)),
                              " ", total[op][code]);
    }
    if (total[op][kRaced] > 0) {
      summary += absl::StrCat(" (dropped during the call: ", total[op][kRaced], ")");
    }
    summary += "\n";
  }
  std::cout << calls << " calls in " << DropRaceSeconds() << " s:\n" << summary;
  EXPECT_GT(total[kCycle][0], 0u);  // at least one create and drop
  ASSERT_OK(db->Close());
}

}  // namespace
}  // namespace shoal::test

// Copyright 2026 The shoal Authors.
//
// The database with on-disk segments: flush, bulk load, compaction, versions
// across memtables and segments, recovery, and damaged segment files.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/temp_dir.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using test::SegmentFiles;
using test::TempDir;

// Clustered data: recall figures on uniform noise say little.
std::vector<float> Clustered(size_t n, size_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const size_t clusters = 32;
  std::vector<float> centres(clusters * dim);
  for (float& x : centres) x = gauss(rng) * 4.0f;
  std::vector<float> out(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = rng() % clusters;
    for (size_t d = 0; d < dim; ++d) out[i * dim + d] = centres[c * dim + d] + gauss(rng);
  }
  return out;
}

// The list size at which these tests expect recall@10 >= 0.95. Inner product
// gets twice L2's: the queries come from other clusters than the data, so
// their top ten are the extreme points of several clusters along the query's
// direction, which no neighbourhood graph of the data follows. (On the same
// data hnswlib, M=16, ef=100, finds 0.76 of them; shoal at L=100 0.92-0.98
// across builds, and at L=200 0.97-1.0.)
uint32_t RecallListSize(Metric metric) { return metric == Metric::kInnerProduct ? 200 : 100; }

// Recall@10 of the first nq queries at list_size (0: RecallListSize(metric)).
double Recall(DB& db, const test::VectorMap& model, Metric metric, size_t dim,
              const std::vector<float>& queries, size_t nq, uint32_t list_size = 0) {
  if (list_size == 0) list_size = RecallListSize(metric);
  size_t hits = 0, total = 0;
  for (size_t q = 0; q < nq; ++q) {
    std::span<const float> query(queries.data() + q * dim, dim);
    std::vector<Neighbor> truth = test::BruteForceTopK(model, query, metric, 10);
    absl::StatusOr<std::vector<Neighbor>> got =
        db.Search(query, {.k = 10, .list_size = list_size});
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return 0;
    for (const Neighbor& t : truth) {
      for (const Neighbor& g : *got) hits += g.id == t.id;
    }
    total += truth.size();
  }
  return total == 0 ? 1.0 : static_cast<double>(hits) / static_cast<double>(total);
}

class SegmentRecallTest
    : public ::testing::TestWithParam<std::tuple<Metric, uint32_t>> {};

TEST_P(SegmentRecallTest, RecallAfterFlushIsAtLeast095AndSurvivesReopen) {
  const auto [metric, dim] = GetParam();
  TempDir dir;
  const size_t n = 4000;
  std::vector<float> data = Clustered(n, dim, dim);
  std::vector<float> queries = Clustered(50, dim, dim + 1000);
  test::VectorMap model;
  Options o = test::DefaultOptions(dim, metric, 2);
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    std::vector<uint64_t> ids(n);
    for (size_t i = 0; i < n; ++i) {
      ids[i] = i * 7 + 1;
      model[ids[i]] = std::vector<float>(data.begin() + i * dim, data.begin() + (i + 1) * dim);
    }
    ASSERT_OK(db->PutBatch(ids, data));
    ASSERT_OK(db->Flush());
    EXPECT_FALSE(SegmentFiles(dir.path()).empty());
    EXPECT_GE(Recall(*db, model, metric, dim, queries, 50), 0.95);
    ASSERT_OK(db->Close());
  }
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  EXPECT_GE(Recall(*db, model, metric, dim, queries, 50), 0.95);
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, metric, model));
}

INSTANTIATE_TEST_SUITE_P(
    MetricsAndDims, SegmentRecallTest,
    ::testing::Combine(::testing::Values(Metric::kL2, Metric::kInnerProduct, Metric::kCosine),
                       ::testing::Values(16u, 97u, 128u)));

TEST(SegmentDbTest, ListSizeBelowKAnswersKVisibleNeighboursFromSeveralSegments) {
  TempDir dir;
  const uint32_t dim = 16;
  Options o = test::DefaultOptions(dim, Metric::kL2, 2);
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  const std::vector<float> data = Clustered(3000, dim, 31);
  test::VectorMap model;
  std::vector<uint64_t> ids(3000);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = i;
    model[i] = std::vector<float>(data.begin() + i * dim, data.begin() + (i + 1) * dim);
  }
  // Two flushes (a shard's segments share its list: the smaller one gets at
  // least min(L, k)), then deletes in the memtable over both.
  ASSERT_OK(db->PutBatch(std::span(ids).first(2000), std::span(data).first(2000 * dim)));
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->PutBatch(std::span(ids).subspan(2000), std::span(data).subspan(2000 * dim)));
  ASSERT_OK(db->Flush());
  for (uint64_t id = 0; id < 3000; id += 7) {
    ASSERT_OK(db->Delete(id));
    model.erase(id);
  }
  const std::vector<float> queries = Clustered(40, dim, 32);
  std::map<uint32_t, double> recall;
  for (uint32_t list_size : {1u, 3u, 9u}) {
    for (size_t q = 0; q < 40; ++q) {
      std::span<const float> query(queries.data() + q * dim, dim);
      ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                           db->Search(query, {.k = 10, .list_size = list_size}));
      ASSERT_EQ(got.size(), 10u) << "list_size " << list_size;
      ASSERT_TRUE(test::IsSortedTopK(got, 10));
      for (const Neighbor& n : got) EXPECT_TRUE(model.contains(n.id)) << n.id;
    }
    recall[list_size] = Recall(*db, model, Metric::kL2, dim, queries, 40, list_size);
  }
  // Recall for speed: 0.47, 0.69 and 0.90 when written (these queries come
  // from other clusters than the data).
  // Measured again 2026-12-05 over 95 runs (the graphs differ from run to
  // run): list 9 read 0.79-0.91, mean 0.845, both at 25355ca and after it,
  // so 0.8 failed about one run in fifty; 0.7 still fails a search that
  // lost its way.
  EXPECT_GE(recall[1], 0.3);
  EXPECT_GE(recall[9], 0.7);
  EXPECT_LT(recall[1], recall[9]);
}

TEST(SegmentDbTest, UpsertAndDeleteAcrossMemtableAndSegment) {
  TempDir dir;
  const uint32_t dim = 8;
  Options o = test::DefaultOptions(dim, Metric::kL2, 2);
  test::VectorMap model;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  for (uint64_t id = 0; id < 300; ++id) {
    model[id] = test::RandomVector(dim, id);
    ASSERT_OK(db->Put(id, model[id]));
  }
  ASSERT_OK(db->Flush());  // 0..299 now in segments
  for (uint64_t id = 0; id < 300; id += 3) {
    model[id] = test::RandomVector(dim, 1000 + id);  // newer version in the memtable
    ASSERT_OK(db->Put(id, model[id]));
  }
  std::vector<uint64_t> deleted;
  for (uint64_t id = 1; id < 300; id += 5) {
    ASSERT_OK(db->Delete(id));
    model.erase(id);
    deleted.push_back(id);
  }
  auto check = [&](DB& d) {
    EXPECT_TRUE(test::HoldsExactly(d, kDefaultCollection, Metric::kL2, model, deleted));
    // A deleted id never comes back, and an overwritten one never shows its
    // old vector: search for each old vector exactly.
    for (uint64_t id : deleted) {
      ASSERT_OK_AND_ASSIGN(auto hits, d.Search(test::RandomVector(dim, id), {.k = 5}));
      for (const Neighbor& h : hits) EXPECT_NE(h.id, id);
    }
    for (uint64_t id = 0; id < 300; id += 3) {
      if (!model.contains(id)) continue;
      ASSERT_OK_AND_ASSIGN(auto hits, d.Search(test::RandomVector(dim, id), {.k = 1}));
      // The old vector of `id` is gone: if `id` is the nearest, it is at the
      // distance of its new vector.
      if (!hits.empty() && hits[0].id == id) {
        EXPECT_GT(hits[0].distance, 1e-6f);
      }
    }
  };
  check(*db);
  ASSERT_OK(db->Flush());  // tombstones and new versions into a newer segment
  check(*db);
  ASSERT_OK(db->Close());
  ASSERT_OK_AND_ASSIGN(auto again, DB::Open(o, dir.path()));
  check(*again);
  ASSERT_OK(again->Compact());
  check(*again);
  EXPECT_EQ(SegmentFiles(dir.path()).size(), 1u);  // one graph for both shards
  ASSERT_OK(again->Close());
  ASSERT_OK_AND_ASSIGN(auto third, DB::Open(o, dir.path()));
  check(*third);
}

TEST(SegmentDbTest, MemtablesFlushInTheBackgroundWhenFull) {
  TempDir dir;
  const uint32_t dim = 16;
  Options o = test::DefaultOptions(dim, Metric::kL2, 1);
  o.memtable_bytes = 64 << 10;  // ~900 vectors
  test::VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    for (uint64_t id = 0; id < 5000; ++id) {
      model[id] = test::RandomVector(dim, id);
      ASSERT_OK(db->Put(id, model[id]));
    }
    ASSERT_OK(db->Close());
  }
  EXPECT_FALSE(SegmentFiles(dir.path()).empty());
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(SegmentDbTest, FlushedLogFilesAreRemoved) {
  TempDir dir;
  Options o = test::DefaultOptions(4, Metric::kL2, 1);
  o.wal_file_bytes = 4096;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  for (uint64_t id = 0; id < 500; ++id) ASSERT_OK(db->Put(id, test::RandomVector(4, id)));
  auto wal_files = [&] {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir.path() + "/default/shard-0")) {
      n += e.path().extension() == ".log";
    }
    return n;
  };
  const size_t before = wal_files();
  ASSERT_GT(before, 3u);
  ASSERT_OK(db->Flush());
  EXPECT_LE(wal_files(), 1u);
}

TEST(SegmentDbTest, BulkLoadOfZeroOneAndRPlusOneVectors) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{65}}) {
    TempDir dir;
    const uint32_t dim = 12;
    Options o = test::DefaultOptions(dim, Metric::kL2, 2);
    std::vector<uint64_t> ids(n);
    std::vector<float> rows = test::RandomVectors(n, dim, n);
    test::VectorMap model;
    for (size_t i = 0; i < n; ++i) {
      ids[i] = 100 + i;
      model[ids[i]] = std::vector<float>(rows.begin() + i * dim, rows.begin() + (i + 1) * dim);
    }
    {
      ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
      ASSERT_OK(db->BulkLoad(ids, rows)) << n;
      EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model)) << n;
      for (size_t i = 0; i < n; ++i) {
        ASSERT_OK_AND_ASSIGN(auto hits, db->Search(test::Row(rows, i, dim), {.k = 1}));
        ASSERT_EQ(hits.size(), 1u);
        EXPECT_EQ(hits[0].id, ids[i]) << n;
      }
      ASSERT_OK(db->Close());
    }
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model)) << n;
  }
}

TEST(SegmentDbTest, BulkLoadIsNewerThanEarlierWritesAndOlderThanLaterOnes) {
  TempDir dir;
  const uint32_t dim = 6;
  Options o = test::DefaultOptions(dim, Metric::kL2, 2);
  test::VectorMap model;
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    for (uint64_t id = 0; id < 40; ++id) ASSERT_OK(db->Put(id, test::RandomVector(dim, id)));
    ASSERT_OK(db->Delete(39));
    std::vector<uint64_t> ids;
    std::vector<float> rows;
    for (uint64_t id = 20; id < 60; ++id) {  // overlaps the earlier puts, revives 39
      ids.push_back(id);
      std::vector<float> v = test::RandomVector(dim, 500 + id);
      rows.insert(rows.end(), v.begin(), v.end());
    }
    ids.push_back(25);  // a duplicate inside the load: the last row wins
    std::vector<float> last = test::RandomVector(dim, 999);
    rows.insert(rows.end(), last.begin(), last.end());
    ASSERT_OK(db->BulkLoad(ids, rows));
    for (uint64_t id = 0; id < 20; ++id) model[id] = test::RandomVector(dim, id);
    for (uint64_t id = 20; id < 60; ++id) model[id] = test::RandomVector(dim, 500 + id);
    model[25] = last;
    ASSERT_OK(db->Delete(50));  // after the load
    model.erase(50);
    model[55] = test::RandomVector(dim, 7777);
    ASSERT_OK(db->Put(55, model[55]));
    EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
    ASSERT_OK(db->Close());
  }
  // Recovery replays the log around the bulk load in the right order.
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
  ASSERT_OK(db->Flush());
  ASSERT_OK(db->Compact());
  EXPECT_TRUE(test::HoldsExactly(*db, kDefaultCollection, Metric::kL2, model));
}

TEST(SegmentDbTest, BulkLoadRejectsBadInputAndChangesNothing) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(test::DefaultOptions(4, Metric::kL2, 2), dir.path()));
  std::vector<uint64_t> ids = {1, 2};
  std::vector<float> rows = {1, 2, 3, 4, 5, 6, 7};  // 7 != 2 * 4
  EXPECT_STATUS_CODE(db->BulkLoad(ids, rows), absl::StatusCode::kInvalidArgument);
  rows = {1, 2, 3, 4, 5, 6, 7, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_STATUS_CODE(db->BulkLoad(ids, rows), absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db->Get(1), absl::StatusCode::kNotFound);
  EXPECT_TRUE(SegmentFiles(dir.path()).empty());
}

TEST(SegmentDbTest, DamagedSegmentIsDataLossNotACrash) {
  TempDir dir;
  const uint32_t dim = 16;
  Options o = test::DefaultOptions(dim, Metric::kL2, 1);
  {
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    std::vector<uint64_t> ids(500);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
    ASSERT_OK(db->BulkLoad(ids, test::RandomVectors(ids.size(), dim, 3)));
    ASSERT_OK(db->Close());
  }
  std::vector<std::string> files = SegmentFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  const size_t size = fs::file_size(files[0]);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const size_t at = rng() % size;
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(at);
    char c;
    f.read(&c, 1);
    f.seekp(at);
    const char flipped = static_cast<char>(c ^ 0x20);
    f.write(&flipped, 1);
    f.close();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, dir.path());
    if (db.ok()) {
      // Damage inside a node sector shows when the sector is read.
      bool saw_data_loss = false;
      for (uint64_t id = 0; id < 500; ++id) {
        absl::StatusOr<std::vector<float>> v = (*db)->Get(id);
        if (!v.ok()) {
          EXPECT_EQ(v.status().code(), absl::StatusCode::kDataLoss) << v.status();
          saw_data_loss = true;
        }
      }
      absl::StatusOr<std::vector<Neighbor>> hits =
          (*db)->Search(test::RandomVector(dim, 1), {.k = 10, .list_size = 500});
      if (!hits.ok()) {
        EXPECT_EQ(hits.status().code(), absl::StatusCode::kDataLoss);
        saw_data_loss = true;
      }
      EXPECT_TRUE(saw_data_loss) << "flipped byte " << at << " went unnoticed";
    } else {
      EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss) << db.status();
    }
    // Undo the damage for the next trial.
    std::fstream g(files[0], std::ios::in | std::ios::out | std::ios::binary);
    g.seekp(at);
    g.write(&c, 1);
  }
}

TEST(SegmentDbTest, ConcurrentSearchDuringFlushSeesEveryVector) {
  TempDir dir;
  const uint32_t dim = 8;
  Options o = test::DefaultOptions(dim, Metric::kL2, 2);
  o.memtable_bytes = 32 << 10;
  ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
  std::atomic<uint64_t> written{0};
  std::atomic<bool> stop{false};
  std::atomic<int> misses{0}, search_misses{0}, searches{0};
  std::thread searcher([&] {
    std::mt19937_64 rng(1);
    while (!stop.load()) {
      const uint64_t n = written.load();
      if (n == 0) continue;
      const uint64_t id = rng() % n;
      // Its own vector: the nearest neighbour is itself, wherever it lives.
      absl::StatusOr<std::vector<Neighbor>> hits =
          db->Search(test::RandomVector(dim, id), {.k = 1, .list_size = 64});
      if (!hits.ok()) ++misses;  // an error is never acceptable
      // Graph search is approximate: a rare miss is allowed, a pattern is not.
      if (hits.ok() && (hits->empty() || (*hits)[0].id != id)) ++search_misses;
      ++searches;
      if (!db->Get(id).ok()) ++misses;  // Get is exact: never a miss
    }
  });
  for (uint64_t id = 0; id < 3000; ++id) {
    ASSERT_OK(db->Put(id, test::RandomVector(dim, id)));
    written.store(id + 1);
    if (id % 1000 == 999) {
      ASSERT_OK(db->Flush());
    }
  }
  stop = true;
  searcher.join();
  EXPECT_EQ(misses.load(), 0);
  EXPECT_LE(search_misses.load(), searches.load() / 50 + 1) << searches.load() << " searches";
}

// A child writes and flushes in a loop; the parent kills it at random
// moments. Every acknowledged write must survive, also when the kill lands in
// the middle of a flush (segment build, manifest edit, log removal).
TEST(SegmentDbTest, KillDuringFlushLosesNothingAcknowledged) {
  TempDir dir;
  const uint32_t dim = 8;
  Options o = test::DefaultOptions(dim, Metric::kL2, 2);
  o.memtable_bytes = 16 << 10;  // frequent background flushes
  uint64_t next_id = 0;
  std::mt19937_64 rng(11);
  for (int cycle = 0; cycle < 8; ++cycle) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const uint64_t first = next_id;
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      auto db = DB::Open(o, dir.path());
      if (!db.ok()) _exit(3);
      for (uint64_t id = first;; ++id) {
        if (!(*db)->Put(id, test::RandomVector(dim, id)).ok()) _exit(4);
        if (write(fds[1], &id, sizeof(id)) != sizeof(id)) _exit(5);
        if (id % 97 == 0 && !(*db)->Flush().ok()) _exit(6);
      }
    }
    close(fds[1]);
    usleep(5000 + rng() % 40000);
    kill(pid, SIGKILL);
    uint64_t id;
    while (read(fds[0], &id, sizeof(id)) == sizeof(id)) next_id = id + 1;
    close(fds[0]);
    int wstatus;
    waitpid(pid, &wstatus, 0);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);
    ASSERT_OK_AND_ASSIGN(auto db, DB::Open(o, dir.path()));
    for (uint64_t i = 0; i < next_id; ++i) {
      absl::StatusOr<std::vector<float>> v = db->Get(i);
      ASSERT_OK(v) << "cycle " << cycle << " id " << i;
      ASSERT_EQ(*v, test::RandomVector(dim, i)) << "cycle " << cycle << " id " << i;
    }
    ASSERT_OK(db->Close());
  }
  EXPECT_GT(next_id, 200u);
}

}  // namespace
}  // namespace shoal

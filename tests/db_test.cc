// Copyright 2026 The shoal Authors.
//
// Behaviour of the public DB API on the default collection: round trips,
// overwrite and delete semantics, exact search against a brute-force oracle
// (every metric, several dims and shard counts), persistence across reopen,
// and the lifecycle (Close, destructor, calls after Close).

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

using ::absl::StatusCode;

class DbTest : public ::testing::Test {
 protected:
  // Opens (or reopens) the DB in dir_ with `options`.
  void Open(const Options& options) {
    options_ = options;
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, dir_.path());
    ASSERT_OK(db);
    db_ = std::move(db).value();
  }
  void Open(uint32_t dim, Metric metric = Metric::kL2, uint32_t shards = 2) {
    Open(DefaultOptions(dim, metric, shards));
  }
  // Close() then Open() with the same options.
  void Reopen() {
    if (db_ != nullptr) {
      ASSERT_OK(db_->Close());
    }
    db_.reset();
    Open(options_);
  }
  Metric metric() const { return options_.default_collection.metric; }
  uint32_t dim() const { return options_.default_collection.dim; }

  // Puts `v` under `id` in the DB and the model.
  void PutBoth(uint64_t id, const std::vector<float>& v) {
    ASSERT_OK(db_->Put(id, v));
    model_[id] = v;
  }
  // PutBatch of `rows` (dim() floats each) under `ids`, in the DB and the model.
  void PutBatchBoth(const std::vector<uint64_t>& ids, const std::vector<float>& rows) {
    ASSERT_OK(db_->PutBatch(ids, rows));
    const size_t d = dim();
    for (size_t i = 0; i < ids.size(); ++i) {
      model_[ids[i]] = std::vector<float>(rows.begin() + i * d, rows.begin() + (i + 1) * d);
    }
  }
  void DeleteBoth(uint64_t id) {
    ASSERT_OK(db_->Delete(id));
    model_.erase(id);
    deleted_.push_back(id);
  }
  // Get agrees with the model; deleted ids are NotFound.
  void ExpectHoldsModel() {
    EXPECT_TRUE(HoldsExactly(*db_, kDefaultCollection, metric(), model_,
                             deleted_));
  }
  // Search agrees with the oracle on a few random queries (list_size 0:
  // the larger of k and 100).
  void ExpectSearchMatchesModel(uint32_t k, uint64_t seed, uint32_t list_size = 0) {
    SearchOptions so;
    so.k = k;
    so.list_size = list_size != 0 ? list_size : std::max<uint32_t>(k, 100);
    for (int q = 0; q < 5; ++q) {
      const std::vector<float> query = RandomVector(dim(), seed + q);
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(query, so);
      ASSERT_OK(got);
      EXPECT_TRUE(MatchesOracle(*got, model_, query, metric(), k))
          << "query " << q << ", list_size " << so.list_size;
    }
  }

  TempDir dir_;  // declared first: outlives db_
  Options options_;
  std::unique_ptr<DB> db_;
  VectorMap model_;
  std::vector<uint64_t> deleted_;
};

// ---- Put / Get ----

TEST_F(DbTest, PutThenGetReturnsVector) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  const std::vector<float> v = {1.5f, -2.0f, 0.0f, 3.25f};
  ASSERT_OK(db_->Put(7, v));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(7));
  EXPECT_EQ(got, v);
}

TEST_F(DbTest, GetReturnsNormalizedVectorForCosine) {
  ASSERT_NO_FATAL_FAILURE(Open(3, Metric::kCosine));
  ASSERT_OK(db_->Put(1, std::vector<float>{3.0f, 0.0f, 4.0f}));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(1));
  EXPECT_TRUE(VectorsNear(got, std::vector<float>{0.6f, 0.0f, 0.8f}));
}

TEST_F(DbTest, GetReturnsVectorUnchangedForInnerProduct) {
  ASSERT_NO_FATAL_FAILURE(Open(3, Metric::kInnerProduct));
  const std::vector<float> v = {3.0f, 0.0f, 4.0f};
  ASSERT_OK(db_->Put(1, v));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(1));
  EXPECT_EQ(got, v);
}

TEST_F(DbTest, GetOfAbsentIdIsNotFound) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  EXPECT_STATUS_CODE(db_->Get(1), StatusCode::kNotFound);
  ASSERT_OK(db_->Put(1, RandomVector(4, 1)));
  EXPECT_STATUS_CODE(db_->Get(2), StatusCode::kNotFound);
}

TEST_F(DbTest, ExtremeIdsRoundTrip) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kL2, 3));
  const uint64_t ids[] = {0, 1, uint64_t{1} << 32, uint64_t{1} << 63,
                          std::numeric_limits<uint64_t>::max()};
  for (uint64_t id : ids) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, id % 1000 + 1)));
  }
  ExpectHoldsModel();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectHoldsModel();
}

// ---- Overwrite ----

TEST_F(DbTest, OverwriteNewestWinsInGet) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  ASSERT_OK(db_->Put(5, std::vector<float>{1, 1, 1, 1}));
  ASSERT_OK(db_->Put(5, std::vector<float>{2, 2, 2, 2}));
  ASSERT_OK(db_->Put(5, std::vector<float>{3, 3, 3, 3}));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(5));
  EXPECT_EQ(got, (std::vector<float>{3, 3, 3, 3}));
}

TEST_F(DbTest, OverwriteNewestWinsInSearch) {
  ASSERT_NO_FATAL_FAILURE(Open(2, Metric::kL2, 3));
  const std::vector<float> old_v = {0, 0};
  const std::vector<float> new_v = {10, 10};
  ASSERT_OK(db_->Put(1, old_v));
  ASSERT_OK(db_->Put(2, std::vector<float>{1, 0}));
  ASSERT_OK(db_->Put(1, new_v));
  SearchOptions so;
  so.k = 10;
  // Near the old position: only id 2 is close, id 1 is at its new distance.
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(old_v, so));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 2u);
  EXPECT_FLOAT_EQ(got[0].distance, 1.0f);
  EXPECT_EQ(got[1].id, 1u);
  EXPECT_FLOAT_EQ(got[1].distance, 200.0f);
  // At the new position, id 1 is exact.
  ASSERT_OK_AND_ASSIGN(got, db_->Search(new_v, so));
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0].id, 1u);
  EXPECT_FLOAT_EQ(got[0].distance, 0.0f);
}

// ---- Delete ----

TEST_F(DbTest, DeleteHidesFromGet) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  ASSERT_OK(db_->Put(9, RandomVector(4, 9)));
  ASSERT_OK(db_->Delete(9));
  EXPECT_STATUS_CODE(db_->Get(9), StatusCode::kNotFound);
}

TEST_F(DbTest, DeleteHidesFromSearch) {
  ASSERT_NO_FATAL_FAILURE(Open(2, Metric::kL2, 2));
  ASSERT_OK(db_->Put(1, std::vector<float>{0, 0}));
  ASSERT_OK(db_->Put(2, std::vector<float>{1, 1}));
  ASSERT_OK(db_->Delete(1));
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search(std::vector<float>{0, 0}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 2u);
}

TEST_F(DbTest, DeleteOfAbsentIdIsOk) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  EXPECT_OK(db_->Delete(12345));
  EXPECT_STATUS_CODE(db_->Get(12345), StatusCode::kNotFound);
  // Deleting twice is OK too.
  ASSERT_OK(db_->Put(1, RandomVector(4, 1)));
  EXPECT_OK(db_->Delete(1));
  EXPECT_OK(db_->Delete(1));
  EXPECT_STATUS_CODE(db_->Get(1), StatusCode::kNotFound);
}

TEST_F(DbTest, PutAfterDeleteMakesIdVisibleAgain) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  ASSERT_OK(db_->Put(3, RandomVector(4, 1)));
  ASSERT_OK(db_->Delete(3));
  const std::vector<float> v = RandomVector(4, 2);
  ASSERT_OK(db_->Put(3, v));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(3));
  EXPECT_EQ(got, v);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_OK_AND_ASSIGN(got, db_->Get(3));
  EXPECT_EQ(got, v);
}

// ---- PutBatch ----

TEST_F(DbTest, PutBatchWritesEveryRow) {
  ASSERT_NO_FATAL_FAILURE(Open(5, Metric::kL2, 3));
  const size_t n = 50;
  const std::vector<float> rows = RandomVectors(n, 5, 77);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(1000 + i * 7);
  ASSERT_NO_FATAL_FAILURE(PutBatchBoth(ids, rows));
  ExpectHoldsModel();
}

TEST_F(DbTest, PutBatchWithDuplicateIdLastRowWins) {
  ASSERT_NO_FATAL_FAILURE(Open(2, Metric::kL2, 2));
  const std::vector<uint64_t> ids = {4, 8, 4, 6, 4};
  const std::vector<float> rows = {1, 1,  //
                                   2, 2,  //
                                   3, 3,  //
                                   4, 4,  //
                                   5, 5};
  ASSERT_OK(db_->PutBatch(ids, rows));
  model_ = {{4, {5, 5}}, {8, {2, 2}}, {6, {4, 4}}};
  ExpectHoldsModel();
  // Search sees only the last row of id 4: query at an earlier row finds 8/6.
  const std::vector<float> q = {1, 1};
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(q));
  EXPECT_TRUE(MatchesOracle(got, model_, q, Metric::kL2, 10));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectHoldsModel();
  ASSERT_OK_AND_ASSIGN(got, db_->Search(q));
  EXPECT_TRUE(MatchesOracle(got, model_, q, Metric::kL2, 10));
}

// Batches large enough to be written through the log by the pool (whose
// rows the memtable then reads in place, in the log files' views, on tmpfs):
// every row reads back, and searches find them, while the log moves from
// file to file under one memtable; then through a flush (which removes the
// log files the rows were read from) and a reopen.
class DbLargeBatchTest : public DbTest, public ::testing::WithParamInterface<Metric> {};

TEST_P(DbLargeBatchTest, RowsReadBackThroughLogRotationFlushAndReopen) {
  Options o = DefaultOptions(16, GetParam(), 2);
  o.wal_file_bytes = 1 << 20;  // several files under the one memtable
  ASSERT_NO_FATAL_FAILURE(Open(o));
  for (uint64_t b = 0; b < 8; ++b) {
    const size_t n = 5000;  // 80,000 floats: the pool's, and 180 KB a shard
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < n; ++i) ids.push_back((b * 3000 + i) % 20000);  // overwrites
    const std::vector<float> rows = RandomVectors(n, 16, 1000 + b);
    ASSERT_NO_FATAL_FAILURE(PutBatchBoth(ids, rows));
    ASSERT_NO_FATAL_FAILURE(PutBoth(50000 + b, RandomVector(16, 9000 + b)));
    ASSERT_NO_FATAL_FAILURE(DeleteBoth(b * 3000 + 7));
  }
  ExpectHoldsModel();
  ExpectSearchMatchesModel(10, 5);  // exact: everything is in the memtables
  ASSERT_OK(db_->Flush());
  ASSERT_OK(db_->WaitForCompact());
  ExpectHoldsModel();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectHoldsModel();
}

INSTANTIATE_TEST_SUITE_P(Metrics, DbLargeBatchTest,
                         ::testing::Values(Metric::kL2, Metric::kCosine));

// ---- Search ----

TEST_F(DbTest, L2DistanceIsSquared) {
  ASSERT_NO_FATAL_FAILURE(Open(2, Metric::kL2, 1));
  ASSERT_OK(db_->Put(1, std::vector<float>{3, 4}));
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search(std::vector<float>{0, 0}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FLOAT_EQ(got[0].distance, 25.0f);
}

TEST_F(DbTest, InnerProductDistanceIsNegativeDot) {
  ASSERT_NO_FATAL_FAILURE(Open(2, Metric::kInnerProduct, 1));
  ASSERT_OK(db_->Put(1, std::vector<float>{3, 4}));
  ASSERT_OK(db_->Put(2, std::vector<float>{1, 0}));
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search(std::vector<float>{2, 1}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 1u);
  EXPECT_FLOAT_EQ(got[0].distance, -10.0f);
  EXPECT_EQ(got[1].id, 2u);
  EXPECT_FLOAT_EQ(got[1].distance, -2.0f);
}

TEST_F(DbTest, CosineDistanceIsOneMinusCosAndIgnoresScale) {
  ASSERT_NO_FATAL_FAILURE(Open(2, Metric::kCosine, 1));
  ASSERT_OK(db_->Put(1, std::vector<float>{10, 0}));
  ASSERT_OK(db_->Put(2, std::vector<float>{0, 0.5f}));
  ASSERT_OK(db_->Put(3, std::vector<float>{-3, 0}));
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search(std::vector<float>{0.25f, 0}));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].id, 1u);
  EXPECT_NEAR(got[0].distance, 0.0f, 1e-6);
  EXPECT_EQ(got[1].id, 2u);
  EXPECT_NEAR(got[1].distance, 1.0f, 1e-6);
  EXPECT_EQ(got[2].id, 3u);
  EXPECT_NEAR(got[2].distance, 2.0f, 1e-6);
}

TEST_F(DbTest, SearchOfEmptyCollectionReturnsNothing) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search(RandomVector(4, 1)));
  EXPECT_TRUE(got.empty());
}

TEST_F(DbTest, SearchReturnsAtMostKSortedByDistance) {
  ASSERT_NO_FATAL_FAILURE(Open(6, Metric::kL2, 3));
  for (uint64_t id = 0; id < 40; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(6, id + 100)));
  }
  for (uint32_t k : {1u, 5u, 39u, 40u}) {
    SearchOptions so;
    so.k = k;
    so.list_size = 100;
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                         db_->Search(RandomVector(6, k), so));
    EXPECT_EQ(got.size(), k);
    EXPECT_TRUE(IsSortedTopK(got, k));
  }
}

TEST_F(DbTest, SearchWithKLargerThanCountReturnsEverything) {
  ASSERT_NO_FATAL_FAILURE(Open(3, Metric::kL2, 2));
  for (uint64_t id = 0; id < 7; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(3, id)));
  }
  SearchOptions so;
  so.k = 50;
  so.list_size = 50;
  const std::vector<float> q = RandomVector(3, 99);
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(q, so));
  EXPECT_TRUE(MatchesOracle(got, model_, q, Metric::kL2, 50));
  EXPECT_EQ(got.size(), 7u);
}

TEST_F(DbTest, SearchBreaksExactTiesById) {
  // Identical vectors under several ids, spread over shards: equal distances
  // come back by ascending id, and k cuts the tie group at the smallest ids.
  ASSERT_NO_FATAL_FAILURE(Open(3, Metric::kL2, 5));
  const std::vector<float> v = {0.5f, -0.25f, 1.0f};
  for (uint64_t id : {40, 7, 93, 12, 3, 58}) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, v));
  }
  ASSERT_NO_FATAL_FAILURE(PutBoth(1000, {5, 5, 5}));
  SearchOptions so;
  so.k = 4;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(v, so));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].id, 3u);
  EXPECT_EQ(got[1].id, 7u);
  EXPECT_EQ(got[2].id, 12u);
  EXPECT_EQ(got[3].id, 40u);
  for (const Neighbor& n : got) EXPECT_EQ(n.distance, 0.0f);
}

TEST_F(DbTest, SearchBatchEqualsPerQuerySearch) {
  const uint32_t d = 16;
  ASSERT_NO_FATAL_FAILURE(Open(d, Metric::kL2, 3));
  const size_t n = 200;
  const std::vector<float> rows = RandomVectors(n, d, 5);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(i * 3 + 1);
  ASSERT_OK(db_->PutBatch(ids, rows));
  ASSERT_OK(db_->Delete(4));
  const size_t nq = 9;
  const std::vector<float> queries = RandomVectors(nq, d, 6);
  for (uint32_t k : {1u, 7u, 250u}) {
    SearchOptions so;
    so.k = k;
    so.list_size = std::max<uint32_t>(k, 100);
    ASSERT_OK_AND_ASSIGN(std::vector<std::vector<Neighbor>> batch,
                         db_->SearchBatch(queries, so));
    ASSERT_EQ(batch.size(), nq);
    for (size_t q = 0; q < nq; ++q) {
      ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> single,
                           db_->Search(Row(queries, q, d), so));
      ASSERT_EQ(batch[q].size(), single.size()) << "query " << q;
      for (size_t i = 0; i < single.size(); ++i) {
        EXPECT_EQ(batch[q][i].id, single[i].id) << "query " << q << " pos " << i;
        EXPECT_NEAR(batch[q][i].distance, single[i].distance,
                    1e-5 * std::abs(single[i].distance) + 1e-6)
            << "query " << q << " pos " << i;
      }
    }
  }
}

TEST_F(DbTest, SearchBatchOfOneQueryEqualsSearch) {
  ASSERT_NO_FATAL_FAILURE(Open(4, Metric::kCosine, 2));
  for (uint64_t id = 0; id < 30; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(4, id)));
  }
  const std::vector<float> q = RandomVector(4, 1234);
  ASSERT_OK_AND_ASSIGN(std::vector<std::vector<Neighbor>> batch,
                       db_->SearchBatch(q));
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_TRUE(MatchesOracle(batch[0], model_, q, Metric::kCosine, 10));
}

// Search equals the brute-force oracle exactly for every metric, several dims
// (odd ones too) and shard counts; with overwrites and deletes mixed in, and
// again after reopen (the memtables are rebuilt from the logs).
class SearchOracleTest
    : public DbTest,
      public ::testing::WithParamInterface<std::tuple<Metric, uint32_t, uint32_t>> {
};

TEST_P(SearchOracleTest, SearchEqualsBruteForceOracle) {
  const auto [m, d, shards] = GetParam();
  ASSERT_NO_FATAL_FAILURE(Open(d, m, shards));
  const size_t n_batch = 200;
  const uint64_t seed = d * 1000 + shards * 10 + static_cast<int>(m);
  const std::vector<float> rows = RandomVectors(n_batch, d, seed);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n_batch; ++i) ids.push_back(i * 11 + 5);
  ASSERT_NO_FATAL_FAILURE(PutBatchBoth(ids, rows));
  for (uint64_t i = 0; i < 40; ++i) {  // single puts
    ASSERT_NO_FATAL_FAILURE(PutBoth(100000 + i, RandomVector(d, seed + 7 + i)));
  }
  for (size_t i = 0; i < 20; ++i) {  // overwrites
    ASSERT_NO_FATAL_FAILURE(PutBoth(ids[i * 3], RandomVector(d, seed + 500 + i)));
  }
  for (size_t i = 0; i < 20; ++i) {  // deletes
    ASSERT_NO_FATAL_FAILURE(DeleteBoth(ids[i * 5 + 1]));
  }

  std::vector<std::vector<float>> queries;
  for (int q = 0; q < 6; ++q) queries.push_back(RandomVector(d, seed + 9000 + q));
  queries.push_back(model_.begin()->second);   // a stored vector
  queries.push_back(model_.rbegin()->second);  // another one
  const uint32_t ks[] = {1, 10, static_cast<uint32_t>(model_.size() + 5)};

  auto check_all = [&](const char* phase) {
    for (uint32_t k : ks) {
      SearchOptions so;
      so.k = k;
      so.list_size = std::max<uint32_t>(k, 100);
      for (size_t q = 0; q < queries.size(); ++q) {
        absl::StatusOr<std::vector<Neighbor>> got = db_->Search(queries[q], so);
        ASSERT_OK(got);
        EXPECT_TRUE(MatchesOracle(*got, model_, queries[q], m, k))
            << phase << ", query " << q;
      }
    }
  };
  ASSERT_NO_FATAL_FAILURE(check_all("before reopen"));
  ExpectHoldsModel();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_NO_FATAL_FAILURE(check_all("after reopen"));
  ExpectHoldsModel();
}

INSTANTIATE_TEST_SUITE_P(
    MetricsDimsShards, SearchOracleTest,
    ::testing::Combine(::testing::Values(Metric::kL2, Metric::kInnerProduct,
                                         Metric::kCosine),
                       ::testing::Values(1u, 3u, 97u, 128u, 1000u),
                       ::testing::Values(1u, 2u, 5u)),
    [](const auto& info) {
      return MetricName(std::get<0>(info.param)) + "_dim" +
             std::to_string(std::get<1>(info.param)) + "_shards" +
             std::to_string(std::get<2>(info.param));
    });

// A search large enough (stored vectors x list_size) is fanned out over the
// shards on the pool; the answer is the same.
TEST_F(DbTest, SearchFannedOutOverThePoolEqualsBruteForceOracle) {
  const uint32_t d = 16;
  ASSERT_NO_FATAL_FAILURE(Open(d, Metric::kL2, 4));
  const size_t n = 3000;
  const std::vector<float> rows = RandomVectors(n, d, 77);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(i * 3 + 1);
  ASSERT_NO_FATAL_FAILURE(PutBatchBoth(ids, rows));
  ASSERT_NO_FATAL_FAILURE(ExpectSearchMatchesModel(10, 500, 100));
  // 3000 x 20000 >= 2^25: fanned out.
  ASSERT_NO_FATAL_FAILURE(ExpectSearchMatchesModel(10, 500, 20000));
}

// ---- Persistence ----

TEST_F(DbTest, ReopenAfterCloseKeepsEveryWrite) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kL2, 3));
  for (uint64_t id = 0; id < 100; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, id)));
  }
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectHoldsModel();
  ExpectSearchMatchesModel(10, 1);
}

TEST_F(DbTest, ReopenKeepsWritesDeletesAndOverwritesOverManyCycles) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kCosine, 4));
  uint64_t seed = 1;
  for (int cycle = 0; cycle < 5; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    // New ids, overwrites of old ids, deletes (present and absent), and a
    // re-put of an id deleted in an earlier cycle.
    for (uint64_t i = 0; i < 30; ++i) {
      ASSERT_NO_FATAL_FAILURE(
          PutBoth(cycle * 100 + i, RandomVector(8, seed++)));
    }
    if (cycle > 0) {
      for (uint64_t i = 0; i < 10; ++i) {
        ASSERT_NO_FATAL_FAILURE(
            PutBoth((cycle - 1) * 100 + i, RandomVector(8, seed++)));
      }
      for (uint64_t i = 20; i < 25; ++i) {
        ASSERT_NO_FATAL_FAILURE(DeleteBoth((cycle - 1) * 100 + i));
      }
      ASSERT_NO_FATAL_FAILURE(DeleteBoth(999000 + cycle));  // never written
    }
    if (cycle > 1) {
      // Re-put an id deleted two cycles ago.
      const uint64_t id = (cycle - 2) * 100 + 20;
      ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, seed++)));
      std::erase(deleted_, id);
    }
    // A batch that overwrites a few ids twice within itself.
    const uint64_t base = static_cast<uint64_t>(cycle) * 100;
    std::vector<uint64_t> ids = {base + 50, base + 1, base + 50};
    std::vector<float> rows = RandomVectors(3, 8, seed++);
    ASSERT_OK(db_->PutBatch(ids, rows));
    model_[ids[0]] = std::vector<float>(Row(rows, 2, 8).begin(),
                                        Row(rows, 2, 8).end());
    model_[ids[1]] = std::vector<float>(Row(rows, 1, 8).begin(),
                                        Row(rows, 1, 8).end());

    ExpectHoldsModel();
    ASSERT_NO_FATAL_FAILURE(Reopen());
    ExpectHoldsModel();
    ExpectSearchMatchesModel(10, seed++);
  }
}

TEST_F(DbTest, DestructorWithoutCloseKeepsWrites) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kL2, 2));
  for (uint64_t id = 0; id < 50; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, id)));
  }
  ASSERT_NO_FATAL_FAILURE(DeleteBoth(10));
  ASSERT_NO_FATAL_FAILURE(PutBoth(11, RandomVector(8, 1111)));
  db_.reset();  // no Close()
  ASSERT_NO_FATAL_FAILURE(Open(options_));
  ExpectHoldsModel();
  ExpectSearchMatchesModel(10, 3);
}

TEST_F(DbTest, ReopenWithDefaultOptionsKeepsDefaultCollection) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kInnerProduct, 2));
  for (uint64_t id = 0; id < 20; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, id)));
  }
  ASSERT_OK(db_->Close());
  db_.reset();
  // dim 0: "as stored".
  Options o = DefaultOptions(0);
  ASSERT_NO_FATAL_FAILURE(Open(o));
  options_.default_collection.dim = 8;
  options_.default_collection.metric = Metric::kInnerProduct;
  ExpectHoldsModel();
  ExpectSearchMatchesModel(5, 10);
}

// ---- Lifecycle ----

TEST_F(DbTest, CloseTwiceIsOk) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  ASSERT_OK(db_->Put(1, RandomVector(4, 1)));
  EXPECT_OK(db_->Close());
  EXPECT_OK(db_->Close());
}

TEST_F(DbTest, CallsAfterCloseReturnFailedPrecondition) {
  ASSERT_NO_FATAL_FAILURE(Open(4));
  ASSERT_OK(db_->Put(1, RandomVector(4, 1)));
  ASSERT_OK(db_->Close());
  const std::vector<float> v = RandomVector(4, 2);
  const std::vector<uint64_t> ids = {2};
  CollectionOptions co;
  co.dim = 4;
  co.shard_count = 1;
  EXPECT_STATUS_CODE(db_->Put(2, v), StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->PutBatch(ids, v), StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->Delete(1), StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->Get(1), StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->Search(v), StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->SearchBatch(v), StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->CreateCollection("c", co),
                     StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->DropCollection(kDefaultCollection),
                     StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->GetCollectionOptions(kDefaultCollection),
                     StatusCode::kFailedPrecondition);
  // Named-collection forms too.
  EXPECT_STATUS_CODE(db_->Put(kDefaultCollection, 2, v),
                     StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(db_->Get(kDefaultCollection, 1),
                     StatusCode::kFailedPrecondition);
  // Flush/Compact/BulkLoad may be unimplemented; they must not succeed.
  for (const absl::Status& s :
       {db_->Flush(), db_->Compact(), db_->BulkLoad(ids, v)}) {
    EXPECT_TRUE(s.code() == StatusCode::kFailedPrecondition ||
                s.code() == StatusCode::kUnimplemented)
        << s;
  }
  (void)db_->ListCollections();  // must not crash
  // Close stays OK, and the data is intact for the next Open.
  EXPECT_OK(db_->Close());
  ASSERT_NO_FATAL_FAILURE(Open(options_));
  EXPECT_OK(db_->Get(1));
}

// ---- Flush / Compact / BulkLoad: optional, but must not lose data ----

bool OkOrUnimplemented(const absl::Status& s) {
  return s.ok() || s.code() == StatusCode::kUnimplemented;
}

TEST_F(DbTest, FlushIsOkOrUnimplementedAndKeepsEveryVector) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kL2, 2));
  for (uint64_t id = 0; id < 100; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, id)));
  }
  ASSERT_NO_FATAL_FAILURE(DeleteBoth(5));
  const absl::Status s = db_->Flush();
  EXPECT_TRUE(OkOrUnimplemented(s)) << s;
  ExpectHoldsModel();
  // Writes after a flush shadow flushed versions.
  ASSERT_NO_FATAL_FAILURE(PutBoth(6, RandomVector(8, 666)));
  ASSERT_NO_FATAL_FAILURE(DeleteBoth(7));
  ExpectHoldsModel();
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search(RandomVector(8, 1)));
  EXPECT_TRUE(IsSortedTopK(got, 10));
  for (const Neighbor& n : got) EXPECT_TRUE(model_.count(n.id)) << n.id;
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectHoldsModel();
}

TEST_F(DbTest, CompactIsOkOrUnimplementedAndKeepsEveryLiveVector) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kL2, 2));
  for (uint64_t id = 0; id < 100; ++id) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, id)));
  }
  EXPECT_TRUE(OkOrUnimplemented(db_->Flush()));
  for (uint64_t id = 0; id < 100; id += 3) {
    ASSERT_NO_FATAL_FAILURE(PutBoth(id, RandomVector(8, id + 5000)));
  }
  for (uint64_t id = 1; id < 100; id += 7) {
    ASSERT_NO_FATAL_FAILURE(DeleteBoth(id));
  }
  EXPECT_TRUE(OkOrUnimplemented(db_->Flush()));
  const absl::Status s = db_->Compact();
  EXPECT_TRUE(OkOrUnimplemented(s)) << s;
  ExpectHoldsModel();
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search(RandomVector(8, 1)));
  EXPECT_TRUE(IsSortedTopK(got, 10));
  for (const Neighbor& n : got) EXPECT_TRUE(model_.count(n.id)) << n.id;
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectHoldsModel();
}

TEST_F(DbTest, BulkLoadIsOkOrUnimplementedAndLoadedVectorsAreReadable) {
  ASSERT_NO_FATAL_FAILURE(Open(8, Metric::kL2, 2));
  const size_t n = 100;
  const std::vector<float> rows = RandomVectors(n, 8, 42);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(i + 10);
  const absl::Status s = db_->BulkLoad(ids, rows);
  EXPECT_TRUE(OkOrUnimplemented(s)) << s;
  if (!s.ok()) return;
  for (size_t i = 0; i < n; ++i) {
    model_[ids[i]] = std::vector<float>(Row(rows, i, 8).begin(),
                                        Row(rows, i, 8).end());
  }
  ExpectHoldsModel();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectHoldsModel();
}

}  // namespace
}  // namespace shoal::test

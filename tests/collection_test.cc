// Copyright 2026 The shoal Authors.
//
// Named collections: create, drop, list; each has its own shape and its own
// data; everything persists across reopen; and the rules for the default
// collection on first and later Open.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

using ::absl::StatusCode;

CollectionOptions Shape(uint32_t dim, Metric metric = Metric::kL2,
                        uint32_t shards = 2) {
  CollectionOptions co;
  co.dim = dim;
  co.metric = metric;
  co.shard_count = shards;
  return co;
}

class CollectionTest : public ::testing::Test {
 protected:
  void Open(const Options& options) {
    db_.reset();
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, dir_.path());
    ASSERT_OK(db);
    db_ = std::move(db).value();
  }
  // A DB with no default collection.
  void OpenEmpty() { Open(DefaultOptions(0)); }
  void Reopen() {
    ASSERT_OK(db_->Close());
    db_.reset();
    OpenEmpty();
  }
  // Puts `n` random vectors (ids first_id..) into `name` and the model.
  void Fill(std::string_view name, uint32_t dim, uint64_t first_id, size_t n,
            uint64_t seed, VectorMap* model) {
    const std::vector<float> rows = RandomVectors(n, dim, seed);
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < n; ++i) {
      ids.push_back(first_id + i);
      (*model)[first_id + i] = std::vector<float>(Row(rows, i, dim).begin(),
                                                  Row(rows, i, dim).end());
    }
    ASSERT_OK(db_->PutBatch(name, ids, rows));
  }
  void ExpectSearchMatches(std::string_view name, const CollectionOptions& co,
                           const VectorMap& model, uint64_t seed) {
    for (int q = 0; q < 3; ++q) {
      const std::vector<float> query = RandomVector(co.dim, seed + q);
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(name, query);
      ASSERT_OK(got);
      EXPECT_TRUE(MatchesOracle(*got, model, query, co.metric, 10))
          << name << " query " << q;
    }
  }
  void ExpectEmpty(std::string_view name, uint32_t dim,
                   std::span<const uint64_t> ids) {
    for (uint64_t id : ids) {
      EXPECT_STATUS_CODE(db_->Get(name, id), StatusCode::kNotFound)
          << name << " id " << id;
    }
    absl::StatusOr<std::vector<Neighbor>> got =
        db_->Search(name, RandomVector(dim, 1));
    ASSERT_OK(got);
    EXPECT_TRUE(got->empty()) << name << " has " << got->size() << " results";
  }

  TempDir dir_;
  std::unique_ptr<DB> db_;
};

// ---- Create / Drop / List ----

TEST_F(CollectionTest, EachCollectionKeepsItsVectorCodeAcrossReopen) {
  OpenEmpty();
  CollectionOptions none = Shape(16);
  none.code = VectorCode::kNone;
  ASSERT_OK(db_->CreateCollection("plain", none));
  ASSERT_OK(db_->CreateCollection("coded", Shape(16)));
  VectorMap plain, coded;
  Fill("plain", 16, 0, 300, 1, &plain);
  Fill("coded", 16, 0, 300, 2, &coded);
  ASSERT_OK(db_->Flush());
  Reopen();
  ASSERT_OK_AND_ASSIGN(CollectionOptions got, db_->GetCollectionOptions("plain"));
  EXPECT_EQ(got.code, VectorCode::kNone);
  ASSERT_OK_AND_ASSIGN(got, db_->GetCollectionOptions("coded"));
  EXPECT_EQ(got.code, VectorCode::kSq8);
  ExpectSearchMatches("plain", none, plain, 7);
  ExpectSearchMatches("coded", Shape(16), coded, 8);
  CollectionOptions bad = Shape(16);
  bad.code = static_cast<VectorCode>(9);
  EXPECT_STATUS_CODE(db_->CreateCollection("bad", bad), StatusCode::kInvalidArgument);
}

TEST_F(CollectionTest, NewDbWithoutDefaultHasNoCollections) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  EXPECT_TRUE(db_->ListCollections().empty());
}

TEST_F(CollectionTest, CreateCollectionThenListIncludesIt) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("images", Shape(4)));
  EXPECT_EQ(db_->ListCollections(), std::vector<std::string>{"images"});
}

TEST_F(CollectionTest, ListCollectionsIsSorted) {
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(4)));
  std::vector<std::string> names = {"zeta", "alpha", "Mid", "beta_2",
                                    "b.c-1", "9lives", "alpha2"};
  for (const std::string& n : names) {
    ASSERT_OK(db_->CreateCollection(n, Shape(4)));
  }
  names.push_back(std::string(kDefaultCollection));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(db_->ListCollections(), names);
}

TEST_F(CollectionTest, ValidNamesAreAccepted) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const std::vector<std::string> names = {
      "a", "A", "0", "a-b_c.d9", "x.", "-dash", "_under",
      std::string(128, 'n')};  // 128 characters is the maximum
  for (const std::string& n : names) {
    EXPECT_OK(db_->CreateCollection(n, Shape(2, Metric::kL2, 1))) << n;
    EXPECT_OK(db_->Put(n, 1, std::vector<float>{1, 2})) << n;
  }
  ASSERT_NO_FATAL_FAILURE(Reopen());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(db_->ListCollections(), sorted);
  for (const std::string& n : names) {
    ASSERT_OK_AND_ASSIGN(std::vector<float> v, db_->Get(n, 1));
    EXPECT_EQ(v, (std::vector<float>{1, 2})) << n;
  }
}

TEST_F(CollectionTest, DropCollectionRemovesItFromList) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("a", Shape(4)));
  ASSERT_OK(db_->CreateCollection("b", Shape(4)));
  ASSERT_OK(db_->DropCollection("a"));
  EXPECT_EQ(db_->ListCollections(), std::vector<std::string>{"b"});
  EXPECT_STATUS_CODE(db_->GetCollectionOptions("a"), StatusCode::kNotFound);
}

TEST_F(CollectionTest, DroppedCollectionIsNotFoundForEveryCall) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("gone", Shape(2)));
  ASSERT_OK(db_->Put("gone", 1, std::vector<float>{1, 1}));
  ASSERT_OK(db_->DropCollection("gone"));
  const std::vector<float> v = {1, 1};
  const std::vector<uint64_t> ids = {1};
  EXPECT_STATUS_CODE(db_->Get("gone", 1), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->Put("gone", 2, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->PutBatch("gone", ids, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->Delete("gone", 1), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->Search("gone", v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->SearchBatch("gone", v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->DropCollection("gone"), StatusCode::kNotFound);
}

TEST_F(CollectionTest, DropLeavesOtherCollectionsIntact) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const CollectionOptions co = Shape(6, Metric::kL2, 3);
  ASSERT_OK(db_->CreateCollection("keep", co));
  ASSERT_OK(db_->CreateCollection("drop", co));
  VectorMap keep, drop;
  ASSERT_NO_FATAL_FAILURE(Fill("keep", 6, 0, 50, 1, &keep));
  ASSERT_NO_FATAL_FAILURE(Fill("drop", 6, 0, 50, 2, &drop));
  ASSERT_OK(db_->DropCollection("drop"));
  EXPECT_TRUE(HoldsExactly(*db_, "keep", co.metric, keep));
  ExpectSearchMatches("keep", co, keep, 10);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(db_->ListCollections(), std::vector<std::string>{"keep"});
  EXPECT_TRUE(HoldsExactly(*db_, "keep", co.metric, keep));
  ExpectSearchMatches("keep", co, keep, 10);
}

// ---- Shape and isolation ----

TEST_F(CollectionTest, GetCollectionOptionsReturnsWhatWasCreated) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  CollectionOptions co = Shape(17, Metric::kInnerProduct, 3);
  co.graph.max_degree = 24;
  co.graph.build_list_size = 50;
  co.graph.alpha = 1.5f;
  ASSERT_OK(db_->CreateCollection("c", co));
  auto check = [&] {
    ASSERT_OK_AND_ASSIGN(CollectionOptions got, db_->GetCollectionOptions("c"));
    EXPECT_EQ(got.dim, 17u);
    EXPECT_EQ(got.metric, Metric::kInnerProduct);
    EXPECT_EQ(got.shard_count, 3u);
    EXPECT_EQ(got.graph.max_degree, 24u);
    EXPECT_EQ(got.graph.build_list_size, 50u);
    EXPECT_FLOAT_EQ(got.graph.alpha, 1.5f);
  };
  ASSERT_NO_FATAL_FAILURE(check());
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_NO_FATAL_FAILURE(check());
}

TEST_F(CollectionTest, ShardCountZeroResolvesToAtLeastOne) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("auto", Shape(4, Metric::kL2, 0)));
  ASSERT_OK_AND_ASSIGN(CollectionOptions got,
                       db_->GetCollectionOptions("auto"));
  EXPECT_GE(got.shard_count, 1u);
  EXPECT_LE(got.shard_count, 256u);
  const uint32_t resolved = got.shard_count;
  // The resolved count is what is stored: it does not change on reopen.
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_OK_AND_ASSIGN(got, db_->GetCollectionOptions("auto"));
  EXPECT_EQ(got.shard_count, resolved);
}

TEST_F(CollectionTest, EachCollectionHasItsOwnDimAndMetric) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("small", Shape(3, Metric::kL2, 1)));
  ASSERT_OK(db_->CreateCollection("wide", Shape(130, Metric::kCosine, 4)));
  ASSERT_OK(db_->Put("small", 1, std::vector<float>{3, 0, 4}));
  ASSERT_OK(db_->Put("wide", 1, RandomVector(130, 1)));
  // Each collection checks its own dim.
  EXPECT_STATUS_CODE(db_->Put("small", 2, RandomVector(130, 2)),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->Put("wide", 2, std::vector<float>{3, 0, 4}),
                     StatusCode::kInvalidArgument);
  // And its own metric: L2 keeps the vector, cosine normalizes it.
  ASSERT_OK_AND_ASSIGN(std::vector<float> small, db_->Get("small", 1));
  EXPECT_EQ(small, (std::vector<float>{3, 0, 4}));
  ASSERT_OK_AND_ASSIGN(std::vector<float> wide, db_->Get("wide", 1));
  EXPECT_TRUE(VectorsNear(wide, Normalized(RandomVector(130, 1))));
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                       db_->Search("small", std::vector<float>{0, 0, 0}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FLOAT_EQ(got[0].distance, 25.0f);
}

TEST_F(CollectionTest, SameIdInTwoCollectionsIsIndependent) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const CollectionOptions co = Shape(4, Metric::kL2, 2);
  ASSERT_OK(db_->CreateCollection("left", co));
  ASSERT_OK(db_->CreateCollection("right", co));
  const std::vector<float> l = {1, 1, 1, 1};
  const std::vector<float> r = {-1, -1, -1, -1};
  ASSERT_OK(db_->Put("left", 42, l));
  ASSERT_OK(db_->Put("right", 42, r));
  ASSERT_OK(db_->Put("right", 43, r));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get("left", 42));
  EXPECT_EQ(got, l);
  ASSERT_OK_AND_ASSIGN(got, db_->Get("right", 42));
  EXPECT_EQ(got, r);
  EXPECT_STATUS_CODE(db_->Get("left", 43), StatusCode::kNotFound);
  // Search sees only its own collection.
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> hits, db_->Search("left", r));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].id, 42u);
  EXPECT_FLOAT_EQ(hits[0].distance, 16.0f);
  // Delete in one leaves the other.
  ASSERT_OK(db_->Delete("left", 42));
  EXPECT_STATUS_CODE(db_->Get("left", 42), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(got, db_->Get("right", 42));
  EXPECT_EQ(got, r);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_STATUS_CODE(db_->Get("left", 42), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(got, db_->Get("right", 42));
  EXPECT_EQ(got, r);
}

TEST_F(CollectionTest, DefaultAndNamedCollectionsAreIsolated) {
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(2)));
  ASSERT_OK(db_->CreateCollection("named", Shape(2)));
  ASSERT_OK(db_->Put(1, std::vector<float>{1, 0}));
  ASSERT_OK(db_->Put("named", 1, std::vector<float>{0, 1}));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(1));
  EXPECT_EQ(got, (std::vector<float>{1, 0}));
  // The unnamed calls are the calls on kDefaultCollection.
  ASSERT_OK_AND_ASSIGN(got, db_->Get(kDefaultCollection, 1));
  EXPECT_EQ(got, (std::vector<float>{1, 0}));
  ASSERT_OK_AND_ASSIGN(got, db_->Get("named", 1));
  EXPECT_EQ(got, (std::vector<float>{0, 1}));
}

TEST_F(CollectionTest, ManyCollectionsKeepTheirOwnData) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const int kCollections = 12;
  std::vector<VectorMap> models(kCollections);
  std::vector<CollectionOptions> shapes;
  for (int c = 0; c < kCollections; ++c) {
    shapes.push_back(Shape(2 + c, static_cast<Metric>(c % 3), 1 + c % 4));
    const std::string name = "c" + std::to_string(c);
    ASSERT_OK(db_->CreateCollection(name, shapes[c]));
    // Overlapping id ranges across collections.
    ASSERT_NO_FATAL_FAILURE(
        Fill(name, shapes[c].dim, c * 5, 30, 100 + c, &models[c]));
  }
  auto check = [&] {
    for (int c = 0; c < kCollections; ++c) {
      const std::string name = "c" + std::to_string(c);
      EXPECT_TRUE(HoldsExactly(*db_, name, shapes[c].metric, models[c]))
          << name;
      ExpectSearchMatches(name, shapes[c], models[c], 1000 + c);
    }
  };
  check();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  check();
}

// ---- Persistence ----

TEST_F(CollectionTest, CollectionsAndDataPersistAcrossReopen) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const CollectionOptions a = Shape(5, Metric::kL2, 1);
  const CollectionOptions b = Shape(9, Metric::kCosine, 3);
  ASSERT_OK(db_->CreateCollection("a", a));
  ASSERT_OK(db_->CreateCollection("b", b));
  ASSERT_OK(db_->CreateCollection("empty", Shape(3)));
  VectorMap ma, mb;
  ASSERT_NO_FATAL_FAILURE(Fill("a", 5, 0, 60, 1, &ma));
  ASSERT_NO_FATAL_FAILURE(Fill("b", 9, 30, 60, 2, &mb));
  ASSERT_OK(db_->Delete("a", 7));
  ma.erase(7);
  const std::vector<uint64_t> deleted = {7};
  for (int cycle = 0; cycle < 3; ++cycle) {
    ASSERT_NO_FATAL_FAILURE(Reopen());
    EXPECT_EQ(db_->ListCollections(),
              (std::vector<std::string>{"a", "b", "empty"}));
    ASSERT_OK_AND_ASSIGN(CollectionOptions got, db_->GetCollectionOptions("b"));
    EXPECT_EQ(got.dim, 9u);
    EXPECT_EQ(got.metric, Metric::kCosine);
    EXPECT_EQ(got.shard_count, 3u);
    EXPECT_TRUE(HoldsExactly(*db_, "a", a.metric, ma, deleted));
    EXPECT_TRUE(HoldsExactly(*db_, "b", b.metric, mb));
    ExpectSearchMatches("a", a, ma, 50 + cycle);
    ExpectSearchMatches("b", b, mb, 60 + cycle);
    ExpectEmpty("empty", 3, std::vector<uint64_t>{0, 1, 30});
  }
}

TEST_F(CollectionTest, DropPersistsAcrossReopen) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("x", Shape(4)));
  ASSERT_OK(db_->Put("x", 1, RandomVector(4, 1)));
  ASSERT_OK(db_->DropCollection("x"));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_TRUE(db_->ListCollections().empty());
  EXPECT_STATUS_CODE(db_->Get("x", 1), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->GetCollectionOptions("x"), StatusCode::kNotFound);
}

TEST_F(CollectionTest, DropThenRecreateWithSameNameStartsEmpty) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("x", Shape(4, Metric::kL2, 2)));
  VectorMap old_data;
  ASSERT_NO_FATAL_FAILURE(Fill("x", 4, 0, 20, 1, &old_data));
  ASSERT_OK(db_->DropCollection("x"));
  // Same name, a different shape.
  const CollectionOptions fresh = Shape(6, Metric::kCosine, 3);
  ASSERT_OK(db_->CreateCollection("x", fresh));
  std::vector<uint64_t> old_ids;
  for (const auto& [id, v] : old_data) old_ids.push_back(id);
  ASSERT_NO_FATAL_FAILURE(ExpectEmpty("x", 6, old_ids));
  ASSERT_OK_AND_ASSIGN(CollectionOptions got, db_->GetCollectionOptions("x"));
  EXPECT_EQ(got.dim, 6u);
  EXPECT_EQ(got.metric, Metric::kCosine);
  // It works as a new collection, and old data never comes back on reopen.
  VectorMap new_data;
  ASSERT_NO_FATAL_FAILURE(Fill("x", 6, 10, 5, 2, &new_data));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_TRUE(HoldsExactly(*db_, "x", Metric::kCosine, new_data,
                           std::vector<uint64_t>{0, 1, 2, 9}));
  ExpectSearchMatches("x", fresh, new_data, 5);
}

TEST_F(CollectionTest, DropReopenRecreateStartsEmpty) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const CollectionOptions co = Shape(4, Metric::kL2, 2);
  ASSERT_OK(db_->CreateCollection("x", co));
  VectorMap old_data;
  ASSERT_NO_FATAL_FAILURE(Fill("x", 4, 0, 20, 1, &old_data));
  ASSERT_OK(db_->DropCollection("x"));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_OK(db_->CreateCollection("x", co));
  std::vector<uint64_t> old_ids;
  for (const auto& [id, v] : old_data) old_ids.push_back(id);
  ASSERT_NO_FATAL_FAILURE(ExpectEmpty("x", 4, old_ids));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ASSERT_NO_FATAL_FAILURE(ExpectEmpty("x", 4, old_ids));
}

TEST_F(CollectionTest, DropAndRecreateWithoutCloseStartsEmptyAfterReopen) {
  // The destructor path (no Close) must not resurrect dropped data either.
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const CollectionOptions co = Shape(4, Metric::kL2, 2);
  ASSERT_OK(db_->CreateCollection("x", co));
  VectorMap old_data;
  ASSERT_NO_FATAL_FAILURE(Fill("x", 4, 0, 20, 1, &old_data));
  ASSERT_OK(db_->DropCollection("x"));
  ASSERT_OK(db_->CreateCollection("x", co));
  ASSERT_OK(db_->Put("x", 100, RandomVector(4, 100)));
  db_.reset();
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  for (const auto& [id, v] : old_data) {
    EXPECT_STATUS_CODE(db_->Get("x", id), StatusCode::kNotFound) << id;
  }
  EXPECT_OK(db_->Get("x", 100));
}

// A bulk load still building its segments when its collection is dropped
// and created again under the same name must not publish into the new one
// (it once did, after a name lookup: the old rows came back, and newer puts
// lost to them).
TEST_F(CollectionTest, BulkLoadInFlightDuringDropAndRecreateDoesNotLandInTheNewCollection) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  const CollectionOptions co = Shape(16, Metric::kL2, 1);
  for (size_t rows = 20000;; rows *= 2) {
    ASSERT_OK(db_->CreateCollection("x", co));
    std::vector<uint64_t> ids(rows);
    for (size_t i = 0; i < rows; ++i) ids[i] = i;
    const std::vector<float> vectors = RandomVectors(rows, co.dim, 7);
    std::atomic<bool> done{false};
    absl::Status bulk;
    std::thread loader([&] {
      bulk = db_->BulkLoad("x", ids, vectors);
      done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // into the graph build
    const bool raced = !done.load();
    ASSERT_OK(db_->DropCollection("x"));
    ASSERT_OK(db_->CreateCollection("x", co));
    const std::vector<float> newer = RandomVector(co.dim, 99);
    ASSERT_OK(db_->Put("x", 5, newer));
    loader.join();
    if (!raced) {
      // The load finished before the drop: try again with a longer one.
      ASSERT_LT(rows, 1000000u) << "a bulk load of " << rows << " rows took under 50 ms";
      ASSERT_OK(db_->DropCollection("x"));
      continue;
    }
    EXPECT_FALSE(bulk.ok()) << "the load of the dropped collection reported success";
    for (int round = 0; round < 2; ++round) {
      EXPECT_STATUS_CODE(db_->Get("x", 7), StatusCode::kNotFound) << "round " << round;
      absl::StatusOr<std::vector<float>> got = db_->Get("x", 5);
      ASSERT_OK(got);
      EXPECT_EQ(*got, newer) << "round " << round;
      if (round == 0) ASSERT_NO_FATAL_FAILURE(Reopen());
    }
    break;
  }
}

// ---- The default collection ----

TEST_F(CollectionTest, DefaultCollectionIsCreatedOnFirstOpenWhenDimPositive) {
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(12, Metric::kCosine, 3)));
  EXPECT_EQ(db_->ListCollections(),
            std::vector<std::string>{std::string(kDefaultCollection)});
  ASSERT_OK_AND_ASSIGN(CollectionOptions got,
                       db_->GetCollectionOptions(kDefaultCollection));
  EXPECT_EQ(got.dim, 12u);
  EXPECT_EQ(got.metric, Metric::kCosine);
  EXPECT_EQ(got.shard_count, 3u);
  EXPECT_OK(db_->Put(1, RandomVector(12, 1)));
}

TEST_F(CollectionTest, DefaultCollectionIsNotCreatedWhenDimZero) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  EXPECT_TRUE(db_->ListCollections().empty());
  EXPECT_STATUS_CODE(db_->GetCollectionOptions(kDefaultCollection),
                     StatusCode::kNotFound);
}

TEST_F(CollectionTest, LaterOpenWithDimZeroUsesStoredDefault) {
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(6, Metric::kCosine, 3)));
  const std::vector<float> v = RandomVector(6, 5);
  ASSERT_OK(db_->Put(5, v));
  ASSERT_OK(db_->Close());
  db_.reset();
  // dim 0 with the default metric (kL2): "as stored", the metric is ignored.
  ASSERT_NO_FATAL_FAILURE(Open(Options{}));
  ASSERT_OK_AND_ASSIGN(CollectionOptions got,
                       db_->GetCollectionOptions(kDefaultCollection));
  EXPECT_EQ(got.dim, 6u);
  EXPECT_EQ(got.metric, Metric::kCosine);
  EXPECT_EQ(got.shard_count, 3u);
  ASSERT_OK_AND_ASSIGN(std::vector<float> back, db_->Get(5));
  EXPECT_TRUE(VectorsNear(back, Normalized(v)));
  EXPECT_OK(db_->Put(6, RandomVector(6, 6)));
}

TEST_F(CollectionTest, LaterOpenWithSameDefaultShapeSucceeds) {
  const Options o = DefaultOptions(6, Metric::kInnerProduct, 2);
  ASSERT_NO_FATAL_FAILURE(Open(o));
  ASSERT_OK(db_->Put(1, RandomVector(6, 1)));
  ASSERT_OK(db_->Close());
  db_.reset();
  ASSERT_NO_FATAL_FAILURE(Open(o));
  EXPECT_OK(db_->Get(1));
  EXPECT_EQ(db_->ListCollections(),
            std::vector<std::string>{std::string(kDefaultCollection)});
}

TEST_F(CollectionTest, LaterOpenWithDifferentDimIsInvalidArgument) {
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(6, Metric::kL2, 2)));
  const std::vector<float> v = RandomVector(6, 1);
  ASSERT_OK(db_->Put(1, v));
  ASSERT_OK(db_->Close());
  db_.reset();
  EXPECT_STATUS_CODE(DB::Open(DefaultOptions(7, Metric::kL2, 2), dir_.path()),
                     StatusCode::kInvalidArgument);
  // The failed Open changed nothing and released the directory.
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(6, Metric::kL2, 2)));
  ASSERT_OK_AND_ASSIGN(std::vector<float> back, db_->Get(1));
  EXPECT_EQ(back, v);
  ASSERT_OK_AND_ASSIGN(CollectionOptions got,
                       db_->GetCollectionOptions(kDefaultCollection));
  EXPECT_EQ(got.dim, 6u);
}

TEST_F(CollectionTest, LaterOpenWithDifferentMetricIsInvalidArgument) {
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(6, Metric::kL2, 2)));
  const std::vector<float> v = RandomVector(6, 1);
  ASSERT_OK(db_->Put(1, v));
  ASSERT_OK(db_->Close());
  db_.reset();
  EXPECT_STATUS_CODE(
      DB::Open(DefaultOptions(6, Metric::kCosine, 2), dir_.path()),
      StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(
      DB::Open(DefaultOptions(6, Metric::kInnerProduct, 2), dir_.path()),
      StatusCode::kInvalidArgument);
  ASSERT_NO_FATAL_FAILURE(Open(DefaultOptions(6, Metric::kL2, 2)));
  ASSERT_OK_AND_ASSIGN(std::vector<float> back, db_->Get(1));
  EXPECT_EQ(back, v);
  ASSERT_OK_AND_ASSIGN(CollectionOptions got,
                       db_->GetCollectionOptions(kDefaultCollection));
  EXPECT_EQ(got.metric, Metric::kL2);
}

TEST_F(CollectionTest, NamedCollectionsWorkWithoutDefaultCollection) {
  ASSERT_NO_FATAL_FAILURE(OpenEmpty());
  ASSERT_OK(db_->CreateCollection("only", Shape(3)));
  ASSERT_OK(db_->Put("only", 1, std::vector<float>{1, 2, 3}));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(db_->ListCollections(), std::vector<std::string>{"only"});
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get("only", 1));
  EXPECT_EQ(got, (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace shoal::test

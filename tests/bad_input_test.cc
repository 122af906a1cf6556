// Copyright 2026 The shoal Authors.
//
// Bad input: every call returns the documented code and changes nothing.
// "Nothing" is checked through the public API: Get of every stored id, Get of
// every id a rejected call tried to write (still NotFound), exact searches,
// the list of collections; both right after the call and after reopen.
// Also the errors of Open: missing directory, error_if_exists, and the LOCK
// held by another DB object or another process.

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <thread>
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

constexpr uint32_t kDim = 8;
constexpr uint32_t kCosDim = 4;
constexpr char kCos[] = "cos";

// A DB with data in the default collection (kL2, dim 8, 3 shards) and in a
// kCosine collection "cos" (dim 4). ExpectUnchanged() checks that the data,
// the collections and search results are exactly the baseline.
class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_ = DefaultOptions(kDim, Metric::kL2, 3);
    ASSERT_NO_FATAL_FAILURE(Open());
    CollectionOptions co;
    co.dim = kCosDim;
    co.metric = Metric::kCosine;
    co.shard_count = 2;
    ASSERT_OK(db_->CreateCollection(kCos, co));
    const std::vector<float> rows = RandomVectors(30, kDim, 1);
    for (uint64_t id = 0; id < 30; ++id) {
      model_[id] = std::vector<float>(Row(rows, id, kDim).begin(),
                                      Row(rows, id, kDim).end());
      ASSERT_OK(db_->Put(id, model_[id]));
    }
    for (uint64_t id = 0; id < 10; ++id) {
      cos_model_[id] = RandomVector(kCosDim, 100 + id);
      ASSERT_OK(db_->Put(kCos, id, cos_model_[id]));
    }
    collections_ = db_->ListCollections();
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

  // Ids some rejected call tried to write: they must stay NotFound.
  void Attempted(std::span<const uint64_t> ids) {
    attempted_.insert(attempted_.end(), ids.begin(), ids.end());
  }
  void Attempted(uint64_t id) { attempted_.push_back(id); }

  void ExpectUnchanged() {
    EXPECT_EQ(db_->ListCollections(), collections_);
    EXPECT_TRUE(HoldsExactly(*db_, kDefaultCollection, Metric::kL2, model_,
                             attempted_));
    EXPECT_TRUE(HoldsExactly(*db_, kCos, Metric::kCosine, cos_model_,
                             attempted_));
    for (uint64_t q = 0; q < 3; ++q) {
      const std::vector<float> query = RandomVector(kDim, 500 + q);
      SearchOptions so;
      so.k = 40;
      absl::StatusOr<std::vector<Neighbor>> got = db_->Search(query, so);
      ASSERT_OK(got);
      EXPECT_TRUE(MatchesOracle(*got, model_, query, Metric::kL2, 40));
      const std::vector<float> cq = RandomVector(kCosDim, 600 + q);
      got = db_->Search(kCos, cq, so);
      ASSERT_OK(got);
      EXPECT_TRUE(MatchesOracle(*got, cos_model_, cq, Metric::kCosine, 40));
    }
  }
  // Unchanged now and after Close + Open.
  void ExpectUnchangedNowAndAfterReopen() {
    {
      SCOPED_TRACE("before reopen");
      ASSERT_NO_FATAL_FAILURE(ExpectUnchanged());
    }
    ASSERT_NO_FATAL_FAILURE(Reopen());
    SCOPED_TRACE("after reopen");
    ASSERT_NO_FATAL_FAILURE(ExpectUnchanged());
  }

  TempDir dir_;
  Options options_;
  std::unique_ptr<DB> db_;
  VectorMap model_;
  VectorMap cos_model_;
  std::vector<std::string> collections_;
  std::vector<uint64_t> attempted_;
};

// ---- Dimension mismatch ----

TEST_F(BadInputTest, PutWithWrongDimIsInvalidArgument) {
  for (size_t d : {size_t{0}, size_t{1}, size_t{kDim - 1}, size_t{kDim + 1},
                   size_t{2 * kDim}}) {
    const std::vector<float> v = RandomVector(d, d + 1);
    EXPECT_STATUS_CODE(db_->Put(1000 + d, v), StatusCode::kInvalidArgument)
        << "dim " << d;
    EXPECT_STATUS_CODE(db_->Put(3, v), StatusCode::kInvalidArgument)
        << "dim " << d;
    Attempted(1000 + d);
  }
  EXPECT_STATUS_CODE(db_->Put(kCos, 1000, RandomVector(kDim, 1)),
                     StatusCode::kInvalidArgument);
  Attempted(1000);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, PutBatchWithWrongRowCountIsInvalidArgument) {
  // ids.size() * dim != vectors.size(), each way.
  const std::vector<uint64_t> ids = {1000, 1001, 3};
  Attempted(ids);
  for (size_t floats : {size_t{0}, size_t{1}, size_t{2 * kDim},
                        size_t{3 * kDim - 1}, size_t{3 * kDim + 1},
                        size_t{4 * kDim}, size_t{3 * (kDim - 1)},
                        size_t{3 * (kDim + 1)}}) {
    const std::vector<float> rows = RandomVectors(1, floats, floats);
    EXPECT_STATUS_CODE(db_->PutBatch(ids, rows), StatusCode::kInvalidArgument)
        << floats << " floats for 3 ids";
  }
  // Vectors but no ids.
  EXPECT_STATUS_CODE(
      db_->PutBatch(std::span<const uint64_t>(), RandomVector(kDim, 1)),
      StatusCode::kInvalidArgument);
  // A batch shaped for another collection's dim.
  EXPECT_STATUS_CODE(
      db_->PutBatch(kCos, ids, RandomVectors(3, kDim, 2)),
      StatusCode::kInvalidArgument);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, EmptyPutBatchIsInvalidArgument) {
  EXPECT_STATUS_CODE(
      db_->PutBatch(std::span<const uint64_t>(), std::span<const float>()),
      StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->PutBatch(kCos, std::span<const uint64_t>(),
                                   std::span<const float>()),
                     StatusCode::kInvalidArgument);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, SearchWithWrongDimIsInvalidArgument) {
  for (size_t d : {size_t{0}, size_t{1}, size_t{kDim - 1}, size_t{kDim + 1}}) {
    EXPECT_STATUS_CODE(db_->Search(RandomVector(d, 1)),
                       StatusCode::kInvalidArgument)
        << "dim " << d;
  }
  EXPECT_STATUS_CODE(db_->Search(kCos, RandomVector(kDim, 1)),
                     StatusCode::kInvalidArgument);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, SearchBatchWithPartialQueryIsInvalidArgument) {
  // n * dim != queries.size().
  for (size_t floats : {size_t{1}, size_t{kDim - 1}, size_t{kDim + 1},
                        size_t{3 * kDim + 2}}) {
    EXPECT_STATUS_CODE(db_->SearchBatch(RandomVectors(1, floats, 7)),
                       StatusCode::kInvalidArgument)
        << floats << " floats";
  }
  EXPECT_STATUS_CODE(db_->SearchBatch(kCos, RandomVectors(1, 2 * kCosDim + 1, 7)),
                     StatusCode::kInvalidArgument);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, SearchBatchOfNoQueriesReturnsNothingOrInvalidArgument) {
  // Not pinned by the API: either answer is acceptable, but not a crash and
  // not results out of nowhere.
  absl::StatusOr<std::vector<std::vector<Neighbor>>> got =
      db_->SearchBatch(std::span<const float>());
  if (got.ok()) {
    EXPECT_TRUE(got->empty());
  } else {
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument)
        << got.status();
  }
  ExpectUnchangedNowAndAfterReopen();
}

// ---- Non-finite components ----

enum class Bad { kNaN, kPosInf, kNegInf };
enum class Where { kFirst, kMiddle, kLast };

float BadValue(Bad b) {
  switch (b) {
    case Bad::kNaN:
      return std::numeric_limits<float>::quiet_NaN();
    case Bad::kPosInf:
      return std::numeric_limits<float>::infinity();
    case Bad::kNegInf:
      return -std::numeric_limits<float>::infinity();
  }
  return 0;
}

size_t Index(Where w, size_t n) {
  switch (w) {
    case Where::kFirst:
      return 0;
    case Where::kMiddle:
      return n / 2;
    case Where::kLast:
      return n - 1;
  }
  return 0;
}

class NonFiniteTest : public BadInputTest,
                      public ::testing::WithParamInterface<std::tuple<Bad, Where>> {
 protected:
  float bad() const { return BadValue(std::get<0>(GetParam())); }
  Where where() const { return std::get<1>(GetParam()); }
};

TEST_P(NonFiniteTest, PutIsInvalidArgument) {
  std::vector<float> v = RandomVector(kDim, 3);
  v[Index(where(), kDim)] = bad();
  EXPECT_STATUS_CODE(db_->Put(1000, v), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->Put(3, v), StatusCode::kInvalidArgument);  // existing
  std::vector<float> c = RandomVector(kCosDim, 3);
  c[Index(where(), kCosDim)] = bad();
  EXPECT_STATUS_CODE(db_->Put(kCos, 1000, c), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->Put(kCos, 3, c), StatusCode::kInvalidArgument);
  Attempted(1000);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_P(NonFiniteTest, OneBadRowAmongManyValidOnesWritesNothing) {
  const size_t n = 40;  // rows spread over every shard
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(2000 + i);
  ids[n / 3] = 5;  // an existing id, which must keep its old vector
  Attempted(std::span<const uint64_t>(ids).subspan(0, n / 3));
  Attempted(std::span<const uint64_t>(ids).subspan(n / 3 + 1));
  // The bad row is the first, a middle or the last row; its bad component is
  // at the first, middle or last position.
  for (Where row : {Where::kFirst, Where::kMiddle, Where::kLast}) {
    std::vector<float> rows = RandomVectors(n, kDim, 11);
    rows[Index(row, n) * kDim + Index(where(), kDim)] = bad();
    EXPECT_STATUS_CODE(db_->PutBatch(ids, rows), StatusCode::kInvalidArgument)
        << "bad row " << Index(row, n);
  }
  ExpectUnchangedNowAndAfterReopen();
}

TEST_P(NonFiniteTest, SearchQueryIsInvalidArgument) {
  std::vector<float> q = RandomVector(kDim, 3);
  q[Index(where(), kDim)] = bad();
  EXPECT_STATUS_CODE(db_->Search(q), StatusCode::kInvalidArgument);
  std::vector<float> qs = RandomVectors(3, kDim, 4);
  qs[kDim + Index(where(), kDim)] = bad();  // the second of three queries
  EXPECT_STATUS_CODE(db_->SearchBatch(qs), StatusCode::kInvalidArgument);
  ExpectUnchangedNowAndAfterReopen();
}

std::string NonFiniteName(
    const ::testing::TestParamInfo<std::tuple<Bad, Where>>& info) {
  static const char* kBad[] = {"NaN", "PosInf", "NegInf"};
  static const char* kWhere[] = {"First", "Middle", "Last"};
  return std::string(kBad[static_cast<int>(std::get<0>(info.param))]) + "At" +
         kWhere[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(
    AllKindsAndPositions, NonFiniteTest,
    ::testing::Combine(::testing::Values(Bad::kNaN, Bad::kPosInf, Bad::kNegInf),
                       ::testing::Values(Where::kFirst, Where::kMiddle,
                                         Where::kLast)),
    NonFiniteName);

// n consecutive ids from `first`.
std::vector<uint64_t> ConsecutiveIds(uint64_t first, size_t n) {
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = first + i;
  return ids;
}

// Under kCosine a zero row has no direction. A batch large enough to be
// normalized in chunks over the pool names its first zero row, whichever
// chunk finds it, and writes nothing.
TEST_F(BadInputTest, ZeroRowInALargeCosineBatchIsNamedAndWritesNothing) {
  const size_t n = 50000;  // 200,000 floats: several chunks
  const std::vector<uint64_t> ids = ConsecutiveIds(10000, n);
  Attempted(ids);
  std::vector<float> rows = RandomVectors(n, kCosDim, 21);
  for (size_t zero : {size_t{47000}, size_t{31000}}) {
    std::fill_n(rows.begin() + zero * kCosDim, kCosDim, 0.0f);
  }
  const absl::Status s = db_->PutBatch(kCos, ids, rows);
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("row 31000 is a zero vector"), std::string_view::npos) << s;
  ExpectUnchangedNowAndAfterReopen();
}

// The order of the checks holds across chunks: a non-finite component is
// named before a zero row that comes earlier in the batch.
TEST_F(BadInputTest, NonFiniteRowIsNamedBeforeAnEarlierZeroRowInALargeCosineBatch) {
  const size_t n = 50000;
  const std::vector<uint64_t> ids = ConsecutiveIds(10000, n);
  Attempted(ids);
  std::vector<float> rows = RandomVectors(n, kCosDim, 25);
  std::fill_n(rows.begin() + 1000 * kCosDim, kCosDim, 0.0f);
  rows[44000 * kCosDim + 2] = std::numeric_limits<float>::quiet_NaN();
  const absl::Status s = db_->PutBatch(kCos, ids, rows);
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("row 44000 component 2 is nan"), std::string_view::npos) << s;
  ExpectUnchangedNowAndAfterReopen();
}

// A batch large enough to be checked in chunks over the pool names its
// first bad row, whichever chunk finds it, and writes nothing: an infinity,
// and a row whose squared norm would overflow a distance, each with a later
// bad row in another chunk.
TEST_F(BadInputTest, BadRowInALargeBatchIsNamedAndWritesNothing) {
  const size_t n = 50000;  // 400,000 floats: several chunks
  const std::vector<uint64_t> ids = ConsecutiveIds(10000, n);
  Attempted(ids);
  std::vector<float> rows = RandomVectors(n, kDim, 22);
  rows[45000 * kDim + 3] = std::numeric_limits<float>::quiet_NaN();
  rows[20000 * kDim + 5] = std::numeric_limits<float>::infinity();
  absl::Status s = db_->PutBatch(ids, rows);
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("row 20000 component 5 is inf"), std::string_view::npos) << s;
  rows = RandomVectors(n, kDim, 23);
  std::fill_n(rows.begin() + 40000 * kDim, kDim, 1.7e18f);  // squared norm above 2^124
  std::fill_n(rows.begin() + 30000 * kDim, kDim, 1.7e18f);
  s = db_->PutBatch(ids, rows);
  EXPECT_STATUS_CODE(s, StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("row 30000 has a squared norm above"), std::string_view::npos) << s;
  ExpectUnchangedNowAndAfterReopen();
}

// Components too large for the fast check (2^56 and up) but a squared norm
// within range: the chunk falls back to the full check, which accepts them.
TEST_F(BadInputTest, LargeValidComponentsInALargeBatchAreAccepted) {
  const size_t n = 50000;
  const std::vector<uint64_t> ids = ConsecutiveIds(100000, n);
  std::vector<float> rows = RandomVectors(n, kDim, 24);
  std::fill_n(rows.begin() + 35000 * kDim, kDim, 1e17f);  // 8e34 < 2^124
  ASSERT_OK(db_->PutBatch(ids, rows));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(100000 + 35000));
  EXPECT_EQ(got, std::vector<float>(kDim, 1e17f));
}

TEST_F(BadInputTest, BulkLoadOfBadInputChangesNothing) {
  // BulkLoad may be unimplemented; when it is implemented, bad input is
  // InvalidArgument.
  const std::vector<uint64_t> ids = {3000, 3001, 4};
  Attempted(std::span<const uint64_t>(ids).subspan(0, 2));
  std::vector<float> rows = RandomVectors(3, kDim, 5);
  rows[kDim + 2] = std::numeric_limits<float>::quiet_NaN();
  for (const absl::Status& s :
       {db_->BulkLoad(ids, rows),
        db_->BulkLoad(ids, RandomVectors(3, kDim - 1, 5))}) {
    EXPECT_TRUE(s.code() == StatusCode::kInvalidArgument ||
                s.code() == StatusCode::kUnimplemented)
        << s;
  }
  ExpectUnchangedNowAndAfterReopen();
}

// ---- Search options ----

TEST_F(BadInputTest, KZeroIsInvalidArgument) {
  SearchOptions so;
  so.k = 0;
  EXPECT_STATUS_CODE(db_->Search(RandomVector(kDim, 1), so),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->SearchBatch(RandomVectors(2, kDim, 1), so),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->Search(kCos, RandomVector(kCosDim, 1), so),
                     StatusCode::kInvalidArgument);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, ListSizeZeroIsInvalidArgumentAndBelowKStillAnswersK) {
  SearchOptions so;
  so.k = 10;
  so.list_size = 0;
  EXPECT_STATUS_CODE(db_->Search(RandomVector(kDim, 1), so),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->SearchBatch(RandomVectors(2, kDim, 1), so),
                     StatusCode::kInvalidArgument);
  // Below k the walks are shorter, but k neighbours still come back.
  for (uint32_t list_size : {1u, 9u, 10u}) {
    so.list_size = list_size;
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got,
                         db_->Search(RandomVector(kDim, 1), so));
    EXPECT_EQ(got.size(), 10u) << "list_size " << list_size;
    ASSERT_OK_AND_ASSIGN(std::vector<std::vector<Neighbor>> batch,
                         db_->SearchBatch(RandomVectors(2, kDim, 1), so));
    for (const std::vector<Neighbor>& one : batch) EXPECT_EQ(one.size(), 10u);
  }
  ExpectUnchangedNowAndAfterReopen();
}

// A caller's sizes are bounded by what the data holds: a list or k far
// larger than the collection answers like a list of every vector (until
// 2026-11-25 candidate lists were sized from list_size: std::bad_alloc,
// SIGABRT).
TEST_F(BadInputTest, HugeListSizeAndKAreBoundedByTheData) {
  const std::vector<float> query = RandomVector(kDim, 42);
  auto check = [&](const char* where) {
    SCOPED_TRACE(where);
    SearchOptions one;
    one.k = 1;
    one.list_size = std::numeric_limits<uint32_t>::max();
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(query, one));
    EXPECT_TRUE(MatchesOracle(got, model_, query, Metric::kL2, 1));
    SearchOptions all;
    all.k = all.list_size = std::numeric_limits<uint32_t>::max();
    ASSERT_OK_AND_ASSIGN(got, db_->Search(query, all));
    EXPECT_TRUE(MatchesOracle(got, model_, query, Metric::kL2, model_.size()));
    ASSERT_OK_AND_ASSIGN(std::vector<std::vector<Neighbor>> batch,
                         db_->SearchBatch(RandomVectors(3, kDim, 43), all));
    for (const auto& r : batch) EXPECT_EQ(r.size(), model_.size());
    all.beam_width = std::numeric_limits<uint32_t>::max();
    ASSERT_OK_AND_ASSIGN(got, db_->Search(query, all));
    EXPECT_TRUE(MatchesOracle(got, model_, query, Metric::kL2, model_.size()));
  };
  check("memtables");
  ASSERT_OK(db_->Flush());
  check("segments");
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, BuildListSizeAboveItsLimitIsInvalidArgument) {
  CollectionOptions co;
  co.dim = 4;
  co.shard_count = 1;
  for (uint32_t l : {16385u, 1u << 20, std::numeric_limits<uint32_t>::max()}) {
    co.graph.build_list_size = l;
    EXPECT_STATUS_CODE(db_->CreateCollection("wide_list", co), StatusCode::kInvalidArgument)
        << "build_list_size " << l;
  }
  // The limit itself is accepted, and a build with it (a list longer than
  // the segment) works.
  co.graph.build_list_size = 16384;
  ASSERT_OK(db_->CreateCollection("wide_list", co));
  collections_ = db_->ListCollections();
  VectorMap data;
  for (uint64_t id = 0; id < 200; ++id) {
    data[id] = RandomVector(4, 900 + id);
    ASSERT_OK(db_->Put("wide_list", id, data[id]));
  }
  ASSERT_OK(db_->Flush());
  const std::vector<float> q = RandomVector(4, 7);
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search("wide_list", q));
  EXPECT_TRUE(MatchesOracle(got, data, q, Metric::kL2, 10));
  ExpectUnchangedNowAndAfterReopen();
}

// Until 2026-11-25 ids = {} returned OK before the vectors were checked,
// where PutBatch returned InvalidArgument for the same mismatch.
TEST_F(BadInputTest, BulkLoadOfNoIdsWithVectorsIsInvalidArgument) {
  EXPECT_STATUS_CODE(db_->BulkLoad(std::span<const uint64_t>(), RandomVector(kDim, 1)),
                     StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->BulkLoad(kCos, std::span<const uint64_t>(), RandomVector(kCosDim, 1)),
                     StatusCode::kInvalidArgument);
  // Nothing at all is nothing to load.
  EXPECT_OK(db_->BulkLoad(std::span<const uint64_t>(), std::span<const float>()));
  ExpectUnchangedNowAndAfterReopen();
}

// ---- Vectors whose distances would overflow a float ----

// A vector of kDim components `value`.
std::vector<float> Filled(float value, size_t dim = kDim) { return std::vector<float>(dim, value); }

// Under kL2 and kInnerProduct every vector's squared norm must be at most
// 2^124, so that no distance overflows: before 2026-11-25 components of 3e38
// gave NaN distances, which a memtable dropped and a segment ranked first.
TEST_F(BadInputTest, VectorsWhoseDistancesWouldOverflowAreInvalidArgument) {
  CollectionOptions co;
  co.dim = kDim;
  co.metric = Metric::kInnerProduct;
  co.shard_count = 2;
  ASSERT_OK(db_->CreateCollection("ip", co));
  collections_ = db_->ListCollections();
  std::vector<float> mixed = Filled(3e38f);
  mixed[1] = -3e38f;
  // 8 components of 1.7e18: a squared norm of 2.3e37 > 2^124 (2.1e37).
  for (const std::vector<float>& big : {Filled(3e38f), mixed, Filled(1.7e18f)}) {
    for (std::string_view c : {kDefaultCollection, std::string_view("ip")}) {
      EXPECT_STATUS_CODE(db_->Put(c, 1000, big), StatusCode::kInvalidArgument) << c;
      std::vector<float> rows = RandomVectors(3, kDim, 3);
      std::copy(big.begin(), big.end(), rows.begin() + kDim);
      const std::vector<uint64_t> ids = {1001, 1002, 1003};
      EXPECT_STATUS_CODE(db_->PutBatch(c, ids, rows), StatusCode::kInvalidArgument) << c;
      EXPECT_STATUS_CODE(db_->BulkLoad(c, ids, rows), StatusCode::kInvalidArgument) << c;
      EXPECT_STATUS_CODE(db_->Search(c, big), StatusCode::kInvalidArgument) << c;
      EXPECT_STATUS_CODE(db_->SearchBatch(c, rows), StatusCode::kInvalidArgument) << c;
      EXPECT_TRUE(absl::IsNotFound(db_->Get(c, 1000).status()));
    }
  }
  Attempted(std::vector<uint64_t>{1000, 1001, 1002, 1003});
  // Under kCosine the same vectors have a direction and are accepted.
  ASSERT_OK(db_->Put(kCos, 1000, Filled(3e38f, kCosDim)));
  cos_model_[1000] = Filled(3e38f, kCosDim);
  ExpectUnchangedNowAndAfterReopen();
}

// Vectors just inside the bound: every distance is finite and a memtable
// and a segment give the same answer.
TEST_F(BadInputTest, LargestAcceptedVectorsGiveFiniteDistancesInMemtablesAndSegments) {
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
    const std::string name = MetricName(metric) + "_large";
    CollectionOptions co;
    co.dim = kDim;
    co.metric = metric;
    co.shard_count = 1;
    ASSERT_OK(db_->CreateCollection(name, co));
    VectorMap data;
    for (uint64_t id = 0; id < 20; ++id) {
      // Squared norms up to 8 * (1.6e18)^2 = 2.05e37 < 2^124.
      std::vector<float> v = RandomVector(kDim, 300 + id);
      for (float& x : v) x = (x >= 0 ? 1.6e18f : -1.6e18f) * (0.5f + std::fabs(x) / 2);
      data[id] = v;
      ASSERT_OK(db_->Put(name, id, v));
    }
    std::vector<float> q = Filled(1.6e18f);
    q[0] = -1.6e18f;
    SearchOptions so;
    so.k = 20;
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> in_memtable, db_->Search(name, q, so));
    ASSERT_OK(db_->Flush());
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> in_segment, db_->Search(name, q, so));
    ASSERT_EQ(in_memtable.size(), 20u) << name;
    ASSERT_EQ(in_segment.size(), 20u) << name;
    for (size_t i = 0; i < 20; ++i) {
      EXPECT_TRUE(std::isfinite(in_memtable[i].distance)) << name << " " << i;
      EXPECT_EQ(in_memtable[i].id, in_segment[i].id) << name << " " << i;
    }
  }
  collections_ = db_->ListCollections();
  ExpectUnchangedNowAndAfterReopen();
}

// ---- Options ----

TEST(OptionsLimitTest, TooManyWorkerThreadsIsInvalidArgumentNotAnAbort) {
  TempDir dir;
  Options o = DefaultOptions(kDim);
  o.worker_threads = 100000;  // until 2026-11-25: std::system_error, abort
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()) || !std::filesystem::exists(dir.path()));
  o.worker_threads = 4;
  EXPECT_OK(DB::Open(o, dir.path()));
}

// The system refuses threads: Open returns ResourceExhausted instead of
// aborting on std::system_error (as it did until 2026-11-25). A child process
// becomes user `nobody` with RLIMIT_NPROC 1 (root is exempt from the limit,
// so the test needs root to switch users; it skips otherwise).
TEST(OptionsLimitTest, ThreadsTheSystemRefusesAreResourceExhaustedNotAnAbort) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run a child as another user";
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  const std::string path = dir.path() + "/db";
  Options o = DefaultOptions(kDim);
  o.worker_threads = 4;
  constexpr int kCouldNotSwitch = 100, kOpened = 101;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const rlimit one{1, 1};
    if (::setgid(65534) != 0 || ::setuid(65534) != 0 || ::setrlimit(RLIMIT_NPROC, &one) != 0) {
      ::_exit(kCouldNotSwitch);
    }
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, path);
    ::_exit(db.ok() ? kOpened : static_cast<int>(db.status().code()));
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus)) << "the child died of signal " << WTERMSIG(wstatus);
  ASSERT_NE(WEXITSTATUS(wstatus), kCouldNotSwitch) << "could not become nobody";
  EXPECT_EQ(WEXITSTATUS(wstatus), static_cast<int>(StatusCode::kResourceExhausted));
}

// ---- Collections ----

TEST_F(BadInputTest, UnknownCollectionIsNotFoundForEveryCall) {
  const std::string name = "nope";
  const std::vector<float> v = RandomVector(kDim, 1);
  const std::vector<uint64_t> ids = {1};
  EXPECT_STATUS_CODE(db_->Put(name, 1, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->PutBatch(name, ids, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->Delete(name, 1), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->Get(name, 1), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->Search(name, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->SearchBatch(name, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->DropCollection(name), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db_->GetCollectionOptions(name), StatusCode::kNotFound);
  const absl::Status bulk = db_->BulkLoad(name, ids, v);
  EXPECT_TRUE(bulk.code() == StatusCode::kNotFound ||
              bulk.code() == StatusCode::kUnimplemented)
      << bulk;
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, CreatingCollectionTwiceIsAlreadyExists) {
  CollectionOptions other;
  other.dim = 16;
  other.metric = Metric::kL2;
  other.shard_count = 1;
  EXPECT_STATUS_CODE(db_->CreateCollection(kCos, other),
                     StatusCode::kAlreadyExists);
  EXPECT_STATUS_CODE(db_->CreateCollection(kDefaultCollection, other),
                     StatusCode::kAlreadyExists);
  // The existing collection keeps its shape.
  ASSERT_OK_AND_ASSIGN(CollectionOptions got, db_->GetCollectionOptions(kCos));
  EXPECT_EQ(got.dim, kCosDim);
  EXPECT_EQ(got.metric, Metric::kCosine);
  EXPECT_EQ(got.shard_count, 2u);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, BadDimOnCreateIsInvalidArgument) {
  for (uint32_t d : {0u, 4097u, 100000u}) {
    CollectionOptions co;
    co.dim = d;
    co.shard_count = 1;
    EXPECT_STATUS_CODE(db_->CreateCollection("bad", co),
                       StatusCode::kInvalidArgument)
        << "dim " << d;
  }
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, TooManyShardsOnCreateIsInvalidArgument) {
  CollectionOptions co;
  co.dim = 4;
  co.shard_count = 257;  // at most 256
  EXPECT_STATUS_CODE(db_->CreateCollection("bad", co),
                     StatusCode::kInvalidArgument);
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, Dim4096Works) {
  CollectionOptions co;
  co.dim = 4096;
  co.shard_count = 2;
  ASSERT_OK(db_->CreateCollection("wide", co));
  collections_ = db_->ListCollections();
  VectorMap wide;
  for (uint64_t id = 0; id < 5; ++id) {
    wide[id] = RandomVector(4096, 70 + id);
    ASSERT_OK(db_->Put("wide", id, wide[id]));
  }
  auto check = [&] {
    EXPECT_TRUE(HoldsExactly(*db_, "wide", Metric::kL2, wide));
    const std::vector<float> q = RandomVector(4096, 99);
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search("wide", q));
    EXPECT_TRUE(MatchesOracle(got, wide, q, Metric::kL2, 10));
  };
  check();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  check();
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, InvalidCollectionNamesAreInvalidArgument) {
  CollectionOptions co;
  co.dim = 4;
  co.shard_count = 1;
  const std::vector<std::string> names = {
      "",     "a/b",  "/abs", "..",  ".",   ".hidden", std::string(200, 'x'),
      std::string(129, 'x'),   "a b", "a\\b", "tab\t", "caf\xc3\xa9",
      std::string("nul\0byte", 8)};
  for (const std::string& n : names) {
    EXPECT_STATUS_CODE(db_->CreateCollection(n, co),
                       StatusCode::kInvalidArgument)
        << "name \"" << n << "\"";
  }
  ExpectUnchangedNowAndAfterReopen();
  // No directory was made for "a/b" either.
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/a"));
}

TEST_F(BadInputTest, ZeroVectorUnderCosineIsInvalidArgument) {
  const std::vector<float> zero(kCosDim, 0.0f);
  EXPECT_STATUS_CODE(db_->Put(kCos, 1000, zero), StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(db_->Put(kCos, 2, zero), StatusCode::kInvalidArgument);
  // One zero row among valid ones rejects the whole batch.
  const std::vector<uint64_t> ids = {1001, 1002, 1003, 4};
  std::vector<float> rows = RandomVectors(4, kCosDim, 8);
  for (uint32_t i = 0; i < kCosDim; ++i) rows[2 * kCosDim + i] = 0.0f;
  EXPECT_STATUS_CODE(db_->PutBatch(kCos, ids, rows),
                     StatusCode::kInvalidArgument);
  Attempted(std::vector<uint64_t>{1000, 1001, 1002, 1003});
  ExpectUnchangedNowAndAfterReopen();
}

TEST_F(BadInputTest, ZeroVectorUnderL2IsAccepted) {
  const std::vector<float> zero(kDim, 0.0f);
  ASSERT_OK(db_->Put(77, zero));
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, db_->Get(77));
  EXPECT_EQ(got, zero);
}

// ---- Calls on a missing default collection ----

TEST(NoDefaultCollectionTest, DefaultCallsAreNotFound) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<DB>> opened =
      DB::Open(DefaultOptions(0), dir.path());
  ASSERT_OK(opened);
  DB& db = **opened;
  const std::vector<float> v = RandomVector(4, 1);
  const std::vector<uint64_t> ids = {1};
  EXPECT_STATUS_CODE(db.Put(1, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db.PutBatch(ids, v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db.Delete(1), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db.Get(1), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db.Search(v), StatusCode::kNotFound);
  EXPECT_STATUS_CODE(db.SearchBatch(v), StatusCode::kNotFound);
  const absl::Status bulk = db.BulkLoad(ids, v);
  EXPECT_TRUE(bulk.code() == StatusCode::kNotFound ||
              bulk.code() == StatusCode::kUnimplemented)
      << bulk;
  EXPECT_TRUE(db.ListCollections().empty());
}

// ---- Open errors ----

TEST(OpenErrorTest, MissingDirWithoutCreateIfMissingIsNotFound) {
  TempDir dir;
  const std::string path = dir.Sub("missing");
  Options o = DefaultOptions(4);
  o.create_if_missing = false;
  EXPECT_STATUS_CODE(DB::Open(o, path), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(OpenErrorTest, ErrorIfExistsOnExistingDbIsAlreadyExists) {
  TempDir dir;
  const std::string path = dir.Sub("db");
  Options o = DefaultOptions(4);
  {
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, path);
    ASSERT_OK(db);
    ASSERT_OK((*db)->Put(1, std::vector<float>{1, 2, 3, 4}));
    ASSERT_OK((*db)->Close());
  }
  o.error_if_exists = true;
  EXPECT_STATUS_CODE(DB::Open(o, path), StatusCode::kAlreadyExists);
  // The failed Open released the directory and changed nothing.
  o.error_if_exists = false;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, path);
  ASSERT_OK(db);
  ASSERT_OK_AND_ASSIGN(std::vector<float> got, (*db)->Get(1));
  EXPECT_EQ(got, (std::vector<float>{1, 2, 3, 4}));
}

TEST(OpenErrorTest, ErrorIfExistsOnNewDirCreatesDb) {
  TempDir dir;
  Options o = DefaultOptions(4);
  o.error_if_exists = true;
  EXPECT_OK(DB::Open(o, dir.Sub("fresh")));
}

TEST(OpenErrorTest, SecondOpenInProcessIsFailedPrecondition) {
  TempDir dir;
  const Options o = DefaultOptions(4);
  absl::StatusOr<std::unique_ptr<DB>> first = DB::Open(o, dir.path());
  ASSERT_OK(first);
  ASSERT_OK((*first)->Put(1, std::vector<float>{1, 2, 3, 4}));
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(DB::Open(DefaultOptions(0), dir.path()),
                     StatusCode::kFailedPrecondition);
  // The failed attempts did not disturb the first DB.
  ASSERT_OK((*first)->Put(2, std::vector<float>{5, 6, 7, 8}));
  EXPECT_OK((*first)->Get(1));
  ASSERT_OK((*first)->Close());
  // After Close, Open succeeds again and sees both writes.
  absl::StatusOr<std::unique_ptr<DB>> again = DB::Open(o, dir.path());
  ASSERT_OK(again);
  EXPECT_OK((*again)->Get(1));
  EXPECT_OK((*again)->Get(2));
}

TEST(OpenErrorTest, OpenAfterDestructorSucceeds) {
  TempDir dir;
  const Options o = DefaultOptions(4);
  {
    absl::StatusOr<std::unique_ptr<DB>> first = DB::Open(o, dir.path());
    ASSERT_OK(first);
  }  // destroyed without Close: the LOCK is released too
  EXPECT_OK(DB::Open(o, dir.path()));
}

// A child process, forked at construction (before the parent opens any DB,
// so the child starts with no engine threads or locks), that waits for Go()
// and then tries DB::Open(options, path). It reports the status code through
// its exit code and leaves with _exit, running no destructors.
class ForkedOpen {
 public:
  ForkedOpen(const Options& options, const std::string& path) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[1]);
      char c;
      if (::read(fds[0], &c, 1) != 1) ::_exit(kNoGo);
      absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, path);
      ::_exit(kCodeBase + static_cast<int>(db.status().code()));
    }
    ::close(fds[0]);
    go_fd_ = fds[1];
  }
  ~ForkedOpen() {
    if (go_fd_ >= 0) ::close(go_fd_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }

  // Lets the child try, waits (at most 60 s) and returns the status code it
  // got, or an explanation of what went wrong.
  absl::StatusOr<absl::StatusCode> Go() {
    if (::write(go_fd_, "g", 1) != 1) return absl::InternalError("write");
    ::close(go_fd_);
    go_fd_ = -1;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int wstatus = 0;
    while (true) {
      const pid_t r = ::waitpid(pid_, &wstatus, WNOHANG);
      if (r == pid_) break;
      if (r < 0) return absl::InternalError("waitpid");
      if (std::chrono::steady_clock::now() > deadline) {
        return absl::DeadlineExceededError("child did not finish in 60 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reaped_ = true;
    if (!WIFEXITED(wstatus)) {
      return absl::InternalError("child died abnormally, wait status " +
                                 std::to_string(wstatus));
    }
    const int code = WEXITSTATUS(wstatus) - kCodeBase;
    if (code < 0 || code > 16) {
      return absl::InternalError("child exit code " +
                                 std::to_string(WEXITSTATUS(wstatus)));
    }
    return static_cast<absl::StatusCode>(code);
  }

 private:
  static constexpr int kCodeBase = 100;
  static constexpr int kNoGo = 99;
  pid_t pid_ = -1;
  int go_fd_ = -1;
  bool reaped_ = false;
};

TEST(OpenErrorTest, OpenFromAnotherProcessWhileOpenIsFailedPrecondition) {
  TempDir dir;
  const Options o = DefaultOptions(4);
  // Both children are forked before this process opens the DB.
  ForkedOpen while_open(o, dir.path());
  ForkedOpen after_close(o, dir.path());
  ASSERT_TRUE(while_open.started());
  ASSERT_TRUE(after_close.started());

  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, dir.path());
  ASSERT_OK(db);
  ASSERT_OK((*db)->Put(1, std::vector<float>{1, 2, 3, 4}));
  ASSERT_OK_AND_ASSIGN(absl::StatusCode code, while_open.Go());
  EXPECT_EQ(code, StatusCode::kFailedPrecondition)
      << absl::StatusCodeToString(code);
  // Still ours, and still usable.
  ASSERT_OK((*db)->Put(2, std::vector<float>{5, 6, 7, 8}));
  ASSERT_OK((*db)->Close());

  ASSERT_OK_AND_ASSIGN(code, after_close.Go());
  EXPECT_EQ(code, StatusCode::kOk) << absl::StatusCodeToString(code);
  // The child exited without closing (like kill -9): nothing is lost.
  absl::StatusOr<std::unique_ptr<DB>> again = DB::Open(o, dir.path());
  ASSERT_OK(again);
  EXPECT_OK((*again)->Get(1));
  EXPECT_OK((*again)->Get(2));
}

TEST(OpenErrorTest, FailedInProcessOpenKeepsLockAgainstOtherProcesses) {
  // A failed second Open in this process must not release the first one's
  // lock (as closing any descriptor of the LOCK file would, with fcntl locks).
  TempDir dir;
  const Options o = DefaultOptions(4);
  ForkedOpen child(o, dir.path());
  ASSERT_TRUE(child.started());
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, dir.path());
  ASSERT_OK(db);
  EXPECT_STATUS_CODE(DB::Open(o, dir.path()), StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(absl::StatusCode code, child.Go());
  EXPECT_EQ(code, StatusCode::kFailedPrecondition)
      << absl::StatusCodeToString(code);
}

}  // namespace
}  // namespace shoal::test

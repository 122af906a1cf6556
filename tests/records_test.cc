// Copyright 2026 The shoal Authors.
//
// Records (shoal/record.h): a vector with labels, attributes and a payload,
// through every place a record lives - the memtable, the log (reopen), a
// flushed segment, a bulk-loaded one, a merge - in memory-mapped and
// disk-resident segments; the rules (a later put replaces the whole record,
// a delete removes it, labels are a set); and bad input, which writes
// nothing.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/options.h"
#include "shoal/record.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

using ::absl::StatusCode;

constexpr uint32_t kDim = 8;
constexpr char kName[] = "docs";

// What the test expects a record to read back as.
struct Expected {
  std::vector<float> vector;
  std::vector<uint32_t> labels;  // canonical: ascending, distinct
  std::vector<AttributeValue> attributes;
  std::string payload;
};

// Record `id`'s parts, varied by id: some have none, some only a payload,
// some everything; labels given unsorted with a repeat.
struct Owned {
  uint64_t id = 0;
  std::vector<float> vector;
  std::vector<uint32_t> labels;
  std::vector<AttributeValue> attributes;
  std::string payload;

  Record view() const { return Record{id, vector, labels, attributes, payload}; }
  Expected expected() const {
    Expected e{vector, labels, attributes, payload};
    std::sort(e.labels.begin(), e.labels.end());
    e.labels.erase(std::unique(e.labels.begin(), e.labels.end()), e.labels.end());
    std::sort(e.attributes.begin(), e.attributes.end(),
              [](const AttributeValue& a, const AttributeValue& b) {
                return a.attribute < b.attribute;
              });
    return e;
  }
};

Owned MakeRecord(uint64_t id, uint64_t version = 0) {
  std::mt19937_64 rng(id * 7919 + version);
  Owned r;
  r.id = id;
  r.vector.resize(kDim);
  for (float& x : r.vector) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  switch ((id + version) % 4) {
    case 0:  // a vector alone
      break;
    case 1:  // a payload alone
      r.payload = "doc " + std::to_string(id) + " v" + std::to_string(version);
      break;
    default:  // everything, labels unsorted with a repeat
      r.labels = {static_cast<uint32_t>(id % 7 + 100), static_cast<uint32_t>(id % 3),
                  static_cast<uint32_t>(id % 7 + 100)};
      r.attributes = {{1, static_cast<int64_t>(id) * -1000 - 1},
                      {0, static_cast<int64_t>(1700000000 + id + version)}};
      r.payload = std::string(50 + id % 300, static_cast<char>('a' + id % 26));
      r.payload[0] = '\0';  // opaque bytes: a zero byte is kept
      break;
  }
  return r;
}

// (storage, one graph for the collection's shards while small: the shards'
// own merges run only without it).
class RecordsTest : public ::testing::TestWithParam<std::tuple<SegmentStorage, bool>> {
 protected:
  void SetUp() override { Open(); }

  Options DbOptions() const {
    Options o = DefaultOptions(0);
    o.segment_storage = std::get<0>(GetParam());
    o.compaction.automatic = false;  // merges run when the test says
    if (!std::get<1>(GetParam())) o.compaction.one_graph_max_vectors = 0;
    return o;
  }
  void Open() {
    db_.reset();
    ASSERT_OK_AND_ASSIGN(db_, DB::Open(DbOptions(), dir_.path()));
    if (db_->ListCollections().empty()) {
      CollectionOptions co;
      co.dim = kDim;
      co.shard_count = 2;
      co.attributes = {"timestamp", "price_cents"};
      ASSERT_OK(db_->CreateCollection(kName, co));
    }
  }
  void Reopen() {
    ASSERT_OK(db_->Close());
    Open();
  }
  void Put(const Owned& r) {
    ASSERT_OK(db_->Put(kName, r.view()));
    model_[r.id] = r.expected();
  }
  void PutBatch(const std::vector<Owned>& rs) {
    std::vector<Record> views;
    for (const Owned& r : rs) views.push_back(r.view());
    ASSERT_OK(db_->PutBatch(kName, views));
    for (const Owned& r : rs) model_[r.id] = r.expected();
  }
  // Every record of the model reads back whole, alone and through
  // GetRecords, and each part alone.
  void CheckAll() {
    std::vector<uint64_t> ids;
    for (const auto& [id, e] : model_) {
      ids.push_back(id);
      ASSERT_OK_AND_ASSIGN(RecordData got, db_->GetRecord(kName, id));
      ExpectRecord(id, e, got, kAllParts);
      ASSERT_OK_AND_ASSIGN(RecordData payload_only, db_->GetRecord(kName, id, kPayloadPart));
      ExpectRecord(id, e, payload_only, kPayloadPart);
      ASSERT_OK_AND_ASSIGN(RecordData labels_only,
                           db_->GetRecord(kName, id, kLabelsPart | kAttributesPart));
      ExpectRecord(id, e, labels_only, kLabelsPart | kAttributesPart);
    }
    ids.push_back(999999);  // absent
    ASSERT_OK_AND_ASSIGN(auto many, db_->GetRecords(kName, ids));
    ASSERT_EQ(many.size(), ids.size());
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      ASSERT_TRUE(many[i].has_value()) << ids[i];
      ExpectRecord(ids[i], model_.at(ids[i]), *many[i], kAllParts);
    }
    EXPECT_FALSE(many.back().has_value());
  }
  static void ExpectRecord(uint64_t id, const Expected& e, const RecordData& got,
                           uint32_t parts) {
    EXPECT_EQ(got.id, id);
    if (parts & kVectorPart) {
      ASSERT_EQ(got.vector.size(), e.vector.size()) << id;
      for (size_t d = 0; d < e.vector.size(); ++d) EXPECT_FLOAT_EQ(got.vector[d], e.vector[d]);
    } else {
      EXPECT_TRUE(got.vector.empty()) << id;
    }
    EXPECT_EQ(got.labels, (parts & kLabelsPart) ? e.labels : std::vector<uint32_t>()) << id;
    EXPECT_EQ(got.attributes,
              (parts & kAttributesPart) ? e.attributes : std::vector<AttributeValue>())
        << id;
    EXPECT_EQ(got.payload, (parts & kPayloadPart) ? e.payload : std::string()) << id;
  }

  TempDir dir_;
  std::unique_ptr<DB> db_;
  absl::flat_hash_map<uint64_t, Expected> model_;
};

TEST_P(RecordsTest, EveryPartReadsBackFromTheMemtable) {
  for (uint64_t id = 1; id <= 40; ++id) Put(MakeRecord(id));
  CheckAll();
}

TEST_P(RecordsTest, EveryPartSurvivesReopenFromTheLog) {
  std::vector<Owned> batch;
  for (uint64_t id = 1; id <= 200; ++id) batch.push_back(MakeRecord(id));
  PutBatch(batch);
  Put(MakeRecord(500));
  Reopen();
  CheckAll();
}

TEST_P(RecordsTest, EveryPartSurvivesAFlushAndReopen) {
  std::vector<Owned> batch;
  for (uint64_t id = 1; id <= 300; ++id) batch.push_back(MakeRecord(id));
  PutBatch(batch);
  ASSERT_OK(db_->Flush());
  CheckAll();
  Reopen();
  CheckAll();
}

TEST_P(RecordsTest, BulkLoadedRecordsKeepEveryPart) {
  std::vector<Owned> batch;
  for (uint64_t id = 1; id <= 400; ++id) batch.push_back(MakeRecord(id));
  std::vector<Record> views;
  for (const Owned& r : batch) views.push_back(r.view());
  ASSERT_OK(db_->BulkLoad(kName, views));
  for (const Owned& r : batch) model_[r.id] = r.expected();
  CheckAll();
  Reopen();
  CheckAll();
}

TEST_P(RecordsTest, ALaterPutReplacesTheWholeRecordAndADeleteRemovesIt) {
  for (uint64_t id = 1; id <= 100; ++id) Put(MakeRecord(id));
  ASSERT_OK(db_->Flush());
  // New versions: a record with parts becomes one without and back.
  for (uint64_t id = 1; id <= 100; id += 3) Put(MakeRecord(id, /*version=*/1));
  // A plain vector put drops every part.
  const Owned plain = MakeRecord(8, /*version=*/0);
  ASSERT_OK(db_->Put(kName, plain.id, plain.vector));
  model_[plain.id] = Expected{plain.vector, {}, {}, {}};
  for (uint64_t id = 2; id <= 100; id += 5) {
    ASSERT_OK(db_->Delete(kName, id));
    model_.erase(id);
    EXPECT_EQ(db_->GetRecord(kName, id).status().code(), StatusCode::kNotFound);
  }
  CheckAll();
  ASSERT_OK(db_->Flush());
  CheckAll();
}

TEST_P(RecordsTest, MergesKeepEachRecordWithItsVector) {
  // Several segments, overlapping ids, a memtable on top; then merged, and
  // merged again after deletes (a consolidation rebuilds the graph).
  for (uint64_t round = 0; round < 3; ++round) {
    std::vector<Owned> batch;
    for (uint64_t id = 1 + round * 100; id <= 250 + round * 100; ++id) {
      batch.push_back(MakeRecord(id, round));
    }
    PutBatch(batch);
    ASSERT_OK(db_->Flush());
  }
  Put(MakeRecord(7, 9));
  ASSERT_OK(db_->Compact());
  CheckAll();
  for (uint64_t id = 1; id <= 500; id += 2) {
    ASSERT_OK(db_->Delete(kName, id));
    model_.erase(id);
  }
  ASSERT_OK(db_->Compact());
  CheckAll();
  Reopen();
  CheckAll();
}

TEST_P(RecordsTest, AMergeThatExtendsAGraphKeepsEachRecordWithItsNode) {
  // A large segment, then new ids only (nothing of the large one dropped):
  // the merge inserts the new rows into the large segment's graph and
  // reads its records in a second pass.
  std::vector<Owned> batch;
  for (uint64_t id = 1; id <= 400; ++id) batch.push_back(MakeRecord(id));
  PutBatch(batch);
  ASSERT_OK(db_->Flush());
  batch.clear();
  for (uint64_t id = 1001; id <= 1040; ++id) batch.push_back(MakeRecord(id));
  PutBatch(batch);
  ASSERT_OK(db_->Flush());
  Put(MakeRecord(2001));
  ASSERT_OK(db_->Compact());
  CheckAll();
  Reopen();
  CheckAll();
}

TEST_P(RecordsTest, SearchesFindRecordsAsTheyFindVectors) {
  std::vector<Owned> batch;
  for (uint64_t id = 1; id <= 300; ++id) batch.push_back(MakeRecord(id));
  PutBatch(batch);
  ASSERT_OK(db_->Flush());
  for (uint64_t id : {5u, 77u, 300u}) {
    ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> found,
                         db_->Search(kName, model_.at(id).vector, {.k = 1, .list_size = 300}));
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].id, id);
  }
}

TEST_P(RecordsTest, BadRecordsAreRefusedAndWriteNothing) {
  Put(MakeRecord(1));
  const size_t before = model_.size();
  Owned r = MakeRecord(2);
  auto refused = [&](const Owned& bad, std::string_view why) {
    EXPECT_EQ(db_->Put(kName, bad.view()).code(), StatusCode::kInvalidArgument) << why;
    // In a batch with a good record: nothing of the batch is written.
    const Owned good = MakeRecord(3);
    std::vector<Record> views = {good.view(), bad.view()};
    absl::Status s = db_->PutBatch(kName, views);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << why;
    EXPECT_NE(s.message().find("record 1"), std::string_view::npos) << s;
    EXPECT_EQ(db_->BulkLoad(kName, views).code(), StatusCode::kInvalidArgument) << why;
    EXPECT_EQ(db_->GetRecord(kName, 3).status().code(), StatusCode::kNotFound) << why;
    EXPECT_EQ(db_->GetRecord(kName, bad.id).status().code(), StatusCode::kNotFound) << why;
  };
  Owned many_labels = r;
  for (uint32_t l = 0; l <= kMaxLabels; ++l) many_labels.labels.push_back(l);
  refused(many_labels, "too many labels");
  Owned unknown = r;
  unknown.attributes = {{2, 5}};
  refused(unknown, "an attribute the collection does not declare");
  Owned twice = r;
  twice.attributes = {{1, 5}, {0, 1}, {1, 6}};
  refused(twice, "an attribute given twice");
  Owned big = r;
  big.payload.assign(kMaxPayloadBytes + 1, 'x');
  refused(big, "a payload over the limit");
  Owned short_vector = r;
  short_vector.vector.pop_back();
  refused(short_vector, "a vector of the wrong length");
  EXPECT_EQ(db_->GetRecord(kName, 1, 16).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->GetRecords(kName, std::vector<uint64_t>{1}, ~0u).status().code(),
            StatusCode::kInvalidArgument);
  // At the limits: accepted.
  Owned full = r;
  full.labels.clear();
  for (uint32_t l = 0; l < kMaxLabels; ++l) full.labels.push_back(l * 3);
  full.labels.push_back(0);  // a repeat counts once
  full.payload.assign(kMaxPayloadBytes, 'y');
  Put(full);
  EXPECT_EQ(model_.size(), before + 1);
  CheckAll();
}

INSTANTIATE_TEST_SUITE_P(
    Storage, RecordsTest,
    ::testing::Combine(::testing::Values(SegmentStorage::kMapped, SegmentStorage::kDisk),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == SegmentStorage::kMapped ? "Mapped" : "Disk") +
             (std::get<1>(info.param) ? "OneGraph" : "GraphAShard");
    });

TEST(RecordsSchemaTest, AttributeNamesAreCheckedAndKept) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(DefaultOptions(0), dir.path()));
  CollectionOptions co;
  co.dim = 4;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{""}, {"a-b"}, {"ts", "ts"}, {std::string(65, 'a')},
        std::vector<std::string>(kMaxAttributes + 1, "x")}) {
    co.attributes = bad;
    EXPECT_EQ(db->CreateCollection("c", co).code(), StatusCode::kInvalidArgument);
  }
  co.attributes = {"ts", "price_cents", "A_9"};
  ASSERT_OK(db->CreateCollection("c", co));
  ASSERT_OK(db->Close());
  db.reset();
  ASSERT_OK_AND_ASSIGN(db, DB::Open(DefaultOptions(0), dir.path()));
  ASSERT_OK_AND_ASSIGN(CollectionOptions stored, db->GetCollectionOptions("c"));
  EXPECT_EQ(stored.attributes, co.attributes);
  // A collection without attributes takes none.
  co.attributes.clear();
  ASSERT_OK(db->CreateCollection("plain", co));
  const std::vector<float> v = {1, 2, 3, 4};
  const AttributeValue a{0, 1};
  EXPECT_EQ(db->Put("plain", Record{1, v, {}, {&a, 1}, {}}).code(),
            StatusCode::kInvalidArgument);
  ASSERT_OK(db->Put("plain", Record{1, v, {}, {}, "payload"}));
  ASSERT_OK_AND_ASSIGN(RecordData got, db->GetRecord("plain", 1));
  EXPECT_EQ(got.payload, "payload");
}

TEST(RecordsSchemaTest, TheDefaultCollectionRefusesOtherAttributesOnReopen) {
  TempDir dir;
  Options o = DefaultOptions(4);
  o.default_collection.attributes = {"ts"};
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(o, dir.path()));
  }
  o.default_collection.attributes = {"other"};
  EXPECT_EQ(DB::Open(o, dir.path()).status().code(), StatusCode::kInvalidArgument);
  o.default_collection.attributes.clear();  // none: as stored
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DB> db, DB::Open(o, dir.path()));
  ASSERT_OK_AND_ASSIGN(CollectionOptions stored, db->GetCollectionOptions(kDefaultCollection));
  EXPECT_EQ(stored.attributes, std::vector<std::string>{"ts"});
}

}  // namespace
}  // namespace shoal::test

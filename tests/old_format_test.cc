// Copyright 2026 The shoal Authors.
//
// A database written before records existed (tests/data/db_before_records:
// MANIFEST version 4, version-2 segments, version-1 logs) opens, reads
// (its records have no labels, attributes or payload), takes records,
// compacts into version-3 segments, and reopens with everything.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "db/inspect.h"
#include "gtest/gtest.h"
#include "shoal/db.h"
#include "shoal/file_system.h"
#include "shoal/filter.h"
#include "shoal/record.h"
#include "testutil/temp_dir.h"

namespace shoal::test {
namespace {

std::vector<float> V(uint64_t i) {
  const float f = static_cast<float>(i);
  return {f, f + 0.5f, -f, 1.0f};
}

bool Deleted(uint64_t id) { return id == 5 || id == 41; }

class OldFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy(std::string(SHOAL_TEST_DATA_DIR) + "/db_before_records", dir_.path(),
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
  }
  void Open() {
    db_.reset();
    Options o;
    o.create_if_missing = false;
    o.compaction.automatic = false;
    ASSERT_OK_AND_ASSIGN(db_, DB::Open(o, dir_.path()));
  }
  // Every id written before is there as it was, with no other parts.
  void ExpectTheOldData() {
    for (uint64_t id = 0; id < 90; ++id) {
      absl::StatusOr<RecordData> r = db_->GetRecord(id);
      if (Deleted(id)) {
        EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << id;
        continue;
      }
      ASSERT_OK(r.status()) << id;
      EXPECT_EQ(r->vector, V(id)) << id;
      EXPECT_TRUE(r->labels.empty() && r->attributes.empty() && r->payload.empty()) << id;
    }
  }

  TempDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_F(OldFormatTest, ADatabaseWrittenBeforeRecordsOpensReadsTakesRecordsAndCompacts) {
  Open();
  ASSERT_OK_AND_ASSIGN(CollectionOptions options, db_->GetCollectionOptions(kDefaultCollection));
  EXPECT_EQ(options.dim, 4u);
  EXPECT_TRUE(options.attributes.empty());
  ExpectTheOldData();
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> found, db_->Search(V(60), {.k = 1}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].id, 60u);

  // Records join it: labels and a payload (no attributes are declared).
  const std::vector<float> v = V(100);
  const std::vector<uint32_t> labels = {7, 3};
  ASSERT_OK(db_->Put(Record{100, v, labels, {}, "new"}));
  ASSERT_OK(db_->Compact());
  ASSERT_OK(db_->Close());
  Open();
  ExpectTheOldData();
  ASSERT_OK_AND_ASSIGN(RecordData r, db_->GetRecord(100));
  EXPECT_EQ(r.labels, (std::vector<uint32_t>{3, 7}));
  EXPECT_EQ(r.payload, "new");
  ASSERT_OK(db_->Close());
  db_.reset();
  // Every file, rewritten, checks out.
  ASSERT_OK_AND_ASSIGN(VerifyReport report,
                       VerifyDatabase(FileSystem::Default(), dir_.path()));
  EXPECT_TRUE(report.ok());
  EXPECT_GT(report.files_checked, 1u);
}

// Issue 44: the old vectors are records without labels or attributes, so
// filters answer as they do for such records: a label any-of or all-of
// matches none of them, a label none-of every one (the unfiltered answer),
// a caller's id predicate the ids it accepts. The collection declares no
// attributes (they did not exist), so a range names an unknown one:
// InvalidArgument, not an empty answer. A record put since joins in.
TEST_F(OldFormatTest, ADatabaseWrittenBeforeRecordsAnswersFilteredSearches) {
  Open();
  VectorMap old;
  for (uint64_t id = 0; id < 90; ++id) {
    if (!Deleted(id)) old[id] = V(id);
  }
  const std::vector<float> query = V(60);
  SearchOptions so;
  so.k = 10;
  so.list_size = 200;  // past the collection: every answer exact

  const Filter any = Filter::AnyLabel({1});
  so.filter = &any;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> got, db_->Search(query, so));
  EXPECT_TRUE(got.empty());
  ASSERT_OK_AND_ASSIGN(auto batch, db_->SearchBatch(query, so));
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_TRUE(batch[0].empty());
  const Filter all = Filter::AllLabels({1, 2});
  so.filter = &all;
  ASSERT_OK_AND_ASSIGN(got, db_->Search(query, so));
  EXPECT_TRUE(got.empty());

  const Filter none = Filter::NoLabel({1});
  so.filter = &none;
  ASSERT_OK_AND_ASSIGN(got, db_->Search(query, so));
  EXPECT_TRUE(MatchesOracle(got, old, query, Metric::kL2, so.k));
  so.filter = nullptr;
  ASSERT_OK_AND_ASSIGN(std::vector<Neighbor> unfiltered, db_->Search(query, so));
  ASSERT_EQ(got.size(), unfiltered.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, unfiltered[i].id) << i;
    EXPECT_EQ(got[i].distance, unfiltered[i].distance) << i;
  }
  so.k = 100;  // more than there are: every live vector
  so.filter = &none;
  ASSERT_OK_AND_ASSIGN(got, db_->Search(query, so));
  EXPECT_EQ(got.size(), old.size());
  EXPECT_TRUE(MatchesOracle(got, old, query, Metric::kL2, so.k));

  so.k = 5;
  const Filter ids = Filter::Ids([](uint64_t id) { return id % 10 == 3; });
  so.filter = &ids;
  ASSERT_OK_AND_ASSIGN(got, db_->Search(query, so));
  VectorMap threes;
  for (const auto& [id, v] : old) {
    if (id % 10 == 3) threes[id] = v;
  }
  EXPECT_TRUE(MatchesOracle(got, threes, query, Metric::kL2, so.k));

  const Filter range = Filter::Range("ts", 0, 100);
  so.filter = &range;
  EXPECT_STATUS_CODE(db_->Search(query, so), absl::StatusCode::kInvalidArgument);

  // A record with labels, beside the old vectors, in the memtable and then
  // in a segment with them.
  const std::vector<float> v = V(100);
  const std::vector<uint32_t> labels = {1, 7};
  ASSERT_OK(db_->Put(Record{100, v, labels, {}, {}}));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "memtable" : "compacted");
    so.k = 10;
    so.filter = &any;
    ASSERT_OK_AND_ASSIGN(got, db_->Search(query, so));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, 100u);
    so.k = 100;
    so.filter = &none;
    ASSERT_OK_AND_ASSIGN(got, db_->Search(query, so));
    EXPECT_TRUE(MatchesOracle(got, old, query, Metric::kL2, so.k));
    ASSERT_OK(db_->Compact());
  }
}

}  // namespace
}  // namespace shoal::test

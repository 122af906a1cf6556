// Copyright 2026 The shoal Authors.
//
// The memtable on its own: rows copied into its arena and rows read in
// place (a log file's view) side by side, the newest write of an id winning.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "memtable/memtable.h"
#include "record/record_format.h"
#include "testutil/temp_dir.h"
#include "util/top_k.h"

namespace shoal {
namespace {

constexpr uint32_t kDim = 8;

// Rows kept by the test, as a log file's view keeps them for the memtable.
std::shared_ptr<std::vector<float>> Rows(size_t n, uint64_t seed) {
  return std::make_shared<std::vector<float>>(test::RandomVectors(n, kDim, seed));
}

// Every id of `model` is found with its floats; deleted ids are kDeleted.
void ExpectHolds(const MemTable& m, const std::map<uint64_t, std::vector<float>>& model,
                 const std::vector<uint64_t>& deleted) {
  for (const auto& [id, v] : model) {
    const float* got = nullptr;
    ASSERT_EQ(m.Get(id, &got), MemTable::Lookup::kFound) << id;
    EXPECT_TRUE(std::equal(v.begin(), v.end(), got)) << id;
  }
  for (uint64_t id : deleted) {
    const float* got = nullptr;
    EXPECT_EQ(m.Get(id, &got), MemTable::Lookup::kDeleted) << id;
  }
  EXPECT_EQ(m.live_count(), model.size());
}

TEST(MemTableTest, RowsInPlaceAndCopiedAreSearchedAndReadAlike) {
  MemTable m(kDim, /*block_bytes=*/kDim * 4 * 100, /*preallocate=*/false, 0);
  std::map<uint64_t, std::vector<float>> model;
  std::vector<uint64_t> deleted;
  for (uint64_t round = 0; round < 6; ++round) {
    // A "record" of 700 rows in place (runs longer than the search's chunk),
    // then copies into the arena (blocks of 100 rows), some of them
    // overwriting ids of the record.
    std::shared_ptr<std::vector<float>> record = Rows(700, round);
    m.KeepAlive(record);
    for (uint64_t i = 0; i < 700; ++i) {
      const uint64_t id = (round * 500 + i) % 2000;
      m.PutInPlace(id, record->data() + i * kDim);
      std::erase(deleted, id);
      model[id].assign(record->data() + i * kDim, record->data() + (i + 1) * kDim);
    }
    const std::vector<float> copies = test::RandomVectors(150, kDim, 100 + round);
    for (uint64_t i = 0; i < 150; ++i) {
      const uint64_t id = (round * 500 + i * 3) % 2000;
      m.Put(id, copies.data() + i * kDim);
      std::erase(deleted, id);
      model[id].assign(copies.begin() + i * kDim, copies.begin() + (i + 1) * kDim);
    }
    m.Delete(round * 500 + 1);
    model.erase(round * 500 + 1);
    deleted.push_back(round * 500 + 1);
  }
  ExpectHolds(m, model, deleted);

  // ForEach gives each live id once, with its newest floats.
  size_t live = 0, tombstones = 0;
  m.ForEach(
      [&](uint64_t id, const float* v) {
        ++live;
        EXPECT_TRUE(std::equal(model[id].begin(), model[id].end(), v)) << id;
      },
      [&](uint64_t) { ++tombstones; });
  EXPECT_EQ(live, model.size());
  EXPECT_EQ(tombstones, deleted.size());

  // Search is exact: the brute-force top 20 of the model.
  for (uint64_t q = 0; q < 5; ++q) {
    const std::vector<float> query = test::RandomVector(kDim, 7000 + q);
    TopK top(20);
    m.Search(Metric::kL2, query.data(), &top);
    std::vector<std::pair<float, uint64_t>> expected;
    for (const auto& [id, v] : model) {
      expected.emplace_back(Distance(Metric::kL2, query.data(), v.data(), kDim), id);
    }
    std::sort(expected.begin(), expected.end());
    const std::vector<Neighbor> got = top.Take();
    ASSERT_EQ(got.size(), 20u);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].id, expected[i].second) << "query " << q << ", rank " << i;
    }
  }
}

// The memtable holds what KeepAlive gave it: rows stay readable after the
// caller lets go.
TEST(MemTableTest, KeepAliveHoldsTheRowsOwner) {
  MemTable m(kDim, 4096, false, 0);
  std::shared_ptr<std::vector<float>> record = Rows(3, 1);
  const std::vector<float> expected(record->begin() + kDim, record->begin() + 2 * kDim);
  m.KeepAlive(record);
  m.PutInPlace(42, record->data() + kDim);
  std::weak_ptr<std::vector<float>> watch = record;
  record.reset();
  EXPECT_FALSE(watch.expired());
  const float* got = nullptr;
  ASSERT_EQ(m.Get(42, &got), MemTable::Lookup::kFound);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), got));
}

// Record extras (encoded parts beside the vector) for the tests below.
std::string Extras(uint32_t label, std::string_view payload) {
  std::string out;
  const uint32_t labels[] = {label};
  record::AppendEncoded({labels, {}, payload}, &out);
  return out;
}

std::string_view ExtrasOf(const MemTable& m, uint64_t id) {
  const float* v = nullptr;
  std::string_view extras = "unset";
  EXPECT_EQ(m.Get(id, &v, &extras), MemTable::Lookup::kFound) << id;
  return extras;
}

TEST(MemTableTest, ExtrasAreKeptCopiedOrInPlaceAndAPutWithoutThemHasNone) {
  MemTable m(kDim, 4096, false, 0);
  const std::vector<float> rows = test::RandomVectors(4, kDim, 3);
  std::string extras = Extras(7, "a document");
  m.Put(1, rows.data());  // before any extras: no array yet
  EXPECT_FALSE(m.has_extras());
  m.Put(2, rows.data() + kDim, extras);
  EXPECT_TRUE(m.has_extras());
  const std::string expected = extras;
  extras.assign(extras.size(), 'x');  // Put copied them
  auto kept = std::make_shared<std::string>(Extras(8, std::string(100000, 'p')));
  m.KeepAlive(kept);
  m.PutInPlace(3, rows.data() + 2 * kDim, *kept);
  m.Put(4, rows.data() + 3 * kDim);

  EXPECT_EQ(ExtrasOf(m, 1), "");
  EXPECT_EQ(ExtrasOf(m, 2), expected);
  EXPECT_EQ(ExtrasOf(m, 3).data(), kept->data());  // read in place
  EXPECT_EQ(ExtrasOf(m, 4), "");
  record::ExtrasView view;
  ASSERT_TRUE(record::Parse(ExtrasOf(m, 2), &view).ok());
  EXPECT_EQ(view.payload(), "a document");
}

TEST(MemTableTest, LaterPutReplacesTheExtrasAndDeleteRemovesThem) {
  MemTable m(kDim, 4096, false, 0);
  const std::vector<float> row = test::RandomVector(kDim, 1);
  m.Put(5, row.data(), Extras(1, "old"));
  m.Put(5, row.data(), Extras(2, "new"));
  EXPECT_EQ(ExtrasOf(m, 5), Extras(2, "new"));
  m.Put(5, row.data());  // a put without parts replaces the whole record
  EXPECT_EQ(ExtrasOf(m, 5), "");
  m.Put(5, row.data(), Extras(3, "again"));
  m.Delete(5);
  const float* v = nullptr;
  std::string_view extras = "unset";
  EXPECT_EQ(m.Get(5, &v, &extras), MemTable::Lookup::kDeleted);
  EXPECT_EQ(extras, "");

  // ForEachRecord hands out the newest extras of each live id.
  m.Put(6, row.data(), Extras(6, "six"));
  m.Put(7, row.data());
  std::map<uint64_t, std::string> seen;
  size_t tombstones = 0;
  m.ForEachRecord([&](uint64_t id, const float*, std::string_view e) { seen[id] = e; },
                  [&](uint64_t) { ++tombstones; });
  EXPECT_EQ(seen, (std::map<uint64_t, std::string>{{6, Extras(6, "six")}, {7, ""}}));
  EXPECT_EQ(tombstones, 1u);
}

TEST(MemTableTest, DataBytesAndMemoryUsageCountTheExtras) {
  MemTable plain(kDim, 4096, false, 0), with(kDim, 4096, false, 0);
  const std::vector<float> row = test::RandomVector(kDim, 1);
  const std::string big = Extras(1, std::string(200000, 'b'));
  for (uint64_t id = 0; id < 10; ++id) {
    plain.Put(id, row.data());
    with.Put(id, row.data(), big);
  }
  EXPECT_EQ(with.DataBytes(), plain.DataBytes() + 10 * big.size());
  EXPECT_GE(with.ApproximateMemoryUsage(), plain.ApproximateMemoryUsage() + 10 * big.size());
  // A replaced record's bytes stay counted until the memtable is flushed.
  with.Put(3, row.data());
  EXPECT_EQ(with.DataBytes(), plain.DataBytes() + 10 * big.size() + kDim * 4);
}

// The memtable's rows (from a ForEach without extras) are unchanged by
// ForEachRecord on a memtable that never had any.
TEST(MemTableTest, ForEachRecordWithoutExtrasGivesEmptyOnes) {
  MemTable m(kDim, 4096, false, 0);
  const std::vector<float> row = test::RandomVector(kDim, 1);
  m.Put(1, row.data());
  size_t live = 0;
  m.ForEachRecord(
      [&](uint64_t id, const float* v, std::string_view e) {
        ++live;
        EXPECT_EQ(id, 1u);
        EXPECT_TRUE(std::equal(row.begin(), row.end(), v));
        EXPECT_TRUE(e.empty());
      },
      [](uint64_t) {});
  EXPECT_EQ(live, 1u);
}

}  // namespace
}  // namespace shoal

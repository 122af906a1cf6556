// Copyright 2026 The shoal Authors.
//
// The memtable on its own: rows copied into its arena and rows read in
// place (a log file's view) side by side, the newest write of an id winning.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "memtable/memtable.h"
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

}  // namespace
}  // namespace shoal

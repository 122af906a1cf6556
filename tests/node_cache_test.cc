// Copyright 2026 The shoal Authors.
//
// The node cache of a disk-resident segment (disk/node_cache.h): which
// records it pins for a list of seeds (the walks' starts) and a byte
// budget, on a graph given by the read callback.

#include "disk/node_cache.h"

#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "segment/segment_format.h"
#include "util/coding.h"

namespace shoal::disk {
namespace {

constexpr uint32_t kDim = 8;
constexpr uint32_t kDegree = 4;
constexpr uint32_t kNodes = 1000;

// A record for node v whose neighbours are v + 1 .. v + kDegree (mod
// kNodes): a ring, so breadth-first from a seed walks away from it.
absl::Status ReadRing(const segment::NodeLayout& layout, uint32_t node, char* out) {
  std::memset(out, 0, layout.node_bytes);
  EncodeFixed32(out + layout.degree_offset(), kDegree);
  for (uint32_t k = 0; k < kDegree; ++k) {
    EncodeFixed32(out + layout.neighbors_offset() + 4 * k, (node + 1 + k) % kNodes);
  }
  return absl::OkStatus();
}

class NodeCacheTest : public ::testing::Test {
 protected:
  absl::Status Build(const std::vector<uint32_t>& seeds, size_t records) {
    return cache_.Build(layout_, seeds, records * layout_.node_bytes,
                        [this](uint32_t node, char* out) {
                          reads_.push_back(node);
                          return ReadRing(layout_, node, out);
                        });
  }

  const segment::NodeLayout layout_ = segment::NodeLayout::For(kDim, kDegree);
  NodeCache cache_;
  std::vector<uint32_t> reads_;
};

TEST_F(NodeCacheTest, PinsEverySeedFirstThenTheirNeighboursWithinTheBudget) {
  // Seeds far apart on the ring, one missing (segment::kNoNode) and one repeated.
  ASSERT_TRUE(Build({500, 100, segment::kNoNode, 900, 100}, 9).ok());
  EXPECT_EQ(cache_.node_count(), 9u);
  EXPECT_EQ(cache_.bytes(), 9u * layout_.node_bytes);
  for (uint32_t seed : {500u, 100u, 900u}) EXPECT_NE(cache_.Find(seed), nullptr) << seed;
  // Then the first seed's neighbours (501..504), then the second's (101, 102).
  for (uint32_t v : {501u, 502u, 503u, 504u, 101u, 102u}) {
    EXPECT_NE(cache_.Find(v), nullptr) << v;
  }
  EXPECT_EQ(cache_.Find(103), nullptr);
  EXPECT_EQ(cache_.Find(901), nullptr);
  // Each pinned record was read once, and holds what was read.
  EXPECT_EQ(reads_.size(), 9u);
  const char* record = cache_.Find(900);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(DecodeFixed32(record + layout_.neighbors_offset()), 901u);
}

TEST_F(NodeCacheTest, MoreSeedsThanRoomKeepsSomeSpreadOverAllOfThem) {
  std::vector<uint32_t> seeds;
  for (uint32_t v = 0; v < 100; ++v) seeds.push_back(10 * v);  // 0, 10, ..., 990
  ASSERT_TRUE(Build(seeds, 10).ok());
  EXPECT_EQ(cache_.node_count(), 10u);
  // Every tenth seed, from the first to the last tenth, not the first ten.
  for (uint32_t i = 0; i < 10; ++i) EXPECT_NE(cache_.Find(100 * i), nullptr) << 100 * i;
  EXPECT_EQ(cache_.Find(10), nullptr);
}

TEST_F(NodeCacheTest, AReadErrorStopsTheFillAndKeepsTheRecordsReadBeforeIt) {
  // Seeds 1, 2, 3 and their neighbours fit; the third read (node 3) fails.
  size_t calls = 0;
  const absl::Status s =
      cache_.Build(layout_, std::vector<uint32_t>{1, 2, 3}, 8 * layout_.node_bytes,
                   [&](uint32_t node, char* out) {
                     return ++calls == 3 ? absl::InternalError("read failed")
                                         : ReadRing(layout_, node, out);
                   });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(calls, 3u);  // nothing read after the error
  EXPECT_EQ(cache_.node_count(), 2u);
  EXPECT_EQ(cache_.bytes(), 2u * layout_.node_bytes);
  for (uint32_t v : {1u, 2u}) {
    const char* record = cache_.Find(v);
    ASSERT_NE(record, nullptr) << v;
    EXPECT_EQ(DecodeFixed32(record + layout_.neighbors_offset()), v + 1);
  }
  // Neither the failed node nor the neighbours queued but not read.
  for (uint32_t v : {3u, 4u, 5u}) EXPECT_EQ(cache_.Find(v), nullptr) << v;
}

TEST_F(NodeCacheTest, AReadErrorOnTheFirstRecordLeavesTheCacheEmpty) {
  const absl::Status s =
      cache_.Build(layout_, std::vector<uint32_t>{1, 2, 3}, 3 * layout_.node_bytes,
                   [](uint32_t, char*) { return absl::DataLossError("bad block"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(cache_.node_count(), 0u);
  EXPECT_EQ(cache_.bytes(), 0u);
  EXPECT_EQ(cache_.Find(1), nullptr);
}

TEST_F(NodeCacheTest, NoRoomPinsNothingAndReadsNothing) {
  ASSERT_TRUE(Build({1, 2, 3}, 0).ok());
  EXPECT_EQ(cache_.node_count(), 0u);
  EXPECT_TRUE(reads_.empty());
}

}  // namespace
}  // namespace shoal::disk

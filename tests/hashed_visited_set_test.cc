// Copyright 2026 The shoal Authors.
//
// HashedVisitedSet (graph/hashed_visited_set.h): the same answers as
// VisitedSet, through its growth and across Clear, with room only for what
// a search added.

#include "graph/hashed_visited_set.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "graph/visited_set.h"

namespace shoal::graph {
namespace {

TEST(HashedVisitedSetTest, AnswersAsVisitedSetThroughGrowthAndClears) {
  constexpr uint32_t kNodes = 1u << 20;
  HashedVisitedSet hashed;
  VisitedSet marks;
  std::mt19937_64 rng(7);
  // Searches of different sizes, each from an emptied set; nodes drawn from
  // a small range too, so that repeats are frequent.
  for (const size_t adds : {0, 1, 5, 700, 3000, 20000, 10, 50000, 2}) {
    hashed.Clear(kNodes);
    marks.Clear(kNodes);
    for (size_t i = 0; i < adds; ++i) {
      const uint32_t node = static_cast<uint32_t>(i % 3 == 0 ? rng() % 4096 : rng() % kNodes);
      ASSERT_EQ(hashed.Contains(node), marks.Contains(node)) << node;
      ASSERT_EQ(hashed.TestAndSet(node), marks.TestAndSet(node)) << node;
      ASSERT_TRUE(hashed.Contains(node));
    }
    for (int probe = 0; probe < 2000; ++probe) {
      const uint32_t node = static_cast<uint32_t>(rng() % kNodes);
      ASSERT_EQ(hashed.Contains(node), marks.Contains(node)) << node;
    }
  }
}

TEST(HashedVisitedSetTest, ClearEmptiesEvenAfterTheEpochWrapsAround) {
  HashedVisitedSet set;
  set.Clear(0);
  EXPECT_FALSE(set.Contains(42));
  for (int search = 0; search < 70000; ++search) {  // more than 2^16 clears
    set.Clear(0);
    ASSERT_FALSE(set.Contains(42)) << search;
    ASSERT_FALSE(set.TestAndSet(42)) << search;
    ASSERT_TRUE(set.TestAndSet(42)) << search;
    ASSERT_EQ(set.size(), 1u);
  }
}

TEST(HashedVisitedSetTest, HoldsRoomForWhatASearchAddsNotForEveryNode) {
  HashedVisitedSet set;
  set.Clear(size_t{1} << 30);  // a segment of a billion nodes
  EXPECT_EQ(set.capacity(), 0u);
  for (uint32_t node = 0; node < 3000; ++node) set.TestAndSet(node * 977u);
  EXPECT_EQ(set.size(), 3000u);
  // At most half full, a power of two: 8,192 slots for 3,000 nodes.
  EXPECT_EQ(set.capacity(), 8192u);
  // A later, smaller search keeps the slots and finds none of the old nodes.
  set.Clear(size_t{1} << 30);
  EXPECT_EQ(set.capacity(), 8192u);
  EXPECT_FALSE(set.Contains(977u));
  EXPECT_EQ(set.size(), 0u);
}

}  // namespace
}  // namespace shoal::graph

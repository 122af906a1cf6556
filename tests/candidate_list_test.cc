// Copyright 2026 The shoal Authors.
//
// The walk's candidate list (graph/candidate_list.h): whatever is offered,
// in whatever order, it holds the `capacity` smallest (distance, node) pairs
// in ascending order, and its cursor finds the closest unexpanded one. Short
// lists (kShortList) and long ones insert by different code; both are held
// to the same reference.

#include "graph/candidate_list.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace shoal::graph {
namespace {

using Pair = std::pair<float, uint32_t>;

// Offers `offers` (distinct nodes) to a list of `capacity` and checks it
// against a sorted copy after every offer, and each Insert's returned index.
void CheckAgainstSorted(size_t capacity, const std::vector<Pair>& offers) {
  CandidateList list;
  list.Reset(capacity);
  std::vector<Pair> want;
  for (const auto& [distance, node] : offers) {
    const bool full = want.size() == capacity;
    const float last = want.empty() ? 0 : want.back().first;
    const bool accepted = list.Accepts(distance);
    const size_t at = list.Insert(distance, node);
    std::vector<Pair> next = want;
    next.emplace_back(distance, node);
    std::sort(next.begin(), next.end());
    if (next.size() > capacity) next.pop_back();
    const bool kept = std::find(next.begin(), next.end(), Pair{distance, node}) != next.end();
    if (kept) {
      ASSERT_EQ(at, static_cast<size_t>(std::find(next.begin(), next.end(),
                                                   Pair{distance, node}) - next.begin()));
    } else {
      ASSERT_EQ(at, list.size());
    }
    // Accepts is the strict test on the distance alone: anything while the
    // list has room, then only what is closer than the last entry. It may
    // refuse a tie that Insert keeps for its smaller node, nothing else.
    ASSERT_EQ(accepted, !full || distance < last);
    if (!accepted && kept) ASSERT_EQ(distance, last);
    want = std::move(next);
    ASSERT_EQ(list.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(list.distance(i), want[i].first) << "capacity " << capacity << " at " << i;
      ASSERT_EQ(list.node(i), want[i].second) << "capacity " << capacity << " at " << i;
    }
  }
}

TEST(CandidateListTest, ShortAndLongListsKeepTheClosestInOrderWithTiesByNode) {
  std::mt19937 rng(41);
  for (size_t capacity :
       {size_t{1}, size_t{2}, size_t{5}, CandidateList::kShortList - 1, CandidateList::kShortList,
        CandidateList::kShortList + 1, size_t{40}}) {
    for (int trial = 0; trial < 20; ++trial) {
      // Few distinct distances, so that ties are common; nodes distinct.
      std::uniform_int_distribution<int> level(0, trial % 2 == 0 ? 7 : 1000);
      std::vector<uint32_t> nodes(3 * capacity + 10);
      for (uint32_t i = 0; i < nodes.size(); ++i) nodes[i] = i * 7 + 3;
      std::shuffle(nodes.begin(), nodes.end(), rng);
      std::vector<Pair> offers;
      for (uint32_t node : nodes) offers.emplace_back(0.25f * level(rng), node);
      ASSERT_NO_FATAL_FAILURE(CheckAgainstSorted(capacity, offers));
    }
  }
}

TEST(CandidateListTest, TheCursorFindsTheClosestUnexpandedAfterInsertsBeforeIt) {
  for (size_t capacity : {size_t{8}, size_t{64}}) {
    CandidateList list;
    list.Reset(capacity);
    for (uint32_t i = 0; i < 6; ++i) list.Insert(10.0f + i, i);
    ASSERT_EQ(list.NextUnexpanded(), 0u);
    list.MarkExpanded(0);
    list.MarkExpanded(1);
    EXPECT_EQ(list.NextUnexpanded(), 2u);
    // A closer node lands in front of the expanded ones and is next.
    EXPECT_EQ(list.Insert(1.0f, 100), 0u);
    EXPECT_EQ(list.NextUnexpanded(), 0u);
    EXPECT_EQ(list.node(0), 100u);
    list.MarkExpanded(0);
    EXPECT_EQ(list.NextUnexpanded(), 3u);  // the expanded 0 and 1 moved to 1 and 2
    EXPECT_TRUE(list.expanded(1));
    EXPECT_TRUE(list.expanded(2));
    EXPECT_EQ(list.node(1), 0u);
  }
}

}  // namespace
}  // namespace shoal::graph

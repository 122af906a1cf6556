// Copyright 2026 The shoal Authors.
//
// The split of a search over shards (db/search_share.h): each shard's k is
// the smallest whose expected overflow fits the recall budget, checked here
// against a direct binomial sum; the list is not split.

#include "db/search_share.h"

#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"

namespace shoal {
namespace {

// E[max(0, X - m)] for X ~ binomial(k, p), term by term.
double Overflow(uint32_t k, double p, uint32_t m) {
  double sum = 0;
  for (uint32_t j = m + 1; j <= k; ++j) {
    double choose = 1;
    for (uint32_t i = 0; i < j; ++i) choose = choose * (k - i) / (i + 1);
    sum += (j - m) * choose * std::pow(p, j) * std::pow(1 - p, k - j);
  }
  return sum;
}

TEST(SearchShareTest, ShareOfKIsTheSmallestThatKeepsTheOverflowInBudget) {
  for (uint32_t k : {1u, 2u, 5u, 10u, 20u, 50u, 100u}) {
    for (double p : {0.5, 0.25, 1.0 / 3, 0.125, 0.01}) {
      const uint32_t m = ShareOfK(k, p);
      const double budget = kShareRecallLoss * k * p;
      ASSERT_GE(m, 1u);
      ASSERT_LE(m, k);
      if (m < k) EXPECT_LE(Overflow(k, p, m), budget * (1 + 1e-9)) << k << " " << p;
      if (m > 1) EXPECT_GT(Overflow(k, p, m - 1), budget) << k << " " << p;
    }
  }
}

TEST(SearchShareTest, TwoShardsAskEachForEightOfTen) {
  // P(9 or 10 of 10 in one shard) is 11/1024: 8 drops 12/1024 of a
  // neighbour per shard, within 0.25% of 5; 7 would drop 68/1024.
  EXPECT_EQ(ShareOfK(10, 0.5), 8u);
}

TEST(SearchShareTest, AWholeCollectionIsSearchedAsAsked) {
  SearchOptions o;
  o.k = 10;
  o.list_size = 37;
  o.beam_width = 3;
  const SearchOptions same = ShardSearchOptions(o, 1.0);
  EXPECT_EQ(same.k, 10u);
  EXPECT_EQ(same.list_size, 37u);
  EXPECT_EQ(ShareOfK(1 << 20, 0.5), 1u << 20);  // above kShareMaxK: all of k
}

TEST(SearchShareTest, OnlyKIsSharedTheListAndBeamStay) {
  SearchOptions o;
  o.k = 10;
  o.list_size = 100;
  o.beam_width = 2;
  const SearchOptions half = ShardSearchOptions(o, 0.5);
  EXPECT_EQ(half.k, 8u);
  EXPECT_EQ(half.list_size, 100u);
  EXPECT_EQ(half.beam_width, 2u);
  const SearchOptions empty = ShardSearchOptions(o, 0.0);
  EXPECT_EQ(empty.k, 1u);
  EXPECT_EQ(empty.list_size, 100u);
}

}  // namespace
}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// BlockLayout (segment/block_layout.h): a permutation; blocks filled from
// their first node's neighbour list, nearest first; identity with one node
// a block; blocks the walk cannot fill take the next seed.

#include "segment/block_layout.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace shoal::segment {
namespace {

std::vector<std::vector<uint32_t>> RandomGraph(uint32_t n, uint32_t degree, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> g(n);
  for (uint32_t u = 0; u < n; ++u) {
    while (g[u].size() < degree) {
      const auto v = static_cast<uint32_t>(rng() % n);
      if (v != u && std::find(g[u].begin(), g[u].end(), v) == g[u].end()) g[u].push_back(v);
    }
  }
  return g;
}

std::vector<uint32_t> Layout(const std::vector<std::vector<uint32_t>>& g, uint32_t per_block) {
  return BlockLayout(static_cast<uint32_t>(g.size()), per_block,
                     [&](uint32_t u) { return std::span<const uint32_t>(g[u]); });
}

TEST(BlockLayoutTest, IsAPermutationForEveryBlockSize) {
  const auto g = RandomGraph(1000, 8, 1);
  for (uint32_t per_block : {1u, 2u, 3u, 5u, 16u, 1000u, 2000u}) {
    std::vector<uint32_t> order = Layout(g, per_block);
    ASSERT_EQ(order.size(), g.size());
    std::sort(order.begin(), order.end());
    for (uint32_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i], i) << per_block;
  }
}

TEST(BlockLayoutTest, OneNodeABlockKeepsTheGraphOrder) {
  const auto g = RandomGraph(100, 4, 2);
  const std::vector<uint32_t> order = Layout(g, 1);
  for (uint32_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
}

TEST(BlockLayoutTest, BlocksStartWithTheNextUnplacedNodeThenItsNearestNeighbours) {
  const auto g = RandomGraph(50, 6, 3);
  const std::vector<uint32_t> order = Layout(g, 4);
  // The first block: node 0 and the first three of its list.
  EXPECT_EQ(order[0], 0u);
  EXPECT_EQ(std::vector<uint32_t>(order.begin() + 1, order.begin() + 4),
            std::vector<uint32_t>(g[0].begin(), g[0].begin() + 3));
  // Every block starts with the smallest node not placed before it.
  std::vector<bool> placed(g.size(), false);
  for (size_t b = 0; b < order.size(); b += 4) {
    const auto first_unplaced =
        static_cast<uint32_t>(std::find(placed.begin(), placed.end(), false) - placed.begin());
    EXPECT_EQ(order[b], first_unplaced) << "block " << b / 4;
    for (size_t i = b; i < std::min(order.size(), b + 4); ++i) placed[order[i]] = true;
  }
}

TEST(BlockLayoutTest, ABlockTheWalkCannotFillTakesTheNextSeed) {
  // 0 and 1 only reach each other: the walk from 0 places two of four; the
  // block then takes seed 2 and, walking from it, 5. The next block: 3,
  // whose walk finds only placed nodes, then seed 4.
  const std::vector<std::vector<uint32_t>> g = {{1}, {0}, {5}, {2}, {3}, {4}};
  EXPECT_EQ(Layout(g, 4), (std::vector<uint32_t>{0, 1, 2, 5, 3, 4}));
}

}  // namespace
}  // namespace shoal::segment

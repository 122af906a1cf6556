// Copyright 2026 The shoal Authors.
//
// RobustPrune keeps exactly the candidates DiskANN's rule keeps, whichever
// way it computes the occlusion distances (it takes them four at a time):
// compared here with the rule written out one distance at a time.

#include "graph/robust_prune.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "graph/build_distance.h"
#include "graph/node_store.h"

namespace shoal::graph {
namespace {

// The rule of robust_prune.h, one distance at a time, in the order kept.
std::vector<Candidate> ReferencePrune(uint32_t p, std::span<const Candidate> pool, float alpha,
                                      uint32_t max_degree, const BuildDistance& distance) {
  std::vector<Candidate> out;
  uint32_t duplicates = 0;
  for (const Candidate& c : pool) {
    if (c.node == p) continue;
    if (c.distance <= 0.0f) {
      if (duplicates == MaxDuplicateEdges(max_degree)) continue;
      ++duplicates;
    } else {
      bool occluded = false;
      for (const Candidate& s : out) {
        if (s.distance > 0.0f && alpha * distance(s.node, c.node) < c.distance) occluded = true;
      }
      if (occluded) continue;
    }
    out.push_back(c);
    if (out.size() == max_degree) break;
  }
  return out;
}

struct Points {
  Points(Metric metric, uint32_t dim, size_t n, uint32_t seed) : order(n) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> gauss;
    vectors.resize(n * dim);
    for (size_t i = 0; i < n; ++i) {
      order[i] = static_cast<uint32_t>(i);
      float* v = vectors.data() + i * dim;
      if (i % 9 == 8) {
        // Every 9th point repeats the one before it, bit for bit:
        // duplicates of p and of each other reach the pool.
        std::copy(v - dim, v, v);
        continue;
      }
      for (uint32_t j = 0; j < dim; ++j) v[j] = gauss(rng);
      // Norms from 0.5 to 2 under kInnerProduct, so the lift is not 0.
      const float scale = metric == Metric::kInnerProduct ? 0.5f + 1.5f * (i % 7) / 6 : 1.0f;
      for (uint32_t j = 0; j < dim; ++j) v[j] *= scale;
      if (metric == Metric::kCosine) NormalizeInPlace(v, dim);
    }
  }
  std::vector<float> vectors;
  std::vector<uint32_t> order;
};

class RobustPruneTest : public ::testing::TestWithParam<Metric> {};

TEST_P(RobustPruneTest, KeepsWhatTheOneDistanceAtATimeRuleKeeps) {
  const Metric metric = GetParam();
  size_t duplicates_seen = 0;  // pool entries at distance 0 from p
  for (uint32_t dim : {3u, 24u, 37u, 128u}) {
    constexpr size_t kPoints = 400;
    const Points points(metric, dim, kPoints, 11 + dim);
    const NodeStore store(points.vectors.data(), points.order, dim, 8, nullptr);
    const BuildDistance distance(store, metric);
    std::mt19937 rng(dim);
    for (uint32_t max_degree : {1u, 3u, 4u, 5u, 8u, 17u, 64u, 300u}) {
      for (float alpha : {1.0f, 1.2f, 2.0f}) {
        for (int round = 0; round < 4; ++round) {
          const uint32_t p = static_cast<uint32_t>(rng() % kPoints);
          // A pool of up to 350 distinct nodes, p itself among them half the time.
          std::vector<Candidate> pool;
          const uint32_t start = static_cast<uint32_t>(rng() % kPoints);
          const size_t size = 1 + rng() % 350;
          for (size_t k = 0; k < size; ++k) {
            const uint32_t v = static_cast<uint32_t>((start + k) % kPoints);
            if (v == p && round % 2 == 0) continue;
            pool.push_back({distance(p, v), v});
          }
          SortCandidates(p, &pool);
          for (const Candidate& c : pool) duplicates_seen += c.distance <= 0.0f && c.node != p;
          std::vector<Candidate> got;
          uint64_t computed = 0;
          RobustPrune(p, pool, alpha, max_degree, distance, &got, &computed);
          const std::vector<Candidate> want = ReferencePrune(p, pool, alpha, max_degree, distance);
          ASSERT_EQ(got.size(), want.size())
              << "dim " << dim << " R " << max_degree << " alpha " << alpha;
          for (size_t k = 0; k < got.size(); ++k) {
            EXPECT_EQ(got[k].node, want[k].node) << "dim " << dim << " R " << max_degree;
            EXPECT_EQ(got[k].distance, want[k].distance);
          }
          EXPECT_LE(got.size(), max_degree);
        }
      }
    }
  }
  EXPECT_GT(duplicates_seen, 0u) << "the data has no duplicates to prune";
}

// A list pruned again after back edges overflowed it: the entries the first
// prune kept are flagged, and the second prune keeps what it would keep
// without flags, testing fewer pairs.
TEST_P(RobustPruneTest, FlaggedEntriesOfAnEarlierPruneGiveTheSameChoiceForFewerDistances) {
  const Metric metric = GetParam();
  for (uint32_t dim : {5u, 40u, 128u}) {
    constexpr size_t kPoints = 500;
    const Points points(metric, dim, kPoints, 17 + dim);
    const NodeStore store(points.vectors.data(), points.order, dim, 8, nullptr);
    const BuildDistance distance(store, metric);
    std::mt19937 rng(dim + 1);
    uint64_t with_flags = 0, without_flags = 0;
    for (uint32_t max_degree : {2u, 7u, 16u, 32u, 64u}) {
      for (float alpha : {1.0f, 1.2f}) {
        for (int round = 0; round < 6; ++round) {
          const uint32_t p = static_cast<uint32_t>(rng() % kPoints);
          std::vector<uint8_t> taken(kPoints, 0);
          taken[p] = 1;
          auto draw = [&](size_t count, std::vector<Candidate>* pool) {
            for (size_t k = 0; k < count; ++k) {
              const uint32_t v = static_cast<uint32_t>(rng() % kPoints);
              if (taken[v]) continue;
              taken[v] = 1;
              pool->push_back({distance(p, v), v});
            }
          };
          std::vector<Candidate> first;
          draw(3 * max_degree, &first);
          SortCandidates(p, &first);
          std::vector<Candidate> kept;
          uint64_t ignored = 0;
          RobustPrune(p, first, alpha, max_degree, distance, &kept, &ignored);
          // The kept list plus back edges (new candidates), sorted again.
          std::vector<Candidate> pool = kept;
          draw(1 + rng() % (max_degree + 4), &pool);
          SortCandidates(p, &pool);
          std::vector<uint8_t> flags(pool.size());
          for (size_t i = 0; i < pool.size(); ++i) {
            for (const Candidate& k : kept) flags[i] |= k.node == pool[i].node ? 1 : 0;
          }
          std::vector<Candidate> got, want;
          RobustPrune(p, pool, alpha, max_degree, distance, &got, &with_flags, flags);
          RobustPrune(p, pool, alpha, max_degree, distance, &want, &without_flags);
          ASSERT_EQ(got.size(), want.size()) << "dim " << dim << " R " << max_degree;
          for (size_t k = 0; k < got.size(); ++k) {
            EXPECT_EQ(got[k].node, want[k].node) << "dim " << dim << " R " << max_degree;
          }
          EXPECT_EQ(want.size(),
                    ReferencePrune(p, pool, alpha, max_degree, distance).size());
        }
      }
    }
    EXPECT_LT(with_flags, without_flags) << "dim " << dim;
  }
}

INSTANTIATE_TEST_SUITE_P(AllMetrics, RobustPruneTest,
                         ::testing::Values(Metric::kL2, Metric::kInnerProduct, Metric::kCosine));

}  // namespace
}  // namespace shoal::graph

// Copyright 2026 The shoal Authors.
//
// VamanaBuilder on SQ8 codes: its searches navigate on the codes, but what
// goes into the graph (each list's distances, the prune's order) is exact.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "graph/build_distance.h"
#include "graph/node_store.h"
#include "codes/sq8.h"
#include "graph/vamana_builder.h"

namespace shoal::graph {
namespace {

constexpr uint32_t kDim = 24;
constexpr size_t kPoints = 1500;

// Clustered points (so that the codes' steps matter), unit length for
// kCosine as the engine stores them.
std::vector<float> Points(Metric metric) {
  std::mt19937 rng(2026);
  std::normal_distribution<float> gauss;
  std::vector<float> centres(20 * kDim);
  for (float& x : centres) x = 4 * gauss(rng);
  std::vector<float> v(kPoints * kDim);
  for (size_t i = 0; i < kPoints; ++i) {
    const float* c = centres.data() + (i % 20) * kDim;
    for (uint32_t j = 0; j < kDim; ++j) v[i * kDim + j] = c[j] + gauss(rng);
    if (metric == Metric::kCosine) NormalizeInPlace(v.data() + i * kDim, kDim);
  }
  return v;
}

// A graph over `points` (R 16, L 32), built on their SQ8 codes or on the
// vectors alone.
struct Built {
  Built(const std::vector<float>& points, Metric metric, bool codes)
      : order(Identity()),
        store(points.data(), order, kDim, VamanaBuilder::ListCapacity(Options().max_degree),
              nullptr),
        distance(store, metric),
        sq8(codes::Sq8::Train(points.data(), kPoints, kDim)),
        bytes(kPoints * codes::Sq8::CodeBytes(kDim)) {
    if (codes) {
      for (uint32_t i = 0; i < kPoints; ++i) {
        sq8.Encode(store.vector(i), bytes.data() + i * codes::Sq8::CodeBytes(kDim));
      }
      distance.AttachCodes(&sq8, bytes.data());
    }
    builder = std::make_unique<VamanaBuilder>(&store, distance, Options(), /*seed=*/7);
    builder->Build(nullptr, nullptr);
  }
  static GraphOptions Options() {
    GraphOptions graph;
    graph.max_degree = 16;
    graph.build_list_size = 32;
    return graph;
  }
  static std::vector<uint32_t> Identity() {
    std::vector<uint32_t> order(kPoints);
    for (uint32_t i = 0; i < kPoints; ++i) order[i] = i;
    return order;
  }

  std::vector<uint32_t> order;
  NodeStore store;
  BuildDistance distance;
  codes::Sq8 sq8;
  std::vector<uint8_t> bytes;
  std::unique_ptr<VamanaBuilder> builder;
};

class VamanaBuilderOnCodesTest : public ::testing::TestWithParam<Metric> {};

TEST_P(VamanaBuilderOnCodesTest, ListsHoldExactDistances) {
  const Metric metric = GetParam();
  Built g(Points(metric), metric, /*codes=*/true);
  size_t edges = 0;
  for (uint32_t p = 0; p < kPoints; ++p) {
    const std::span<const uint32_t> neighbors = g.builder->neighbors(p);
    ASSERT_GE(neighbors.size(), 1u) << "node " << p;
    ASSERT_LE(neighbors.size(), Built::Options().max_degree);
    const float* kept = g.store.distances(p);
    for (size_t k = 0; k < neighbors.size(); ++k) {
      // Bit for bit the exact build distance: no code distance got in.
      EXPECT_EQ(kept[k], g.distance(p, neighbors[k])) << "node " << p << " edge " << k;
      EXPECT_NE(neighbors[k], p);
    }
    edges += neighbors.size();
  }
  EXPECT_GT(edges, kPoints * 4);
}

// The graph built on codes links each point to its exact nearest neighbour
// about as often as a graph built on the vectors.
TEST_P(VamanaBuilderOnCodesTest, GraphOnCodesConnectsNeighboursAsWellAsOnVectors) {
  const Metric metric = GetParam();
  const std::vector<float> points = Points(metric);
  // Share of points whose exact nearest neighbour is among their out-edges.
  auto nearest_in_list = [&](bool codes) {
    Built g(points, metric, codes);
    size_t found = 0;
    for (uint32_t p = 0; p < kPoints; ++p) {
      uint32_t best = p == 0 ? 1 : 0;
      for (uint32_t q = 0; q < kPoints; ++q) {
        if (q != p && g.distance(p, q) < g.distance(p, best)) best = q;
      }
      const std::span<const uint32_t> neighbors = g.builder->neighbors(p);
      found += std::find(neighbors.begin(), neighbors.end(), best) != neighbors.end();
    }
    return static_cast<double>(found) / kPoints;
  };
  const double on_vectors = nearest_in_list(false);
  const double on_codes = nearest_in_list(true);
  EXPECT_GE(on_vectors, 0.9);
  EXPECT_GE(on_codes, on_vectors - 0.03) << "on vectors " << on_vectors;
}

// Each list of a graph built on one thread (a pure function of the input),
// and the distances the build computed.
struct OneThreadGraph {
  std::vector<std::vector<uint32_t>> lists;
  uint64_t distances = 0;
};

// Builds over `points` (on their codes), or extends from a graph `seed` of
// the same points, nodes [0, kPoints / 2) seeded: each keeps its neighbours
// below that, and the repair's candidates are the kept neighbours of those
// it lost (as a merge's seed gives them).
OneThreadGraph BuildOnOneThread(const std::vector<float>& points, Metric metric,
                                bool kept_before,
                                const std::vector<std::vector<uint32_t>>* seed) {
  const std::vector<uint32_t> order = Built::Identity();
  NodeStore store(points.data(), order, kDim,
                  VamanaBuilder::ListCapacity(Built::Options().max_degree), nullptr);
  BuildDistance distance(store, metric);
  codes::Sq8 sq8 = codes::Sq8::Train(points.data(), kPoints, kDim);
  std::vector<uint8_t> bytes(kPoints * codes::Sq8::CodeBytes(kDim));
  for (uint32_t i = 0; i < kPoints; ++i) {
    sq8.Encode(store.vector(i), bytes.data() + i * codes::Sq8::CodeBytes(kDim));
  }
  distance.AttachCodes(&sq8, bytes.data());
  VamanaBuilder builder(&store, distance, Built::Options(), /*seed=*/11);
  if (!kept_before) builder.TEST_PruneWithoutKeptBefore();
  GraphBuildStats stats;
  if (seed == nullptr) {
    builder.Build(nullptr, &stats);
  } else {
    const size_t seeded = kPoints / 2;
    builder.Extend(
        seeded,
        [&](uint32_t node, std::vector<uint32_t>* candidates) {
          candidates->clear();
          for (uint32_t v : (*seed)[node]) {
            if (v < seeded) candidates->push_back(v);
          }
          const size_t own = candidates->size();
          for (uint32_t lost : (*seed)[node]) {
            if (lost < seeded) continue;
            for (uint32_t v : (*seed)[lost]) {
              if (v < seeded && v != node) candidates->push_back(v);
            }
          }
          // Each once, own neighbours first.
          std::vector<uint32_t> seen;
          size_t kept = 0;
          for (size_t k = 0; k < candidates->size(); ++k) {
            const uint32_t v = (*candidates)[k];
            if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
            seen.push_back(v);
            (*candidates)[kept++] = v;
          }
          candidates->resize(kept);
          return own;
        },
        nullptr, &stats);
  }
  OneThreadGraph graph;
  graph.distances = stats.distance_computations;
  for (uint32_t p = 0; p < kPoints; ++p) {
    const std::span<const uint32_t> neighbors = builder.neighbors(p);
    graph.lists.emplace_back(neighbors.begin(), neighbors.end());
  }
  return graph;
}

// A list pruned again skips the pairs its last prune kept (kept_before):
// the graph must be exactly the one pruning from scratch gives, for fewer
// distances, whether built or extended from a seed.
TEST_P(VamanaBuilderOnCodesTest, ReprunesSkippingKeptPairsBuildTheSameGraph) {
  const Metric metric = GetParam();
  const std::vector<float> points = Points(metric);
  const OneThreadGraph with = BuildOnOneThread(points, metric, true, nullptr);
  const OneThreadGraph without = BuildOnOneThread(points, metric, false, nullptr);
  ASSERT_EQ(with.lists, without.lists);
  EXPECT_LT(with.distances, without.distances);

  const OneThreadGraph extended_with = BuildOnOneThread(points, metric, true, &with.lists);
  const OneThreadGraph extended_without = BuildOnOneThread(points, metric, false, &with.lists);
  ASSERT_EQ(extended_with.lists, extended_without.lists);
  EXPECT_LT(extended_with.distances, extended_without.distances);
}

INSTANTIATE_TEST_SUITE_P(Metrics, VamanaBuilderOnCodesTest,
                         ::testing::Values(Metric::kL2, Metric::kInnerProduct, Metric::kCosine),
                         [](const ::testing::TestParamInfo<Metric>& info) {
                           switch (info.param) {
                             case Metric::kL2:
                               return "L2";
                             case Metric::kInnerProduct:
                               return "InnerProduct";
                             case Metric::kCosine:
                               return "Cosine";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace shoal::graph

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
#include "segment/build_distance.h"
#include "segment/node_store.h"
#include "segment/sq8.h"
#include "segment/vamana_builder.h"

namespace shoal::segment {
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
        sq8(Sq8::Train(points.data(), kPoints, kDim)),
        bytes(kPoints * Sq8::CodeBytes(kDim)) {
    if (codes) {
      for (uint32_t i = 0; i < kPoints; ++i) {
        sq8.Encode(store.vector(i), bytes.data() + i * Sq8::CodeBytes(kDim));
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
  Sq8 sq8;
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
}  // namespace shoal::segment

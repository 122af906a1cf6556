// Copyright 2026 The shoal Authors.
//
// Residual SQ4: codes read back within their group, query distances equal
// the distances to what the codes decode to, and on clustered data the
// residual levels rank neighbours far better than 16 levels of each
// dimension's whole range.

#include "codes/residual_sq4.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "util/thread_pool.h"

namespace shoal::codes {
namespace {

// n vectors of dim floats: `clusters` centres drawn from N(0, 1), each
// vector a centre plus N(0, spread^2) noise per coordinate.
std::vector<float> Clustered(size_t n, uint32_t dim, uint32_t clusters, float spread,
                             uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> centres(size_t{clusters} * dim);
  for (float& c : centres) c = normal(rng);
  std::vector<float> out(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = rng() % clusters;
    for (uint32_t j = 0; j < dim; ++j) {
      out[i * dim + j] = centres[c * dim + j] + spread * normal(rng);
    }
  }
  return out;
}

float Expected(Metric metric, const float* q, const float* x, uint32_t dim) {
  double sum = 0;
  for (uint32_t j = 0; j < dim; ++j) {
    sum += metric == Metric::kL2 ? double{q[j] - x[j]} * (q[j] - x[j]) : double{q[j]} * x[j];
  }
  if (metric == Metric::kL2) return static_cast<float>(sum);
  return static_cast<float>(metric == Metric::kCosine ? 1.0 - sum : -sum);
}

TEST(ResidualSq4Test, QueryDistanceIsTheExactDistanceToTheDecodedVector) {
  constexpr uint32_t kDim = 37;  // odd: the last byte holds one level
  constexpr size_t kN = 2000;
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    SCOPED_TRACE(static_cast<int>(metric));
    std::vector<float> data = Clustered(kN, kDim, 20, 0.3f, 5);
    std::vector<float> q = Clustered(1, kDim, 1, 1.0f, 9);
    if (metric == Metric::kCosine) {
      for (size_t i = 0; i < kN; ++i) NormalizeInPlace(&data[i * kDim], kDim);
      NormalizeInPlace(q.data(), kDim);
    }
    const ResidualSq4 code = ResidualSq4::Fit(data.data(), kN, kDim, 40);
    ResidualSq4Query query;
    query.Reset(code, metric, q.data());
    std::vector<uint8_t> bytes(code.code_bytes());
    std::vector<float> decoded(kDim);
    for (size_t i = 0; i < kN; ++i) {
      code.Encode(&data[i * kDim], bytes.data());
      ASSERT_LT(ResidualSq4::Group(bytes.data(), kDim), code.groups());
      code.Decode(bytes.data(), decoded.data());
      const float want = Expected(metric, q.data(), decoded.data(), kDim);
      ASSERT_NEAR(query.Distance(bytes.data()), want, 1e-4f * (1.0f + std::fabs(want))) << i;
    }
  }
}

TEST(ResidualSq4Test, ResidualLevelsRankClusteredNeighboursFarBetterThanWholeRangeLevels) {
  // Neighbours differ only in their cluster's small noise: 16 even steps of
  // each dimension's whole range cannot tell them apart, levels of what is
  // left after the group's centre can.
  constexpr uint32_t kDim = 64;
  constexpr size_t kN = 20000;
  constexpr size_t kQueries = 50;
  const std::vector<float> data = Clustered(kN, kDim, 100, 0.2f, 11);
  const std::vector<float> queries = Clustered(kQueries, kDim, 100, 0.2f, 11);  // same centres
  const ResidualSq4 code =
      ResidualSq4::Fit(data.data(), kN, kDim, ResidualSq4::ChooseGroups(kN));
  // The whole-range quantizer: 16 even steps of [min, max] per dimension.
  std::vector<float> lo(kDim, INFINITY), hi(kDim, -INFINITY);
  for (size_t i = 0; i < kN; ++i) {
    for (uint32_t j = 0; j < kDim; ++j) {
      lo[j] = std::min(lo[j], data[i * kDim + j]);
      hi[j] = std::max(hi[j], data[i * kDim + j]);
    }
  }
  std::vector<float> residual(kN * kDim), whole(kN * kDim);
  std::vector<uint8_t> bytes(code.code_bytes());
  for (size_t i = 0; i < kN; ++i) {
    code.Encode(&data[i * kDim], bytes.data());
    code.Decode(bytes.data(), &residual[i * kDim]);
    for (uint32_t j = 0; j < kDim; ++j) {
      const float step = (hi[j] - lo[j]) / 15.0f;
      const float level = std::round((data[i * kDim + j] - lo[j]) / step);
      whole[i * kDim + j] = lo[j] + step * level;
    }
  }
  // How many of each query's true 10 nearest are among the 20 nearest by
  // distance to the decoded vectors.
  const auto found = [&](const std::vector<float>& decoded) {
    size_t hits = 0;
    for (size_t q = 0; q < kQueries; ++q) {
      const float* query = &queries[q * kDim];
      std::vector<std::pair<float, size_t>> exact(kN), coded(kN);
      for (size_t i = 0; i < kN; ++i) {
        exact[i] = {Expected(Metric::kL2, query, &data[i * kDim], kDim), i};
        coded[i] = {Expected(Metric::kL2, query, &decoded[i * kDim], kDim), i};
      }
      std::partial_sort(exact.begin(), exact.begin() + 10, exact.end());
      std::partial_sort(coded.begin(), coded.begin() + 20, coded.end());
      for (size_t t = 0; t < 10; ++t) {
        for (size_t c = 0; c < 20; ++c) hits += coded[c].second == exact[t].second ? 1 : 0;
      }
    }
    return static_cast<double>(hits) / (10.0 * kQueries);
  };
  const double with_residual = found(residual);
  const double with_whole = found(whole);
  std::printf("true 10 nearest among the 20 nearest by code: residual %.3f, whole range %.3f\n",
              with_residual, with_whole);
  EXPECT_GE(with_residual, 0.9);
  EXPECT_GE(with_residual, with_whole + 0.2);
}

TEST(ResidualSq4Test, AVectorEqualToItsGroupCentreReadsBackExactly) {
  // Every sample vector the same: one place, every group centre on it, and
  // the residual (and so the scale) zero.
  constexpr uint32_t kDim = 8;
  std::vector<float> data(50 * kDim);
  for (size_t i = 0; i < 50; ++i) {
    for (uint32_t j = 0; j < kDim; ++j) data[i * kDim + j] = 0.25f * j - 1.0f;
  }
  const ResidualSq4 code = ResidualSq4::Fit(data.data(), 50, kDim, 7);
  std::vector<uint8_t> bytes(code.code_bytes());
  code.Encode(data.data(), bytes.data());
  EXPECT_EQ(ResidualSq4::Scale(bytes.data(), kDim), 0.0f);
  std::vector<float> decoded(kDim);
  code.Decode(bytes.data(), decoded.data());
  for (uint32_t j = 0; j < kDim; ++j) EXPECT_EQ(decoded[j], data[j]);
  ResidualSq4Query query;
  query.Reset(code, Metric::kL2, data.data());
  EXPECT_EQ(query.Distance(bytes.data()), 0.0f);
}

TEST(ResidualSq4Test, GroupsFollowTheRootOfTheCountAndNeverPassTheCap) {
  EXPECT_EQ(ResidualSq4::ChooseGroups(0), 1u);
  EXPECT_EQ(ResidualSq4::ChooseGroups(10000), 200u);
  EXPECT_EQ(ResidualSq4::ChooseGroups(1'000'000), 2000u);
  EXPECT_EQ(ResidualSq4::ChooseGroups(uint64_t{1} << 40), ResidualSq4::kMaxGroups);
  // Fewer sample vectors than groups asked for: still at most the cap, and
  // every vector codes into a group that exists.
  constexpr uint32_t kDim = 16;
  const std::vector<float> data = Clustered(300, kDim, 30, 0.1f, 3);
  const ResidualSq4 code = ResidualSq4::Fit(data.data(), 300, kDim, ResidualSq4::kMaxGroups);
  EXPECT_GE(code.groups(), 1u);
  EXPECT_LE(code.groups(), ResidualSq4::kMaxGroups);
  std::vector<uint8_t> bytes(code.code_bytes());
  for (size_t i = 0; i < 300; ++i) {
    code.Encode(&data[i * kDim], bytes.data());
    EXPECT_LT(ResidualSq4::Group(bytes.data(), kDim), code.groups());
  }
}

TEST(ResidualSq4Test, AFitOnAPoolCodesAsOneOnTheCallingThread) {
  constexpr uint32_t kDim = 24;
  constexpr size_t kN = 3000;
  const std::vector<float> data = Clustered(kN, kDim, 40, 0.2f, 17);
  ThreadPool pool(3);
  const ResidualSq4 alone = ResidualSq4::Fit(data.data(), kN, kDim, 200);
  const ResidualSq4 pooled = ResidualSq4::Fit(data.data(), kN, kDim, 200, &pool);
  ASSERT_EQ(alone.groups(), pooled.groups());
  std::vector<uint8_t> a(alone.code_bytes()), b(pooled.code_bytes());
  for (size_t i = 0; i < kN; ++i) {
    alone.Encode(&data[i * kDim], a.data());
    pooled.Encode(&data[i * kDim], b.data());
    ASSERT_EQ(a, b) << i;
  }
}

TEST(ResidualSq4Test, AnEmptySampleGivesZeroCentresThatStillCode) {
  // A segment with no vectors fits on nothing: every centre and level 0.
  constexpr uint32_t kDim = 5;
  const ResidualSq4 code = ResidualSq4::Fit(nullptr, 0, kDim, 1);
  EXPECT_EQ(code.groups(), 1u);
  const float x[kDim] = {1, -2, 3, 0, 0.5f};
  std::vector<uint8_t> bytes(code.code_bytes());
  code.Encode(x, bytes.data());
  std::vector<float> decoded(kDim);
  code.Decode(bytes.data(), decoded.data());
  for (uint32_t j = 0; j < kDim; ++j) EXPECT_EQ(decoded[j], 0.0f);
}

}  // namespace
}  // namespace shoal::codes

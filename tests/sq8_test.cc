// Copyright 2026 The shoal Authors.
//
// SQ8 codes (codes/sq8.h): each coordinate read back within half a step of
// its range, the stored norm that of the vector read back, and a query's
// distance to a code equal to its exact distance to the decoded vector.

#include "codes/sq8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"

namespace shoal::codes {
namespace {

std::vector<float> Uniform(size_t n, uint32_t dim, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n * dim);
  for (float& x : v) x = u(rng);
  return v;
}

TEST(Sq8Test, CodesReadBackWithinHalfAStepAndStoreTheirNorm) {
  for (uint32_t dim : {1u, 7u, 16u, 33u, 384u}) {
    SCOPED_TRACE(dim);
    const size_t n = 200;
    const std::vector<float> v = Uniform(n, dim, dim, -3.0f, 5.0f);
    const Sq8 sq8 = Sq8::Train(v.data(), n, dim);
    std::vector<uint8_t> code(Sq8::CodeBytes(dim));
    std::vector<float> back(dim);
    for (size_t i = 0; i < n; ++i) {
      sq8.Encode(v.data() + i * dim, code.data());
      sq8.Decode(code.data(), back.data());
      double norm = 0;
      for (uint32_t j = 0; j < dim; ++j) {
        ASSERT_LE(std::fabs(back[j] - v[i * dim + j]), sq8.scale()[j] * 0.5f + 1e-5f);
        norm += static_cast<double>(back[j]) * back[j];
      }
      float stored;
      std::memcpy(&stored, code.data() + code.size() - 4, 4);
      EXPECT_NEAR(stored, norm, 1e-4 * norm + 1e-6);
    }
  }
}

TEST(Sq8Test, CodeBytesHoldTheBytesAndTheNormInWholeSixteens) {
  EXPECT_EQ(Sq8::CodeBytes(1), 16u);
  EXPECT_EQ(Sq8::CodeBytes(12), 16u);
  EXPECT_EQ(Sq8::CodeBytes(13), 32u);
  EXPECT_EQ(Sq8::CodeBytes(128), 144u);
  EXPECT_EQ(Sq8::CodeBytes(384), 400u);
}

TEST(Sq8Test, AConstantDimensionAndOutOfRangeValuesStayFinite) {
  const uint32_t dim = 4;
  std::vector<float> v = {1, 2, 7, 0, 1, 3, 7, 0, 1, 4, 7, 0};  // dims 0 and 2 constant
  const Sq8 sq8 = Sq8::Train(v.data(), 3, dim);
  EXPECT_EQ(sq8.scale()[0], 0.0f);
  std::vector<uint8_t> code(Sq8::CodeBytes(dim));
  std::vector<float> back(dim);
  sq8.Encode(v.data(), code.data());
  sq8.Decode(code.data(), back.data());
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[2], 7.0f);
  // Beyond the trained range: clamped to its ends.
  const float outside[] = {1, 100, 7, -5};
  sq8.Encode(outside, code.data());
  sq8.Decode(code.data(), back.data());
  EXPECT_NEAR(back[1], 4.0f, 1e-5);
  EXPECT_EQ(code[1], 255);
  EXPECT_EQ(back[3], 0.0f);
}

TEST(Sq8Test, QueryDistanceToACodeIsTheDistanceToTheDecodedVector) {
  const uint32_t dim = 97;
  const size_t n = 50;
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    SCOPED_TRACE(static_cast<int>(metric));
    std::vector<float> v = Uniform(n, dim, 11, -1.0f, 1.0f);
    std::vector<float> q = Uniform(1, dim, 12, -1.0f, 1.0f);
    if (metric == Metric::kCosine) {
      for (size_t i = 0; i < n; ++i) NormalizeInPlace(v.data() + i * dim, dim);
      NormalizeInPlace(q.data(), dim);
    }
    const Sq8 sq8 = Sq8::Train(v.data(), n, dim);
    Sq8Query query;
    query.Reset(sq8, metric, q.data());
    std::vector<uint8_t> code(Sq8::CodeBytes(dim));
    std::vector<float> back(dim);
    // The query's weights are 16-bit integers, steps of s = max |w_j| / K
    // (sq8.h): each is off by at most s / 2, so a dot by s / 2 sum c_j.
    double largest = 0;
    for (uint32_t j = 0; j < dim; ++j) {
      largest = std::max(largest, std::fabs(static_cast<double>(q[j]) * sq8.scale()[j]));
    }
    const double steps = std::min(32767.0, std::floor(2147483647.0 / (255.0 * dim)));
    const double half_step = largest / steps / 2;
    for (size_t i = 0; i < n; ++i) {
      sq8.Encode(v.data() + i * dim, code.data());
      sq8.Decode(code.data(), back.data());
      // Cosine is 1 - dot against the decoded vector (not renormalized).
      const float want = metric == Metric::kCosine
                             ? 1.0f - Kernels().dot(q.data(), back.data(), dim)
                             : Distance(metric, q.data(), back.data(), dim);
      double code_sum = 0;
      for (uint32_t j = 0; j < dim; ++j) code_sum += code[j];
      const double weight_error = (metric == Metric::kL2 ? 2 : 1) * half_step * code_sum;
      EXPECT_NEAR(query.Distance(code.data()), want, 1e-4 + weight_error);
      // And off the exact distance by no more than half a step a dimension
      // allows: |e_j| <= scale_j / 2 moves q.x by |q_j| |e_j| and
      // (q_j - x_j)^2 by 2 |q_j - x_j| |e_j| + e_j^2.
      const float* x = v.data() + i * dim;
      double bound = 1e-4 + weight_error;
      for (uint32_t j = 0; j < dim; ++j) {
        const double e = sq8.scale()[j] / 2.0;
        bound += metric == Metric::kL2 ? 2 * std::fabs(q[j] - x[j]) * e + e * e
                                       : std::fabs(q[j]) * e;
      }
      EXPECT_NEAR(query.Distance(code.data()), Distance(metric, q.data(), x, dim), bound);
    }
  }
}

TEST(Sq8Test, FourDistancesAtOnceAreEachDistanceBitForBit) {
  for (uint32_t dim : {1u, 15u, 16u, 97u, 128u, 384u}) {
    for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << " metric " << static_cast<int>(metric));
      const size_t n = 9;
      std::vector<float> v = Uniform(n, dim, 31 + dim, -2.0f, 3.0f);
      std::vector<float> q = Uniform(1, dim, 32 + dim, -2.0f, 3.0f);
      if (metric == Metric::kCosine) {
        for (size_t i = 0; i < n; ++i) NormalizeInPlace(v.data() + i * dim, dim);
        NormalizeInPlace(q.data(), dim);
      }
      const Sq8 sq8 = Sq8::Train(v.data(), n, dim);
      const size_t bytes = Sq8::CodeBytes(dim);
      std::vector<uint8_t> codes(n * bytes);
      for (size_t i = 0; i < n; ++i) sq8.Encode(v.data() + i * dim, codes.data() + i * bytes);
      Sq8Query query;
      query.Reset(sq8, metric, q.data());
      // Four codes in any order, a code more than once too.
      for (size_t first = 0; first + 3 < n + 3; ++first) {
        const size_t at[4] = {first % n, (first + 3) % n, (first + 1) % n, first % n};
        const uint8_t* const four[4] = {codes.data() + at[0] * bytes, codes.data() + at[1] * bytes,
                                        codes.data() + at[2] * bytes, codes.data() + at[3] * bytes};
        float got[4];
        query.DistanceFour(four, got);
        for (int k = 0; k < 4; ++k) EXPECT_EQ(got[k], query.Distance(four[k])) << k;
      }
    }
  }
}

TEST(Sq8Test, QueryOfTinyMagnitudesKeepsItsWeights) {
  // Ranges of 2e-15 and a query of 1e-20: max |q_j scale_j| ~ 1e-37, a step
  // below float's smallest normal. The weights must still carry the query's
  // shape (a float reciprocal of that step is infinite and left each weight
  // only its sign), so code distances stay those to the decoded vectors.
  const uint32_t dim = 64;
  const size_t n = 40;
  const std::vector<float> v = Uniform(n, dim, 21, -1e-15f, 1e-15f);
  const std::vector<float> q = Uniform(1, dim, 22, -1e-20f, 1e-20f);
  const Sq8 sq8 = Sq8::Train(v.data(), n, dim);
  Sq8Query query;
  query.Reset(sq8, Metric::kInnerProduct, q.data());
  std::vector<uint8_t> code(Sq8::CodeBytes(dim));
  std::vector<float> back(dim);
  std::vector<double> got(n), want(n);
  double largest = 0;
  for (size_t i = 0; i < n; ++i) {
    sq8.Encode(v.data() + i * dim, code.data());
    sq8.Decode(code.data(), back.data());
    got[i] = query.Distance(code.data());
    double dot = 0;
    for (uint32_t j = 0; j < dim; ++j) dot += static_cast<double>(q[j]) * back[j];
    want[i] = -dot;
    largest = std::max(largest, std::fabs(want[i]));
  }
  ASSERT_GT(largest, 0);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << i;
    EXPECT_NEAR(got[i], want[i], 0.01 * largest) << i;
  }
  EXPECT_EQ(std::min_element(got.begin(), got.end()) - got.begin(),
            std::min_element(want.begin(), want.end()) - want.begin());
}

}  // namespace
}  // namespace shoal::codes

// Copyright 2026 The shoal Authors.
//
// SQ4 codes (segment/sq4.h), derived from SQ8 codes: a query's distance to
// a code is its exact distance to the vector the code decodes to; the
// levels fitted to each dimension's spread lose less than 16 even steps of
// its range; each SQ8 byte maps to its nearest level, and odd dims work.

#include "segment/sq4.h"

#include <cmath>
#include <random>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "segment/pq.h"

namespace shoal::segment {
namespace {

std::vector<float> Gaussian(size_t n, uint32_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(n * dim);
  for (float& x : v) x = g(rng);
  return v;
}

struct Coded {
  Sq8 sq8;
  Sq4 sq4;
  std::vector<uint8_t> sq8_codes;
  std::vector<uint8_t> sq4_codes;
};

Coded Code(const std::vector<float>& v, size_t n, uint32_t dim) {
  Sq8 sq8 = Sq8::Train(v.data(), n, dim);
  const size_t b8 = Sq8::CodeBytes(dim);
  std::vector<uint8_t> c8(n * b8);
  Sq4::Histogram h(dim);
  for (size_t i = 0; i < n; ++i) {
    sq8.Encode(v.data() + i * dim, c8.data() + i * b8);
    h.Add(c8.data() + i * b8);
  }
  Sq4 sq4 = Sq4::Fit(sq8, h);
  std::vector<uint8_t> c4(n * sq4.code_bytes());
  for (size_t i = 0; i < n; ++i) sq4.Encode(c8.data() + i * b8, c4.data() + i * sq4.code_bytes());
  return {std::move(sq8), std::move(sq4), std::move(c8), std::move(c4)};
}

// Checks that every SQ8 byte of every dimension maps to the level nearest
// its value (no other level of that dimension is nearer).
void ExpectEveryByteMapsToItsNearestLevel(const Coded& c, uint32_t dim) {
  std::vector<uint8_t> c8(Sq8::CodeBytes(dim), 0), c4(c.sq4.code_bytes());
  std::vector<float> back(dim);
  for (uint32_t b = 0; b < 256; ++b) {
    for (uint32_t j = 0; j < dim; ++j) c8[j] = static_cast<uint8_t>(b);
    c.sq4.Encode(c8.data(), c4.data());
    c.sq4.pq().Decode(c4.data(), back.data());
    for (uint32_t j = 0; j < dim; ++j) {
      const float x = c.sq8.lo()[j] + c.sq8.scale()[j] * b;
      for (uint32_t l = 0; l < Sq4::kLevels; ++l) {
        // Level l of dimension j: the low nibble of a chunk's first
        // dimension, the high nibble of its second.
        const float other =
            c.sq4.pq().mean()[j] + c.sq4.pq().centroid(j, j % 2 == 0 ? l : (l << 4));
        EXPECT_LE(std::abs(back[j] - x), std::abs(other - x) + 1e-5f * (1 + std::abs(x)))
            << "dim " << j << " byte " << b << " level " << l;
      }
    }
  }
}

TEST(Sq4Test, QueryDistanceIsTheExactDistanceToTheDecodedVector) {
  for (uint32_t dim : {1u, 2u, 7u, 128u}) {
    for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << " metric " << int(metric));
      const size_t n = 500;
      const std::vector<float> v = Gaussian(n, dim, dim);
      const Coded c = Code(v, n, dim);
      ASSERT_EQ(c.sq4.code_bytes(), (dim + 1) / 2);
      const std::vector<float> q = Gaussian(1, dim, 99);
      PqQuery query;
      query.Reset(c.sq4.pq(), metric, q.data());
      std::vector<float> back(dim);
      for (size_t i = 0; i < n; i += 7) {
        const uint8_t* code = c.sq4_codes.data() + i * c.sq4.code_bytes();
        c.sq4.pq().Decode(code, back.data());
        const float want = Distance(metric, q.data(), back.data(), dim);
        EXPECT_NEAR(query.Distance(code), want, 1e-4f * (1.0f + std::abs(want)));
      }
    }
  }
}

TEST(Sq4Test, FittedLevelsLoseLessThanEvenStepsOfTheRange) {
  const uint32_t dim = 16;
  const size_t n = 20000;
  const std::vector<float> v = Gaussian(n, dim, 7);
  const Coded c = Code(v, n, dim);
  const size_t b8 = Sq8::CodeBytes(dim);
  double fitted = 0, even = 0;
  std::vector<float> back(dim);
  for (size_t i = 0; i < n; ++i) {
    c.sq4.pq().Decode(c.sq4_codes.data() + i * c.sq4.code_bytes(), back.data());
    for (uint32_t j = 0; j < dim; ++j) {
      const double x = v[i * dim + j];
      fitted += (back[j] - x) * (back[j] - x);
      // 16 even steps: the SQ8 byte's top four bits, at the step's middle.
      const uint8_t b = c.sq8_codes[i * b8 + j];
      const double e = c.sq8.lo()[j] + c.sq8.scale()[j] * (16.0 * (b >> 4) + 7.5);
      even += (e - x) * (e - x);
    }
  }
  // Lloyd-Max on a Gaussian: ~0.0095 sigma^2 a coordinate at 16 levels;
  // even steps over a range of ~8 sigma: ~0.021.
  EXPECT_LT(fitted / (n * dim), 0.015);
  EXPECT_LT(fitted, 0.7 * even);
}

TEST(Sq4Test, EachSq8ByteMapsToItsNearestLevel) {
  const uint32_t dim = 5;  // odd: the last chunk holds one dimension
  const size_t n = 3000;
  const Coded c = Code(Gaussian(n, dim, 11), n, dim);
  ExpectEveryByteMapsToItsNearestLevel(c, dim);
}

TEST(Sq4Test, ADimensionMostlyAtOneValueStillMapsEveryByteToItsNearestLevel) {
  // Half the values of each dimension are 0 (ReLU outputs, SIFT): the
  // quantile seeds coincide there, and the bytes above must still reach
  // the levels above.
  const uint32_t dim = 4;
  const size_t n = 4000;
  std::vector<float> v = Gaussian(n, dim, 13);
  for (size_t i = 0; i < n; i += 2) {
    for (uint32_t j = 0; j < dim; ++j) v[i * dim + j] = 0.0f;  // every other row
  }
  for (float& x : v) x = std::abs(x);
  const Coded c = Code(v, n, dim);
  ExpectEveryByteMapsToItsNearestLevel(c, dim);
  // And the coding still tells values apart: far less error than one level.
  std::vector<float> back(dim);
  double error = 0, spread = 0;
  for (size_t i = 0; i < n; ++i) {
    c.sq4.pq().Decode(c.sq4_codes.data() + i * c.sq4.code_bytes(), back.data());
    for (uint32_t j = 0; j < dim; ++j) {
      error += (back[j] - v[i * dim + j]) * (back[j] - v[i * dim + j]);
      spread += v[i * dim + j] * v[i * dim + j];
    }
  }
  EXPECT_LT(error, 0.05 * spread);
}

}  // namespace
}  // namespace shoal::segment

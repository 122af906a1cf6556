// Copyright 2026 The shoal Authors.

#include "distance/distance.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "distance/distance_isa.h"
#include "gtest/gtest.h"

namespace shoal {
namespace {

// Same conditions as the dispatch in distance.cc.
bool CpuHasAvx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

bool CpuHasAvx512() {
  return CpuHasAvx2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

bool CpuHasAvx512Vnni() { return CpuHasAvx512() && __builtin_cpu_supports("avx512vnni"); }

std::vector<const DistanceKernels*> AvailableKernelSets() {
  std::vector<const DistanceKernels*> sets = {&ScalarKernels()};
  if (CpuHasAvx2()) sets.push_back(&Avx2Kernels());
  if (CpuHasAvx512()) sets.push_back(&Avx512Kernels());
  if (CpuHasAvx512Vnni()) sets.push_back(&Avx512VnniKernels());
  return sets;
}

// Every SIMD tail length for 8 and 16 lanes, both sides of the 32/64-float
// unrolled loops, and the dims real models use.
std::vector<size_t> TestDims() {
  std::vector<size_t> dims;
  for (size_t d = 1; d <= 130; ++d) dims.push_back(d);
  for (size_t d : {255, 256, 257, 768, 1536, 4096}) dims.push_back(d);
  return dims;
}

std::vector<float> RandomVector(std::mt19937& rng, size_t dim) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(dim);
  for (float& x : v) x = uniform(rng);
  return v;
}

double ReferenceL2Squared(const float* a, const float* b, size_t dim) {
  double sum = 0.0;
  for (size_t i = 0; i < dim; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    sum += d * d;
  }
  return sum;
}

double ReferenceDot(const float* a, const float* b, size_t dim) {
  double sum = 0.0;
  for (size_t i = 0; i < dim; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// Random-sign dot products nearly cancel, so the error of a float sum can't
// be bounded relative to the result, only relative to the sum of magnitudes.
double SumOfAbsProducts(const float* a, const float* b, size_t dim) {
  double sum = 0.0;
  for (size_t i = 0; i < dim; ++i) {
    sum += std::fabs(static_cast<double>(a[i]) * b[i]);
  }
  return sum;
}

constexpr double kRelativeTolerance = 1e-4;

// Inputs start one float past the allocation, so no load is 32-byte aligned.
void ExpectL2MatchesReference(const DistanceKernels& k) {
  std::mt19937 rng(301);
  for (size_t dim : TestDims()) {
    const std::vector<float> a = RandomVector(rng, dim + 1);
    const std::vector<float> b = RandomVector(rng, dim + 1);
    const double want = ReferenceL2Squared(a.data() + 1, b.data() + 1, dim);
    EXPECT_NEAR(k.l2_squared(a.data() + 1, b.data() + 1, dim), want,
                kRelativeTolerance * want)
        << k.isa << " dim " << dim;
    EXPECT_EQ(k.l2_squared(a.data() + 1, a.data() + 1, dim), 0.0f)
        << k.isa << " dim " << dim;
  }
}

void ExpectDotMatchesReference(const DistanceKernels& k) {
  std::mt19937 rng(302);
  for (size_t dim : TestDims()) {
    const std::vector<float> a = RandomVector(rng, dim + 1);
    const std::vector<float> b = RandomVector(rng, dim + 1);
    const float* pa = a.data() + 1;
    const float* pb = b.data() + 1;
    EXPECT_NEAR(k.dot(pa, pb, dim), ReferenceDot(pa, pb, dim),
                kRelativeTolerance * SumOfAbsProducts(pa, pb, dim))
        << k.isa << " dim " << dim;
    // All products positive: here the result itself bounds the error.
    const double self = ReferenceDot(pa, pa, dim);
    EXPECT_NEAR(k.dot(pa, pa, dim), self, kRelativeTolerance * self)
        << k.isa << " dim " << dim;
  }
}

// Bit-for-bit: a memtable scan and a graph search must agree on a distance.
void ExpectBatchEqualsSingle(const DistanceKernels& k) {
  std::mt19937 rng(303);
  for (size_t dim :
       {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 128, 129, 1536}) {
    for (size_t n : {0, 1, 2, 5, 37}) {
      const std::vector<float> query = RandomVector(rng, dim);
      const std::vector<float> base = RandomVector(rng, n * dim);
      std::vector<float> l2(n + 1, -7.0f), dot(n + 1, -7.0f);
      k.l2_squared_batch(query.data(), base.data(), n, dim, l2.data());
      k.dot_batch(query.data(), base.data(), n, dim, dot.data());
      for (size_t r = 0; r < n; ++r) {
        const float* row = base.data() + r * dim;
        EXPECT_EQ(l2[r], k.l2_squared(query.data(), row, dim))
            << k.isa << " dim " << dim << " row " << r;
        EXPECT_EQ(dot[r], k.dot(query.data(), row, dim))
            << k.isa << " dim " << dim << " row " << r;
      }
      // Nothing written past out[n - 1].
      EXPECT_EQ(l2[n], -7.0f) << k.isa;
      EXPECT_EQ(dot[n], -7.0f) << k.isa;
    }
  }
}

TEST(DistanceTest, ScalarL2MatchesReferenceForAllDims) {
  ExpectL2MatchesReference(ScalarKernels());
}

TEST(DistanceTest, ScalarDotMatchesReferenceForAllDims) {
  ExpectDotMatchesReference(ScalarKernels());
}

TEST(DistanceTest, ScalarBatchEqualsSingleKernels) {
  ExpectBatchEqualsSingle(ScalarKernels());
}

TEST(DistanceTest, Avx2L2MatchesReferenceForAllDims) {
  if (!CpuHasAvx2()) GTEST_SKIP() << "CPU lacks AVX2+FMA";
  ExpectL2MatchesReference(Avx2Kernels());
}

TEST(DistanceTest, Avx2DotMatchesReferenceForAllDims) {
  if (!CpuHasAvx2()) GTEST_SKIP() << "CPU lacks AVX2+FMA";
  ExpectDotMatchesReference(Avx2Kernels());
}

TEST(DistanceTest, Avx2BatchEqualsSingleKernels) {
  if (!CpuHasAvx2()) GTEST_SKIP() << "CPU lacks AVX2+FMA";
  ExpectBatchEqualsSingle(Avx2Kernels());
}

TEST(DistanceTest, Avx512L2MatchesReferenceForAllDims) {
  if (!CpuHasAvx512()) GTEST_SKIP() << "CPU lacks AVX-512";
  ExpectL2MatchesReference(Avx512Kernels());
}

TEST(DistanceTest, Avx512DotMatchesReferenceForAllDims) {
  if (!CpuHasAvx512()) GTEST_SKIP() << "CPU lacks AVX-512";
  ExpectDotMatchesReference(Avx512Kernels());
}

TEST(DistanceTest, Avx512BatchEqualsSingleKernels) {
  if (!CpuHasAvx512()) GTEST_SKIP() << "CPU lacks AVX-512";
  ExpectBatchEqualsSingle(Avx512Kernels());
}

// Bit-for-bit: a graph build's prune takes some distances four at a time and
// the others one at a time, and compares them with each other.
TEST(DistanceTest, FourDistancesAreTheSingleKernelsBitsInEitherOrderForAllDims) {
  std::mt19937 rng(306);
  for (const DistanceKernels* k : AvailableKernelSets()) {
    for (size_t dim : TestDims()) {
      // Unaligned rows, values over several binades so the order of the
      // adds shows in the last bits.
      const std::vector<float> a = RandomVector(rng, dim + 1);
      std::vector<std::vector<float>> rows;
      for (int r = 0; r < 4; ++r) {
        std::vector<float> row = RandomVector(rng, dim + 1);
        for (float& x : row) x *= std::ldexp(1.0f, static_cast<int>(rng() % 9) - 4);
        rows.push_back(std::move(row));
      }
      const float* b[4] = {rows[0].data() + 1, rows[1].data() + 1, rows[2].data() + 1,
                           rows[3].data() + 1};
      float out[5] = {-1, -1, -1, -1, -7};
      k->l2_squared_four(a.data() + 1, b, dim, out);
      for (int r = 0; r < 4; ++r) {
        EXPECT_EQ(std::bit_cast<uint32_t>(out[r]),
                  std::bit_cast<uint32_t>(k->l2_squared(a.data() + 1, b[r], dim)))
            << k->isa << " dim " << dim << " row " << r;
        EXPECT_EQ(std::bit_cast<uint32_t>(out[r]),
                  std::bit_cast<uint32_t>(k->l2_squared(b[r], a.data() + 1, dim)))
            << k->isa << " dim " << dim << " row " << r;
      }
      EXPECT_EQ(out[4], -7.0f) << k->isa << ": wrote past out[3]";
      // The same row four times, and a itself: all equal, and 0 for a.
      const float* same[4] = {b[2], a.data() + 1, b[2], b[2]};
      k->l2_squared_four(a.data() + 1, same, dim, out);
      EXPECT_EQ(out[0], out[2]) << k->isa << " dim " << dim;
      EXPECT_EQ(out[1], 0.0f) << k->isa << " dim " << dim;
    }
  }
}

// `count` floats that end exactly where an unreadable page begins, so a
// kernel that reads one float too many dies with SIGSEGV.
class GuardedFloats {
 public:
  explicit GuardedFloats(size_t count) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data_pages = (count * sizeof(float) + page - 1) / page;
    size_ = (data_pages + 1) * page;
    void* map = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(map, MAP_FAILED);
    map_ = static_cast<char*>(map);
    char* guard = map_ + data_pages * page;
    EXPECT_EQ(mprotect(guard, page, PROT_NONE), 0);
    data_ = reinterpret_cast<float*>(guard) - count;
    for (size_t i = 0; i < count; ++i) {
      data_[i] = 0.25f * static_cast<float>(i % 7);
    }
  }
  ~GuardedFloats() { munmap(map_, size_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;

  float* data() { return data_; }

 private:
  char* map_;
  size_t size_;
  float* data_;
};

TEST(DistanceTest, KernelsDoNotReadPastTheEndOfTheirInputs) {
  for (const DistanceKernels* k : AvailableKernelSets()) {
    for (size_t dim = 1; dim <= 70; ++dim) {
      GuardedFloats a(dim), b(dim);
      EXPECT_GE(k->l2_squared(a.data(), b.data(), dim), 0.0f) << k->isa;
      EXPECT_GE(k->dot(a.data(), b.data(), dim), 0.0f) << k->isa;
      constexpr size_t kRows = 3;
      GuardedFloats rows(kRows * dim);
      float out[kRows];
      k->l2_squared_batch(a.data(), rows.data(), kRows, dim, out);
      k->dot_batch(a.data(), rows.data(), kRows, dim, out);
      GuardedFloats r0(dim), r1(dim), r2(dim), r3(dim);
      const float* four[4] = {r0.data(), r1.data(), r2.data(), r3.data()};
      float four_out[4];
      k->l2_squared_four(a.data(), four, dim, four_out);
      EXPECT_GE(four_out[3], 0.0f) << k->isa;
      GuardedFloats c(dim);
      double sums[3];
      k->scaled_sums(a.data(), b.data(), c.data(), dim, sums);
      EXPECT_GE(sums[2], 0.0) << k->isa;
      std::vector<int16_t> weights(dim + 1, 12345);
      k->quantize_scaled(a.data(), b.data(), 1.0, 100, dim, weights.data());
      EXPECT_EQ(weights[dim], 12345) << k->isa << ": wrote past the end";
    }
  }
}

// The largest |weight| WeightedBytesFn's contract allows at `dim` (255 *
// sum |w_i| < 2^31), and `n` weights drawn uniformly within it.
int MostWeight(size_t dim) {
  return static_cast<int>(
      std::min<int64_t>(32767, kMaxWeightedBytesSum / (255 * static_cast<int64_t>(dim))));
}
std::vector<int16_t> RandomWeights(std::mt19937& rng, size_t n, int most) {
  std::uniform_int_distribution<int> weight(-most, most);
  std::vector<int16_t> w(n);
  for (int16_t& x : w) x = static_cast<int16_t>(weight(rng));
  return w;
}

// 16-bit weights times bytes: every kernel set exactly equal to a 64-bit
// sum, for every tail length, unaligned, with bytes over the whole 0..255
// range and weights as large as the kernels' contract allows for the dim.
TEST(DistanceTest, DotBytesIsExactForAllDimsAndKernelSets) {
  std::mt19937 rng(304);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const DistanceKernels* k : AvailableKernelSets()) {
    for (size_t dim : TestDims()) {
      const int most = MostWeight(dim);
      const std::vector<int16_t> w = RandomWeights(rng, dim + 1, most);
      std::vector<uint8_t> c(dim + 1);
      for (uint8_t& x : c) x = static_cast<uint8_t>(byte(rng));
      // The extremes too: every byte 255 against the largest weights.
      std::vector<int16_t> w_max(dim + 1, static_cast<int16_t>(most));
      std::vector<uint8_t> c_max(dim + 1, 255);
      int64_t want = 0;
      for (size_t i = 0; i < dim; ++i) want += int64_t{w[i + 1]} * c[i + 1];
      EXPECT_EQ(k->dot_bytes(w.data() + 1, c.data() + 1, dim), want) << k->isa << " dim " << dim;
      EXPECT_EQ(k->dot_bytes(w_max.data() + 1, c_max.data() + 1, dim),
                int64_t{most} * 255 * static_cast<int64_t>(dim))
          << k->isa << " dim " << dim;
      for (int16_t& x : w_max) x = static_cast<int16_t>(-most);
      EXPECT_EQ(k->dot_bytes(w_max.data() + 1, c_max.data() + 1, dim),
                -int64_t{most} * 255 * static_cast<int64_t>(dim))
          << k->isa << " dim " << dim;
    }
  }
}

// Four codes against one query's weights: each sum exactly dot_bytes's, in
// every kernel set, for every tail length, and at the extremes.
TEST(DistanceTest, DotBytesFourIsEachCodesExactSumForAllDimsAndKernelSets) {
  std::mt19937 rng(306);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const DistanceKernels* k : AvailableKernelSets()) {
    for (size_t dim : TestDims()) {
      const int most = MostWeight(dim);
      const std::vector<int16_t> w = RandomWeights(rng, dim, most);
      // Unaligned and apart: code c at its own offset 1 + c of its buffer.
      std::vector<std::vector<uint8_t>> c(4, std::vector<uint8_t>(dim + 4));
      for (auto& code : c) {
        for (uint8_t& x : code) x = static_cast<uint8_t>(byte(rng));
      }
      std::fill(c[3].begin(), c[3].end(), 255);  // the largest sum
      const uint8_t* const four[4] = {c[0].data() + 1, c[1].data() + 2, c[2].data() + 3,
                                      c[3].data() + 4};
      int32_t got[4];
      k->dot_bytes_four(w.data(), four, dim, got);
      for (int i = 0; i < 4; ++i) {
        int64_t want = 0;
        for (size_t j = 0; j < dim; ++j) want += int64_t{w[j]} * four[i][j];
        EXPECT_EQ(got[i], want) << k->isa << " dim " << dim << " code " << i;
      }
      // The largest sums the contract allows: every weight +-most against
      // every byte 255, in each of the four places.
      for (auto& code : c) std::fill(code.begin(), code.end(), 255);
      for (const int sign : {1, -1}) {
        std::vector<int16_t> w_max(dim, static_cast<int16_t>(sign * most));
        k->dot_bytes_four(w_max.data(), four, dim, got);
        for (int i = 0; i < 4; ++i) {
          EXPECT_EQ(got[i], sign * int64_t{most} * 255 * static_cast<int64_t>(dim))
              << k->isa << " dim " << dim << " code " << i;
        }
      }
    }
  }
}

TEST(DistanceTest, ScaledSumsAreTheScalarKernelsBitsForAllDimsAndKernelSets) {
  std::mt19937 rng(305);
  std::uniform_real_distribution<float> exponent(-30.0f, 30.0f);
  for (size_t dim : TestDims()) {
    // Magnitudes over 18 decades, so that the order of the additions shows.
    std::vector<float> q = RandomVector(rng, dim), lo = RandomVector(rng, dim),
                       scale = RandomVector(rng, dim);
    for (size_t i = 0; i < dim; ++i) q[i] *= std::exp2(exponent(rng));
    double want[3];
    ScalarKernels().scaled_sums(q.data(), lo.data(), scale.data(), dim, want);
    // The sums themselves, in any order: equal up to the additions' rounding.
    double largest = 0, bias = 0, bias_size = 0, norm = 0;
    for (size_t i = 0; i < dim; ++i) {
      largest = std::max(largest, std::fabs(double{q[i]} * scale[i]));
      bias += double{q[i]} * lo[i];
      bias_size += std::fabs(double{q[i]} * lo[i]);
      norm += double{q[i]} * q[i];
    }
    EXPECT_EQ(want[0], largest) << "dim " << dim;
    EXPECT_NEAR(want[1], bias, 1e-12 * bias_size) << "dim " << dim;
    EXPECT_NEAR(want[2], norm, 1e-12 * norm) << "dim " << dim;
    for (const DistanceKernels* k : AvailableKernelSets()) {
      double got[3];
      k->scaled_sums(q.data(), lo.data(), scale.data(), dim, got);
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(std::bit_cast<uint64_t>(got[j]), std::bit_cast<uint64_t>(want[j]))
            << k->isa << " dim " << dim << " sum " << j;
      }
    }
  }
}

// What a hostile file's vector may hold: a NaN product never becomes the
// largest (the running maximum is kept, as std::max(running, new) keeps
// it), infinities and -0.0 go through as the scalar kernel takes them, at
// every lane and in the tail.
TEST(DistanceTest, ScaledSumsTakeNaNInfinityAndNegativeZeroAsTheScalarKernel) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t dim : {4, 7, 8, 11, 16}) {
    for (size_t at = 0; at < dim; ++at) {
      for (const auto& [x, sc] : std::vector<std::pair<float, float>>{
               {nan, 1.0f}, {inf, 0.0f}, {-inf, 2.0f}, {-0.0f, -3.0f}, {inf, 1.0f}}) {
        // Decreasing, so that a lane which lost its running maximum to the
        // NaN would end with a smaller one.
        std::vector<float> q(dim), lo(dim, 0.25f), scale(dim, 1.0f);
        for (size_t i = 0; i < dim; ++i) q[i] = 1.0f - 0.01f * static_cast<float>(i);
        const double largest_other = at == 0 ? q[1] : q[0];
        q[at] = x;
        scale[at] = sc;
        double want[3];
        ScalarKernels().scaled_sums(q.data(), lo.data(), scale.data(), dim, want);
        for (const DistanceKernels* k : AvailableKernelSets()) {
          double got[3];
          k->scaled_sums(q.data(), lo.data(), scale.data(), dim, got);
          for (int j = 0; j < 3; ++j) {
            if (std::isnan(want[j])) {
              EXPECT_TRUE(std::isnan(got[j])) << k->isa << " dim " << dim << " at " << at;
            } else {
              EXPECT_EQ(std::bit_cast<uint64_t>(got[j]), std::bit_cast<uint64_t>(want[j]))
                  << k->isa << " dim " << dim << " at " << at << " q " << x << " sum " << j;
            }
          }
        }
        // The largest ignores the NaN (inf * 0) products and takes |inf|.
        if (std::isnan(x) || sc == 0.0f) {
          EXPECT_EQ(want[0], largest_other) << "dim " << dim << " at " << at;
        } else if (std::isinf(x)) {
          EXPECT_EQ(want[0], inf);
        }
      }
    }
  }
}

TEST(DistanceTest, QuantizeScaledRoundsHalfAwayClampsAndZeroesNaNOnEveryKernelSet) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // q_i * scale_i * inverse (inverse 2, scale 1) and the weight each must give.
  const std::vector<std::pair<float, int16_t>> cases = {
      {0.25f, 1},      {-0.25f, -1},    {0.74f, 1},      {-0.75f, -2},   {0.0f, 0},
      {-0.0f, 0},      {2e4f, 32000},   {-2e4f, -32000}, {nan, 0},       {inf, 32000},
      {-inf, -32000},  {1e-40f, 0},     {15999.75f, 32000}};
  for (const DistanceKernels* k : AvailableKernelSets()) {
    // Each case at every position of 4-lane vectors and of the tail.
    for (size_t shift = 0; shift < 8; ++shift) {
      std::vector<float> q, scale;
      std::vector<int16_t> want;
      for (size_t i = 0; i < shift; ++i) {
        q.push_back(1.0f);
        scale.push_back(1.0f);
        want.push_back(2);
      }
      for (const auto& [x, w] : cases) {
        q.push_back(x);
        scale.push_back(1.0f);
        want.push_back(w);
      }
      std::vector<int16_t> got(q.size() + 1, 12345);
      k->quantize_scaled(q.data(), scale.data(), 2.0, 32000, q.size(), got.data());
      for (size_t i = 0; i < q.size(); ++i) {
        EXPECT_EQ(got[i], want[i]) << k->isa << " q " << q[i] << " at " << i;
      }
      EXPECT_EQ(got.back(), 12345) << k->isa << ": wrote past the end";
    }
    // The bounds Sq8Query uses: most 32767 (up to 257 dims), and 0.
    std::vector<float> q = {1e9f, -1e9f, 0.3f, -0.7f, 1e9f, 2.0f, -1e9f, 0.0f, 1e9f};
    std::vector<float> scale(q.size(), 1.0f);
    std::vector<int16_t> got(q.size());
    k->quantize_scaled(q.data(), scale.data(), 1.0, 32767, q.size(), got.data());
    EXPECT_EQ(got, (std::vector<int16_t>{32767, -32767, 0, -1, 32767, 2, -32767, 0, 32767}))
        << k->isa;
    k->quantize_scaled(q.data(), scale.data(), 1.0, 0, q.size(), got.data());
    EXPECT_EQ(got, std::vector<int16_t>(q.size(), 0)) << k->isa;
  }
}

TEST(DistanceTest, QuantizeScaledIsTheScalarKernelsForAllDimsAndKernelSets) {
  std::mt19937 rng(306);
  for (size_t dim : TestDims()) {
    const std::vector<float> q = RandomVector(rng, dim), scale = RandomVector(rng, dim);
    std::vector<int16_t> want(dim);
    ScalarKernels().quantize_scaled(q.data(), scale.data(), 20000.0, 20000, dim, want.data());
    for (const DistanceKernels* k : AvailableKernelSets()) {
      std::vector<int16_t> got(dim);
      k->quantize_scaled(q.data(), scale.data(), 20000.0, 20000, dim, got.data());
      EXPECT_EQ(got, want) << k->isa << " dim " << dim;
    }
  }
}

// One code and four at once: nothing read past a code's last byte or the
// last weight.
TEST(DistanceTest, DotBytesOfOneAndOfFourCodesReadNoByteOrWeightPastTheEnd) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (const DistanceKernels* k : AvailableKernelSets()) {
    for (size_t dim = 1; dim <= 70; ++dim) {
      // dim weights and four codes of dim bytes, each ending right before a
      // PROT_NONE page.
      GuardedFloats weights((dim + 1) / 2 + page / 4);
      const int16_t* w =
          reinterpret_cast<const int16_t*>(weights.data() + (dim + 1) / 2 + page / 4) - dim;
      std::vector<std::unique_ptr<GuardedFloats>> guarded;
      const uint8_t* four[4];
      int64_t want[4] = {};
      for (int i = 0; i < 4; ++i) {
        guarded.push_back(std::make_unique<GuardedFloats>((dim + 3) / 4 + page / 4 + i));
        four[i] = reinterpret_cast<const uint8_t*>(guarded.back()->data() + (dim + 3) / 4 +
                                                   page / 4 + i) -
                  dim;
        for (size_t j = 0; j < dim; ++j) want[i] += int64_t{w[j]} * four[i][j];
        EXPECT_EQ(k->dot_bytes(w, four[i], dim), want[i]) << k->isa << " dim " << dim;
      }
      int32_t got[4];
      k->dot_bytes_four(w, four, dim, got);
      for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], want[i]) << k->isa << " dim " << dim;
    }
  }
}

TEST(DistanceTest, KernelsPicksBestIsaUnlessForcedLowerNeverOneCpuLacks) {
  // In rising order; the expected choice is min(forced, best).
  const std::vector<std::string> order = {"scalar", "avx2", "avx512", "avx512vnni"};
  const size_t best = CpuHasAvx512Vnni() ? 3 : CpuHasAvx512() ? 2 : CpuHasAvx2() ? 1 : 0;
  size_t expected = best;
  const char* forced = std::getenv("SHOAL_FORCE_ISA");
  if (forced != nullptr) {
    const auto it = std::find(order.begin(), order.end(), std::string(forced));
    if (it != order.end()) expected = std::min(best, static_cast<size_t>(it - order.begin()));
  }
  EXPECT_EQ(std::string(Kernels().isa), order[expected])
      << "SHOAL_FORCE_ISA=" << (forced ? forced : "(unset)");
}

std::vector<float> RandomUnitVector(std::mt19937& rng, size_t dim) {
  std::vector<float> v = RandomVector(rng, dim);
  EXPECT_TRUE(NormalizeInPlace(v.data(), dim));
  return v;
}

TEST(DistanceTest, DistanceFollowsEachMetricsConvention) {
  std::mt19937 rng(304);
  for (size_t dim : {1, 3, 16, 100, 768}) {
    const std::vector<float> a = RandomUnitVector(rng, dim);
    const std::vector<float> b = RandomUnitVector(rng, dim);
    const double scale = SumOfAbsProducts(a.data(), b.data(), dim);
    const double l2 = ReferenceL2Squared(a.data(), b.data(), dim);
    const double dot = ReferenceDot(a.data(), b.data(), dim);
    EXPECT_NEAR(Distance(Metric::kL2, a.data(), b.data(), dim), l2,
                kRelativeTolerance * l2);
    EXPECT_NEAR(Distance(Metric::kInnerProduct, a.data(), b.data(), dim), -dot,
                kRelativeTolerance * scale);
    EXPECT_NEAR(Distance(Metric::kCosine, a.data(), b.data(), dim), 1.0 - dot,
                kRelativeTolerance * scale);
  }
}

TEST(DistanceTest, CosineIsZeroForSameDirectionAndTwoForOpposite) {
  std::mt19937 rng(305);
  const size_t dim = 129;
  const std::vector<float> a = RandomUnitVector(rng, dim);
  std::vector<float> minus_a(a);
  for (float& x : minus_a) x = -x;
  EXPECT_NEAR(Distance(Metric::kCosine, a.data(), a.data(), dim), 0.0f, 1e-5);
  EXPECT_NEAR(Distance(Metric::kCosine, a.data(), minus_a.data(), dim), 2.0f,
              1e-5);
}

TEST(DistanceTest, DistanceBatchEqualsDistanceForEveryMetric) {
  std::mt19937 rng(306);
  const size_t dim = 77, n = 19;
  const std::vector<float> query = RandomUnitVector(rng, dim);
  std::vector<float> base;
  for (size_t r = 0; r < n; ++r) {
    const std::vector<float> row = RandomUnitVector(rng, dim);
    base.insert(base.end(), row.begin(), row.end());
  }
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    std::vector<float> out(n);
    DistanceBatch(metric, query.data(), base.data(), n, dim, out.data());
    for (size_t r = 0; r < n; ++r) {
      const float* row = base.data() + r * dim;
      EXPECT_EQ(out[r], Distance(metric, query.data(), row, dim))
          << "metric " << static_cast<int>(metric) << " row " << r;
    }
  }
}

double Norm(const std::vector<float>& v) {
  return std::sqrt(ReferenceDot(v.data(), v.data(), v.size()));
}

TEST(DistanceTest, NormalizeGivesUnitNormAndKeepsDirection) {
  std::mt19937 rng(307);
  for (size_t dim : {1, 2, 5, 8, 33, 768, 4096}) {
    const std::vector<float> original = RandomVector(rng, dim);
    std::vector<float> v = original;
    ASSERT_TRUE(NormalizeInPlace(v.data(), dim));
    EXPECT_NEAR(Norm(v), 1.0, 1e-6) << "dim " << dim;
    const double norm = Norm(original);
    for (size_t i = 0; i < dim; ++i) {
      EXPECT_NEAR(v[i] * norm, original[i], 1e-6)
          << "dim " << dim << " i " << i;
    }
  }
}

// Float squares of these overflow (1e30) or underflow (denormals) to Inf/0,
// but the vectors are finite and nonzero, so they have a direction.
TEST(DistanceTest, NormalizeHandlesHugeAndTinyComponents) {
  std::vector<float> huge(100, 1e30f);
  ASSERT_TRUE(NormalizeInPlace(huge.data(), huge.size()));
  for (float x : huge) EXPECT_NEAR(x, 0.1f, 1e-7);

  std::vector<float> tiny(4, std::numeric_limits<float>::denorm_min());
  ASSERT_TRUE(NormalizeInPlace(tiny.data(), tiny.size()));
  for (float x : tiny) EXPECT_NEAR(x, 0.5f, 1e-7);

  std::vector<float> mixed = {FLT_MAX, -FLT_MAX, 0.0f};
  ASSERT_TRUE(NormalizeInPlace(mixed.data(), mixed.size()));
  EXPECT_NEAR(mixed[0], std::sqrt(0.5), 1e-7);
  EXPECT_NEAR(mixed[1], -std::sqrt(0.5), 1e-7);
}

void ExpectNormalizeRefusesAndLeavesUnchanged(std::vector<float> v) {
  const std::vector<float> before = v;
  EXPECT_FALSE(NormalizeInPlace(v.data(), v.size()));
  for (size_t i = 0; i < v.size(); ++i) {  // Bitwise: NaN != NaN.
    EXPECT_EQ(std::bit_cast<uint32_t>(v[i]),
              std::bit_cast<uint32_t>(before[i]));
  }
}

TEST(DistanceTest, NormalizeRefusesZeroVector) {
  ExpectNormalizeRefusesAndLeavesUnchanged(std::vector<float>(10, 0.0f));
  ExpectNormalizeRefusesAndLeavesUnchanged({0.0f, -0.0f, 0.0f});
  ExpectNormalizeRefusesAndLeavesUnchanged({});
}

TEST(DistanceTest, NormalizeRefusesNaNAndInf) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  ExpectNormalizeRefusesAndLeavesUnchanged({1.0f, 2.0f, kNaN, 4.0f});
  ExpectNormalizeRefusesAndLeavesUnchanged({1.0f, kInf, 3.0f});
  ExpectNormalizeRefusesAndLeavesUnchanged({-kInf, 0.0f});
  ExpectNormalizeRefusesAndLeavesUnchanged({kNaN});
}

// Lengths around the 64-float blocks of AllFinite and the SIMD widths.
constexpr size_t kAllFiniteLengths[] = {
    1,  2,  3,  4,  5,  7,   8,   9,   15,  16,  17,  31,  32,
    33, 63, 64, 65, 66, 127, 128, 129, 191, 192, 193, 257, 1000};

TEST(DistanceTest, AllFiniteCatchesNaNAndInfAtEveryPosition) {
  const float bad_values[] = {
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::signaling_NaN(),
      std::bit_cast<float>(uint32_t{0xffffffffu}),  // NaN, every bit set
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
  };
  std::mt19937 rng(308);
  for (size_t n : kAllFiniteLengths) {
    std::vector<float> v = RandomVector(rng, n);
    v[0] = FLT_MAX;  // The largest finite exponent, next to the Inf pattern.
    ASSERT_TRUE(AllFinite(v.data(), n));
    for (size_t pos = 0; pos < n; ++pos) {
      const float saved = v[pos];
      for (float bad : bad_values) {
        v[pos] = bad;
        EXPECT_FALSE(AllFinite(v.data(), n)) << "n " << n << " pos " << pos;
      }
      v[pos] = saved;
    }
  }
}

TEST(DistanceTest, AllFiniteAcceptsDenormalsSignedZeroAndExtremes) {
  const float good_values[] = {
      0.0f,     -0.0f,    FLT_MIN, -FLT_MIN, FLT_MIN / 2, -FLT_MIN / 2,
      std::numeric_limits<float>::denorm_min(),
      FLT_MAX,  -FLT_MAX, 1.0f,    -1.0f,
  };
  std::vector<float> v;
  while (v.size() < 1000) {
    v.insert(v.end(), std::begin(good_values), std::end(good_values));
  }
  for (size_t n = 0; n <= v.size(); ++n) {
    EXPECT_TRUE(AllFinite(v.data(), n)) << "n " << n;
  }
  EXPECT_TRUE(AllFinite(nullptr, 0));
}

// The batch check PutBatch validates with: true only when every component is
// below 2^56 in magnitude, so a NaN, an Inf or one large value anywhere makes
// it false (and the caller falls back to the exact per-row checks).
TEST(DistanceTest, AllWellBelowDistanceRangeRefusesAnyComponentFrom2To56) {
  const float below = std::nextafter(0x1p56f, 0.0f);
  const float refused[] = {0x1p56f, -0x1p56f, FLT_MAX, std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 rng(57);
  for (size_t n : kAllFiniteLengths) {
    std::vector<float> v = RandomVector(rng, n);
    v[0] = below;
    v[n - 1] = -below;
    ASSERT_TRUE(AllWellBelowDistanceRange(v.data(), n)) << "n " << n;
    for (size_t pos = 0; pos < n; ++pos) {
      const float saved = v[pos];
      for (float bad : refused) {
        v[pos] = bad;
        EXPECT_FALSE(AllWellBelowDistanceRange(v.data(), n)) << "n " << n << " pos " << pos;
      }
      v[pos] = saved;
    }
    // The promise: every row of them is within the distance range.
    std::vector<float> big(std::min<size_t>(n, 4096), below);
    EXPECT_TRUE(NormWithinDistanceRange(big.data(), big.size()));
  }
}

}  // namespace
}  // namespace shoal

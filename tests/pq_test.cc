// Copyright 2026 The shoal Authors.
//
// PQ codes (codes/pq.h): a small reconstruction error on clustered data, a
// query's table distance equal to its exact distance to the decoded vector,
// a code ranking that finds the true nearest neighbour, codebooks that
// survive a round trip and refuse damaged bytes, and training that is a pure
// function of its inputs and seed.

#include "codes/pq.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "distance/distance.h"
#include "gtest/gtest.h"
#include "codes/sq8.h"
#include "testutil/sanitized.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/thread_pool.h"

namespace shoal::codes {
namespace {

std::vector<float> Uniform(size_t n, uint32_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n * dim);
  for (float& x : v) x = u(rng);
  return v;
}

// n points around `clusters` Gaussian centres (spread 1), each coordinate
// off its centre by N(0, 0.2^2), all shifted by `offset`.
std::vector<float> Clustered(size_t n, uint32_t dim, size_t clusters, uint64_t seed,
                             float offset = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> centres(clusters * dim);
  for (float& x : centres) x = g(rng);
  std::vector<float> v(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const float* c = centres.data() + (i % clusters) * dim;
    for (uint32_t j = 0; j < dim; ++j) v[i * dim + j] = offset + c[j] + 0.2f * g(rng);
  }
  return v;
}

void NormalizeRows(std::vector<float>* v, uint32_t dim) {
  for (size_t i = 0; i < v->size() / dim; ++i) NormalizeInPlace(v->data() + i * dim, dim);
}

Pq TrainOrDie(const std::vector<float>& v, uint32_t dim, uint32_t m, uint64_t seed = 1,
              ThreadPool* pool = nullptr) {
  absl::StatusOr<Pq> pq = Pq::Train(v.data(), v.size() / dim, dim, m, pool, seed);
  EXPECT_TRUE(pq.ok()) << pq.status();
  return *std::move(pq);
}

std::vector<uint8_t> EncodeAll(const Pq& pq, const std::vector<float>& v) {
  const size_t n = v.size() / pq.dim();
  std::vector<uint8_t> codes(n * pq.code_bytes());
  for (size_t i = 0; i < n; ++i) pq.Encode(v.data() + i * pq.dim(), codes.data() + i * pq.code_bytes());
  return codes;
}

// sum |x - decode(encode(x))|^2 / sum |x - mean|^2 over v.
double RelativeError(const Pq& pq, const std::vector<float>& v) {
  const uint32_t dim = pq.dim();
  const size_t n = v.size() / dim;
  std::vector<double> mean(dim, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < dim; ++j) mean[j] += v[i * dim + j] / n;
  }
  std::vector<uint8_t> code(pq.code_bytes());
  std::vector<float> back(dim);
  double error = 0, variance = 0;
  for (size_t i = 0; i < n; ++i) {
    pq.Encode(v.data() + i * dim, code.data());
    pq.Decode(code.data(), back.data());
    for (uint32_t j = 0; j < dim; ++j) {
      const double x = v[i * dim + j];
      error += (x - back[j]) * (x - back[j]);
      variance += (x - mean[j]) * (x - mean[j]);
    }
  }
  return error / variance;
}

TEST(PqTest, ChooseSubspacesGivesOneByteForEveryFourDimensions) {
  EXPECT_EQ(Pq::ChooseSubspaces(1), 1u);
  EXPECT_EQ(Pq::ChooseSubspaces(4), 1u);
  EXPECT_EQ(Pq::ChooseSubspaces(5), 2u);
  EXPECT_EQ(Pq::ChooseSubspaces(64), 16u);
  EXPECT_EQ(Pq::ChooseSubspaces(128), 32u);
  EXPECT_EQ(Pq::ChooseSubspaces(384), 96u);
  EXPECT_EQ(Pq::ChooseSubspaces(768), 192u);
  EXPECT_EQ(Pq::ChooseSubspaces(130), 33u);
}

TEST(PqTest, TrainRefusesZeroDimAndZeroOrTooManySubspaces) {
  const std::vector<float> v = Uniform(10, 8, 1);
  EXPECT_TRUE(absl::IsInvalidArgument(Pq::Train(v.data(), 10, 0, 1, nullptr, 1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Pq::Train(v.data(), 10, 8, 0, nullptr, 1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Pq::Train(v.data(), 10, 8, 9, nullptr, 1).status()));
  EXPECT_TRUE(Pq::Train(v.data(), 10, 8, 8, nullptr, 1).ok());
  EXPECT_TRUE(Pq::Train(v.data(), 10, 8, 1, nullptr, 1).ok());
}

TEST(PqTest, ChunksSplitTheDimensionsAsEvenlyAsPossible) {
  const std::vector<float> v = Uniform(300, 10, 2);
  const Pq pq = TrainOrDie(v, 10, 3);
  ASSERT_EQ(pq.subspaces(), 3u);
  EXPECT_EQ(pq.code_bytes(), 3u);
  EXPECT_EQ(pq.offset(0), 0u);
  EXPECT_EQ(pq.offset(1), 4u);
  EXPECT_EQ(pq.offset(2), 7u);
  EXPECT_EQ(pq.offset(3), 10u);
}

TEST(PqTest, ReconstructionErrorIsASmallFractionOfTheVarianceOnClusteredData) {
  // 64 clusters of spread 0.2 around centres of spread 1 in 32-d: the points'
  // variance is 1.04 a dimension, the within-cluster part 0.04 (3.8%).
  const uint32_t dim = 32;
  const std::vector<float> v = Clustered(8000, dim, 64, 3);
  const Pq pq = TrainOrDie(v, dim, Pq::ChooseSubspaces(dim));
  const double error = RelativeError(pq, v);
  std::printf("PQ m=%u on clustered 32-d: reconstruction error %.4f of the variance\n",
              pq.subspaces(), error);
  EXPECT_LT(error, 0.05);
  // Points not seen in training do as well.
  const std::vector<float> held_out = Clustered(2000, dim, 64, 3);
  EXPECT_LT(RelativeError(pq, held_out), 0.05);
}

TEST(PqTest, ALargeCommonOffsetDoesNotCostPrecision) {
  // The mean is removed before k-means: data around 1000 quantizes as well as
  // the same data around 0.
  const uint32_t dim = 16;
  const double at_zero = RelativeError(TrainOrDie(Clustered(4000, dim, 32, 4), dim, 4),
                                       Clustered(4000, dim, 32, 4));
  const std::vector<float> far = Clustered(4000, dim, 32, 4, 1000.0f);
  const double at_1000 = RelativeError(TrainOrDie(far, dim, 4), far);
  EXPECT_NEAR(at_1000, at_zero, 0.01 + 0.1 * at_zero);
}

TEST(PqTest, QueryDistanceToACodeIsTheDistanceToTheDecodedVector) {
  const uint32_t dim = 37;  // chunks of 3 and 2 dimensions
  const size_t n = 500;
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    SCOPED_TRACE(static_cast<int>(metric));
    std::vector<float> v = Clustered(n, dim, 16, 5, 0.5f);
    std::vector<float> q = Uniform(1, dim, 6);
    if (metric == Metric::kCosine) {
      NormalizeRows(&v, dim);
      NormalizeRows(&q, dim);
    }
    const Pq pq = TrainOrDie(v, dim, 15);
    PqQuery query;
    query.Reset(pq, metric, q.data());
    ASSERT_EQ(query.code_bytes(), 15u);
    const std::vector<uint8_t> codes = EncodeAll(pq, v);
    std::vector<float> batch(n);
    query.Distances(codes.data(), n, batch.data());
    std::vector<float> back(dim);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* code = codes.data() + i * pq.code_bytes();
      pq.Decode(code, back.data());
      // Cosine is 1 - dot against the decoded vector (not renormalized).
      const float want = metric == Metric::kCosine
                             ? 1.0f - ScalarKernels().dot(q.data(), back.data(), dim)
                             : Distance(metric, q.data(), back.data(), dim);
      ASSERT_NEAR(query.Distance(code), want, 1e-4f * (1.0f + std::fabs(want)));
      ASSERT_EQ(batch[i], query.Distance(code));
    }
  }
}

// The fraction of queries whose true nearest neighbour (exact L2) is among
// the `depth` nearest by code distance, and the mean recall@10 of the code
// ranking's top 10 against the true top 10.
struct CodeRecall {
  double nn_in_depth = 0;
  double recall_at_10 = 0;
};

template <typename DistanceToCode>
CodeRecall MeasureRecall(const std::vector<float>& base, const std::vector<float>& queries,
                         uint32_t dim, size_t depth, const DistanceToCode& code_distance) {
  const size_t n = base.size() / dim, nq = queries.size() / dim;
  CodeRecall r;
  std::vector<float> exact(n), coded(n);
  std::vector<uint32_t> by_exact(n), by_code(n);
  for (size_t qi = 0; qi < nq; ++qi) {
    const float* q = queries.data() + qi * dim;
    DistanceBatch(Metric::kL2, q, base.data(), n, dim, exact.data());
    code_distance(q, coded.data());
    std::iota(by_exact.begin(), by_exact.end(), 0u);
    std::iota(by_code.begin(), by_code.end(), 0u);
    std::partial_sort(by_exact.begin(), by_exact.begin() + 10, by_exact.end(),
                      [&](uint32_t a, uint32_t b) { return exact[a] < exact[b]; });
    std::partial_sort(by_code.begin(), by_code.begin() + depth, by_code.end(),
                      [&](uint32_t a, uint32_t b) { return coded[a] < coded[b]; });
    r.nn_in_depth +=
        std::find(by_code.begin(), by_code.begin() + depth, by_exact[0]) != by_code.begin() + depth;
    size_t hits = 0;
    for (size_t k = 0; k < 10; ++k) {
      hits += std::find(by_code.begin(), by_code.begin() + 10, by_exact[k]) != by_code.begin() + 10;
    }
    r.recall_at_10 += hits / 10.0;
  }
  r.nn_in_depth /= nq;
  r.recall_at_10 /= nq;
  return r;
}

TEST(PqTest, CodeRankingFindsTheNearestNeighbourInTheTop20) {
  // 10,000 uniform random 64-d vectors (no structure for PQ to exploit: the
  // hard case), 200 queries from the same distribution, code of 16 bytes.
  const uint32_t dim = 64;
  const size_t n = 10000, nq = test::kSanitized ? 50 : 200;
  const std::vector<float> base = Uniform(n, dim, 7);
  const std::vector<float> queries = Uniform(nq, dim, 8);
  const auto start = std::chrono::steady_clock::now();
  const Pq pq = TrainOrDie(base, dim, Pq::ChooseSubspaces(dim));
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<uint8_t> codes = EncodeAll(pq, base);
  PqQuery pq_query;
  const CodeRecall with_pq = MeasureRecall(base, queries, dim, 20, [&](const float* q, float* out) {
    pq_query.Reset(pq, Metric::kL2, q);
    pq_query.Distances(codes.data(), n, out);
  });

  const Sq8 sq8 = Sq8::Train(base.data(), n, dim);
  std::vector<uint8_t> sq8_codes(n * Sq8::CodeBytes(dim));
  for (size_t i = 0; i < n; ++i) {
    sq8.Encode(base.data() + i * dim, sq8_codes.data() + i * Sq8::CodeBytes(dim));
  }
  Sq8Query sq8_query;
  const CodeRecall with_sq8 = MeasureRecall(base, queries, dim, 20, [&](const float* q, float* out) {
    sq8_query.Reset(sq8, Metric::kL2, q);
    for (size_t i = 0; i < n; ++i) out[i] = sq8_query.Distance(sq8_codes.data() + i * Sq8::CodeBytes(dim));
  });
  std::printf(
      "uniform 64-d, n=%zu, %zu queries: PQ %zu B (train %.2f s): NN in top-20 %.3f, "
      "recall@10 %.3f; SQ8 %zu B: NN in top-20 %.3f, recall@10 %.3f\n",
      n, nq, pq.code_bytes(), train_s, with_pq.nn_in_depth, with_pq.recall_at_10,
      Sq8::CodeBytes(dim), with_sq8.nn_in_depth, with_sq8.recall_at_10);
  EXPECT_GE(with_pq.nn_in_depth, 0.90);
}

TEST(PqTest, FewerVectorsThanCentroidsTrainAFiniteCodebookThatReadsThemBack) {
  const uint32_t dim = 12;
  for (size_t n : {0u, 1u, 2u, 5u, 255u}) {
    SCOPED_TRACE(n);
    std::vector<float> v = Uniform(n, dim, 9);
    if (n == 5) std::copy(v.begin(), v.begin() + dim, v.begin() + dim);  // a repeat
    const Pq pq = TrainOrDie(v, dim, 3);
    for (uint32_t j = 0; j < dim; ++j) {
      ASSERT_TRUE(std::isfinite(pq.mean()[j]));
      for (uint32_t c = 0; c < Pq::kCentroids; ++c) ASSERT_TRUE(std::isfinite(pq.centroid(j, c)));
    }
    // Every chunk of a training vector is a centroid of its own.
    std::vector<uint8_t> code(pq.code_bytes());
    std::vector<float> back(dim);
    for (size_t i = 0; i < n; ++i) {
      pq.Encode(v.data() + i * dim, code.data());
      pq.Decode(code.data(), back.data());
      for (uint32_t j = 0; j < dim; ++j) ASSERT_NEAR(back[j], v[i * dim + j], 1e-6);
    }
    // And any other vector still gets a finite distance.
    const std::vector<float> q = Uniform(1, dim, 10);
    pq.Encode(q.data(), code.data());
    PqQuery query;
    query.Reset(pq, Metric::kL2, q.data());
    EXPECT_TRUE(std::isfinite(query.Distance(code.data())));
  }
}

TEST(PqTest, TrainingIsAPureFunctionOfTheInputsAndSeed) {
  const uint32_t dim = 24;
  const std::vector<float> v = Clustered(3000, dim, 20, 11);
  const std::string a = TrainOrDie(v, dim, 6, 42).Serialize();
  EXPECT_EQ(TrainOrDie(v, dim, 6, 42).Serialize(), a);
  ThreadPool pool(2);
  EXPECT_EQ(TrainOrDie(v, dim, 6, 42, &pool).Serialize(), a);
  EXPECT_NE(TrainOrDie(v, dim, 6, 43).Serialize(), a);
}

TEST(PqTest, TrainingSamplesLargeInputsDeterministically) {
  // More vectors than kMaxTrainingVectors: the sample depends on the seed.
  const uint32_t dim = 4;
  const std::vector<float> v = Clustered(Pq::kMaxTrainingVectors + 5000, dim, 50, 12);
  const Pq pq = TrainOrDie(v, dim, 1, 7);
  EXPECT_EQ(TrainOrDie(v, dim, 1, 7).Serialize(), pq.Serialize());
  EXPECT_LT(RelativeError(pq, v), 0.05);
}

TEST(PqTest, EncodeBatchOnAPoolGivesTheBytesOfEncode) {
  const uint32_t dim = 20;
  const std::vector<float> v = Clustered(5000, dim, 30, 13);
  const Pq pq = TrainOrDie(v, dim, 5);
  ThreadPool pool(2);
  std::vector<uint8_t> batch(5000 * pq.code_bytes());
  pq.EncodeBatch(v.data(), 5000, batch.data(), &pool);
  EXPECT_EQ(batch, EncodeAll(pq, v));
}

TEST(PqTest, SerializeRoundTripGivesIdenticalCodesAndDistances) {
  const uint32_t dim = 30;
  const std::vector<float> v = Clustered(2000, dim, 20, 14, -3.0f);
  const Pq pq = TrainOrDie(v, dim, 7);
  const std::string bytes = pq.Serialize();
  EXPECT_EQ(bytes.size(), 32 + 4 * 8 + 1028 * dim);
  absl::StatusOr<Pq> back = Pq::Deserialize(bytes, dim);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Serialize(), bytes);
  EXPECT_EQ(EncodeAll(*back, v), EncodeAll(pq, v));
  const std::vector<uint8_t> codes = EncodeAll(pq, v);
  const std::vector<float> q = Uniform(1, dim, 15);
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    PqQuery a, b;
    a.Reset(pq, metric, q.data());
    b.Reset(*back, metric, q.data());
    for (size_t i = 0; i < 2000; ++i) {
      ASSERT_EQ(a.Distance(codes.data() + i * 7), b.Distance(codes.data() + i * 7));
    }
  }
}

// A small codebook (8-d, 2 chunks: 8,272 bytes) for the damage tests.
std::string SmallCodebook() {
  const std::vector<float> v = Clustered(600, 8, 10, 16);
  return TrainOrDie(v, 8, 2).Serialize();
}

TEST(PqTest, DeserializeRefusesEveryTruncation) {
  const std::string bytes = SmallCodebook();
  for (size_t len = 0; len < bytes.size(); ++len) {
    const absl::Status s = Pq::Deserialize(std::string_view(bytes).substr(0, len), 8).status();
    ASSERT_TRUE(absl::IsDataLoss(s)) << len << ": " << s;
  }
  EXPECT_TRUE(absl::IsDataLoss(Pq::Deserialize(bytes + "x", 8).status()));
}

TEST(PqTest, DeserializeRefusesEveryFlippedByte) {
  const std::string bytes = SmallCodebook();
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x10;
    const absl::Status s = Pq::Deserialize(bad, 8).status();
    ASSERT_TRUE(absl::IsDataLoss(s)) << "byte " << i << ": " << s;
  }
}

TEST(PqTest, DeserializeRefusesGarbageAndAnotherDim) {
  std::mt19937_64 rng(17);
  for (size_t len : {0u, 7u, 32u, 100u, 8272u, 100000u}) {
    std::string garbage(len, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    EXPECT_TRUE(absl::IsDataLoss(Pq::Deserialize(garbage, 8).status())) << len;
  }
  const std::string bytes = SmallCodebook();
  EXPECT_TRUE(absl::IsDataLoss(Pq::Deserialize(bytes, 9).status()));
  EXPECT_TRUE(absl::IsDataLoss(Pq::Deserialize(bytes, 0).status()));
  EXPECT_TRUE(absl::IsDataLoss(Pq::Deserialize(bytes, 0xFFFFFFFFu).status()));
}

// The codebook with field `offset` (4 bytes) replaced and the checksum
// recomputed, as a writer with a bug would leave it.
std::string WithField(std::string bytes, size_t offset, uint32_t value) {
  EncodeFixed32(bytes.data() + offset, value);
  EncodeFixed64(bytes.data() + bytes.size() - 8, Checksum64(bytes.data(), bytes.size() - 8));
  return bytes;
}

TEST(PqTest, DeserializeRefusesBadFieldsUnderAValidChecksum) {
  const std::string bytes = SmallCodebook();  // offsets at 24: 0, 4, 8
  const struct {
    size_t offset;
    uint32_t value;
  } cases[] = {
      {0, 0},                            // magic
      {8, 2},                            // version
      {12, 9},                           // dim
      {16, 0},                           // m
      {16, 3},                           // m (size no longer matches)
      {20, 16},                          // centroids
      {24, 1},                           // first offset not 0
      {28, 0},                           // offsets not increasing
      {28, 8},                           // an empty chunk
      {32, 7},                           // last offset not dim
      {36, 0x7FC00000},                  // mean[0] NaN
      {36 + 32 + 4 * 300, 0x7F800000},   // a centroid +Inf
  };
  for (const auto& c : cases) {
    const absl::Status s = Pq::Deserialize(WithField(bytes, c.offset, c.value), 8).status();
    EXPECT_TRUE(absl::IsDataLoss(s)) << c.offset << " = " << c.value << ": " << s;
  }
}

// Not a test of speed (nothing asserted): prints the cost of a lookup table
// and of a distance per code for the default code at 128-d.
TEST(PqTest, PrintsLookupTableAndDistanceCost) {
  const uint32_t dim = 128;
  const size_t n = 20000;
  const std::vector<float> v = Uniform(n, dim, 18);
  const std::vector<float> train(v.begin(), v.begin() + 4000 * dim);
  const Pq pq = TrainOrDie(train, dim, Pq::ChooseSubspaces(dim));
  const std::vector<uint8_t> codes = EncodeAll(pq, v);
  const std::vector<float> q = Uniform(1, dim, 19);
  PqQuery query;
  using Clock = std::chrono::steady_clock;
  const int resets = 200;
  auto t0 = Clock::now();
  for (int i = 0; i < resets; ++i) query.Reset(pq, Metric::kL2, q.data());
  const double reset_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / resets;
  std::vector<float> out(n);
  const int rounds = 20;
  double sink = 0;
  t0 = Clock::now();
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < n; ++i) sink += query.Distance(codes.data() + i * pq.code_bytes());
  }
  const double one_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / (rounds * n);
  t0 = Clock::now();
  for (int r = 0; r < rounds; ++r) {
    query.Distances(codes.data(), n, out.data());
    sink += out[r];
  }
  const double batch_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / (rounds * n);
  // The plain loop over the chunks, for comparison with the unrolled one.
  t0 = Clock::now();
  const float* table = query.table().data();
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* code = codes.data() + i * pq.code_bytes();
      float d = query.bias();
      for (size_t s = 0; s < pq.code_bytes(); ++s) d += table[s * 256 + code[s]];
      sink += d;
    }
  }
  const double plain_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / (rounds * n);
  std::printf("PQ 128-d, %zu B codes: LUT %.1f us; Distance %.1f ns/code, Distances %.1f ns/code, "
              "plain loop %.1f ns/code (%g)\n",
              pq.code_bytes(), reset_us, one_ns, batch_ns, plain_ns, sink > 0 ? 0.0 : 1.0);
}

}  // namespace
}  // namespace shoal::codes

// Copyright 2026 The shoal Authors.

#include "common/dataset.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/status/status.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

// Per-cluster standard deviation per component, relative to the centres'
// N(0, 1). Tight clusters (0.1) are far apart; diffuse ones (0.8) overlap
// their neighbours, as real embedding clusters do.
constexpr double kMinSpread = 0.1;
constexpr double kMaxSpread = 0.8;
// Sigma of the log-normal cluster weights: the largest cluster is several
// times the median one.
constexpr double kWeightSigma = 1.0;

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), seeded through SplitMix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& word : s_) word = SplitMix64(seed);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in (0, 1): never 0, so log() is safe.
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal by Box-Muller; the second value of each pair is kept.
  double Gaussian() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2.0 * std::log(Uniform()));
    const double theta = 2.0 * std::numbers::pi * Uniform();
    spare_ = r * std::sin(theta);
    has_spare_ = true;
    return r * std::cos(theta);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

struct Mixture {
  uint32_t dim;
  std::vector<float> centres;     // num_clusters * dim
  std::vector<double> spread;     // per cluster
  std::vector<double> cumulative; // cumulative weights, last == 1
};

Mixture MakeMixture(const DatasetSpec& spec, Rng& rng) {
  Mixture m{spec.dim, {}, {}, {}};
  m.centres.resize(static_cast<size_t>(spec.num_clusters) * spec.dim);
  for (float& x : m.centres) x = static_cast<float>(rng.Gaussian());
  const double log_lo = std::log(kMinSpread), log_hi = std::log(kMaxSpread);
  double total = 0;
  for (uint32_t c = 0; c < spec.num_clusters; ++c) {
    m.spread.push_back(std::exp(log_lo + (log_hi - log_lo) * rng.Uniform()));
    total += std::exp(kWeightSigma * rng.Gaussian());
    m.cumulative.push_back(total);
  }
  for (double& w : m.cumulative) w /= total;
  m.cumulative.back() = 1.0;
  return m;
}

// Fills `out` (count * dim floats) with samples of the mixture.
void Sample(const Mixture& m, Rng& rng, size_t count, std::vector<float>& out) {
  out.resize(count * m.dim);
  for (size_t i = 0; i < count; ++i) {
    const double u = rng.Uniform();
    const size_t c = std::min<size_t>(
        std::upper_bound(m.cumulative.begin(), m.cumulative.end(), u) -
            m.cumulative.begin(),
        m.cumulative.size() - 1);
    const float* centre = m.centres.data() + c * m.dim;
    float* row = out.data() + i * m.dim;
    for (uint32_t d = 0; d < m.dim; ++d) {
      row[d] = static_cast<float>(centre[d] + m.spread[c] * rng.Gaussian());
    }
  }
}

// The embedding-like shape (see dataset.h).
constexpr double kSpectrumExponent = -0.6;  // of the standard deviation
constexpr double kMeanNorm = 1.0;           // against a point's spread, ~1.9
constexpr double kTopicScale = 0.7;         // a topic's offset against the spread
constexpr uint32_t kRotationBlock = 32;

struct Embedding {
  uint32_t dim;
  std::vector<double> sigma;        // per principal direction
  std::vector<float> mean;          // dim
  std::vector<float> topics;        // num_clusters * dim, in principal coordinates
  std::vector<uint32_t> permutation;
  std::vector<double> rotations;    // blocks of kRotationBlock^2, orthonormal rows
};

// Orthonormal rows by Gram-Schmidt of a Gaussian matrix.
void RandomRotation(uint32_t n, Rng& rng, double* out) {
  for (uint32_t i = 0; i < n; ++i) {
    double* row = out + size_t{i} * n;
    while (true) {
      for (uint32_t k = 0; k < n; ++k) row[k] = rng.Gaussian();
      for (uint32_t j = 0; j < i; ++j) {
        const double* prev = out + size_t{j} * n;
        double dot = 0;
        for (uint32_t k = 0; k < n; ++k) dot += row[k] * prev[k];
        for (uint32_t k = 0; k < n; ++k) row[k] -= dot * prev[k];
      }
      double norm = 0;
      for (uint32_t k = 0; k < n; ++k) norm += row[k] * row[k];
      if (norm > 1e-6) {
        for (uint32_t k = 0; k < n; ++k) row[k] /= std::sqrt(norm);
        break;
      }
    }
  }
}

Embedding MakeEmbedding(const DatasetSpec& spec, Rng& rng) {
  Embedding e;
  e.dim = spec.dim;
  for (uint32_t j = 0; j < spec.dim; ++j) e.sigma.push_back(std::pow(1.0 + j, kSpectrumExponent));
  double spread = 0;
  for (double s : e.sigma) spread += s * s;
  spread = std::sqrt(spread);
  e.mean.resize(spec.dim);
  double norm = 0;
  for (float& x : e.mean) {
    x = static_cast<float>(rng.Gaussian());
    norm += double(x) * x;
  }
  for (float& x : e.mean) x = static_cast<float>(x / std::sqrt(norm) * kMeanNorm * spread);
  e.topics.resize(size_t{spec.num_clusters} * spec.dim);
  for (size_t i = 0; i < e.topics.size(); ++i) {
    e.topics[i] = static_cast<float>(kTopicScale * e.sigma[i % spec.dim] * rng.Gaussian());
  }
  e.permutation.resize(spec.dim);
  for (uint32_t j = 0; j < spec.dim; ++j) e.permutation[j] = j;
  for (uint32_t j = spec.dim; j > 1; --j) std::swap(e.permutation[j - 1], e.permutation[rng.Next() % j]);
  const uint32_t blocks = (spec.dim + kRotationBlock - 1) / kRotationBlock;
  e.rotations.resize(size_t{blocks} * kRotationBlock * kRotationBlock);
  for (uint32_t b = 0; b < blocks; ++b) {
    RandomRotation(kRotationBlock, rng, e.rotations.data() + size_t{b} * kRotationBlock * kRotationBlock);
  }
  return e;
}

// A point: mean + topic + noise in principal coordinates, permuted, each
// block of 32 rotated (a tail block of fewer dimensions stays as it is),
// normalized.
void SampleEmbedding(const Embedding& e, uint32_t topics, Rng& rng, size_t count,
                     std::vector<float>& out) {
  out.resize(count * e.dim);
  std::vector<double> principal(e.dim), permuted(e.dim);
  for (size_t i = 0; i < count; ++i) {
    const float* topic = e.topics.data() + (rng.Next() % topics) * e.dim;
    for (uint32_t j = 0; j < e.dim; ++j) principal[j] = topic[j] + e.sigma[j] * rng.Gaussian();
    for (uint32_t j = 0; j < e.dim; ++j) permuted[e.permutation[j]] = principal[j];
    float* row = out.data() + i * e.dim;
    for (uint32_t start = 0; start < e.dim; start += kRotationBlock) {
      const uint32_t n = std::min(kRotationBlock, e.dim - start);
      const double* r = e.rotations.data() + size_t{start / kRotationBlock} * kRotationBlock *
                                                 kRotationBlock;
      for (uint32_t k = 0; k < n; ++k) {
        double v = permuted[start + k];
        if (n == kRotationBlock) {
          v = 0;
          for (uint32_t m = 0; m < n; ++m) v += r[size_t{k} * n + m] * permuted[start + m];
        }
        row[start + k] = static_cast<float>(v + e.mean[start + k]);
      }
    }
    double norm = 0;
    for (uint32_t j = 0; j < e.dim; ++j) norm += double(row[j]) * row[j];
    const double inv = 1.0 / std::sqrt(norm);
    for (uint32_t j = 0; j < e.dim; ++j) row[j] = static_cast<float>(row[j] * inv);
  }
}

}  // namespace

absl::StatusOr<DatasetSpec> DatasetSpecByName(std::string_view name) {
  if (name == "small") return DatasetSpec{"small", 10'000, 128, 1000, 200};
  if (name == "medium") return DatasetSpec{"medium", 100'000, 256, 500, 500};
  if (name == "large") return DatasetSpec{"large", 1'000'000, 128, 1000, 1000};
  if (name == "embed") {
    return DatasetSpec{"embed", 100'000, 384, 1000, 300, DatasetSpec::Shape::kEmbedding,
                       "cosine"};
  }
  return absl::InvalidArgumentError(
      fmt::format("unknown dataset '{}' (want small, medium, large or embed)", name));
}

Dataset GenerateDataset(const DatasetSpec& spec, uint64_t seed) {
  // Three independent streams, so e.g. changing num_queries leaves the
  // centres and the base set unchanged.
  Rng mixture_rng(seed);
  Rng base_rng(seed ^ 0x5eed'ba5e'0000'0001ULL);
  Rng query_rng(seed ^ 0x5eed'0000'9e7e'0002ULL);
  Dataset data;
  data.spec = spec;
  data.source = fmt::format("synthetic, seed {}", seed);
  data.ids.resize(spec.num_vectors);
  for (size_t i = 0; i < spec.num_vectors; ++i) data.ids[i] = i;
  if (spec.shape == DatasetSpec::Shape::kEmbedding) {
    const Embedding embedding = MakeEmbedding(spec, mixture_rng);
    SampleEmbedding(embedding, spec.num_clusters, base_rng, spec.num_vectors, data.base);
    SampleEmbedding(embedding, spec.num_clusters, query_rng, spec.num_queries, data.queries);
    return data;
  }
  const Mixture mixture = MakeMixture(spec, mixture_rng);
  Sample(mixture, base_rng, spec.num_vectors, data.base);
  Sample(mixture, query_rng, spec.num_queries, data.queries);
  return data;
}

}  // namespace shoal_bench

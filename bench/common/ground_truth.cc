// Copyright 2026 The shoal Authors.

#include "common/ground_truth.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <utility>

#include "common/brute_force.h"
#include "common/progress.h"

namespace shoal_bench {
namespace {

// Four accumulators break the add dependency chain; double keeps the result
// independent of the order in which the engine sums.
double Dot(const float* a, const float* b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += double{a[i]} * b[i];
    s1 += double{a[i + 1]} * b[i + 1];
    s2 += double{a[i + 2]} * b[i + 2];
    s3 += double{a[i + 3]} * b[i + 3];
  }
  for (; i < n; ++i) s0 += double{a[i]} * b[i];
  return (s0 + s1) + (s2 + s3);
}

double SquaredL2(const float* a, const float* b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const double d0 = double{a[i]} - b[i], d1 = double{a[i + 1]} - b[i + 1];
    const double d2 = double{a[i + 2]} - b[i + 2], d3 = double{a[i + 3]} - b[i + 3];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < n; ++i) {
    const double d = double{a[i]} - b[i];
    s0 += d * d;
  }
  return (s0 + s1) + (s2 + s3);
}

class Scorer {
 public:
  Scorer(const Dataset& data, shoal::Metric metric) : data_(data), metric_(metric) {
    if (metric_ != shoal::Metric::kCosine) return;
    base_norm_.resize(data.size());
    for (size_t i = 0; i < data.size(); ++i) {
      base_norm_[i] = std::sqrt(Dot(data.Row(i).data(), data.Row(i).data(), data.dim()));
    }
  }
  // Distance from query q (norm q_norm, used by kCosine only) to base row i.
  double Distance(const float* q, double q_norm, size_t i) const {
    const float* row = data_.Row(i).data();
    switch (metric_) {
      case shoal::Metric::kL2:
        return SquaredL2(q, row, data_.dim());
      case shoal::Metric::kInnerProduct:
        return -Dot(q, row, data_.dim());
      case shoal::Metric::kCosine:
        return 1.0 - Dot(q, row, data_.dim()) / (q_norm * base_norm_[i]);
    }
    return 0;
  }

 private:
  const Dataset& data_;
  shoal::Metric metric_;
  std::vector<double> base_norm_;
};

// The best k of `candidates` (base rows) by double-precision distance,
// ties by id.
std::vector<uint64_t> Rerank(const Dataset& data, const Scorer& scorer, size_t query,
                             const std::vector<Candidate>& candidates, uint32_t k) {
  const float* q = data.Query(query).data();
  const double q_norm = std::sqrt(Dot(q, q, data.dim()));
  std::vector<std::pair<double, uint64_t>> scored;
  for (const Candidate& c : candidates) {
    scored.emplace_back(scorer.Distance(q, q_norm, c.row), data.ids[c.row]);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<uint64_t> ids;
  for (size_t j = 0; j < std::min<size_t>(k, scored.size()); ++j) ids.push_back(scored[j].second);
  return ids;
}

}  // namespace

std::vector<std::vector<uint64_t>> BruteForceKnn(const Dataset& data,
                                                 shoal::Metric metric,
                                                 uint32_t k, uint32_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const MatrixView base{data.base.data(), data.size(), data.dim()};
  const MatrixView queries{data.queries.data(), data.num_queries(), data.dim()};
  std::vector<std::vector<Candidate>> candidates;
  {
    Progress progress("ground truth", queries.rows);
    candidates = ExactKnnFloat(base, queries, metric, k + kRerankMargin, threads, &progress);
  }
  const Scorer scorer(data, metric);
  std::vector<std::vector<uint64_t>> truth(queries.rows);
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t q; (q = next.fetch_add(1)) < truth.size();) {
        truth[q] = Rerank(data, scorer, q, candidates[q], k);
      }
    });
  }
  for (std::thread& th : pool) th.join();
  return truth;
}

double RecallAtK(const std::vector<std::vector<uint64_t>>& truth,
                 std::span<const std::vector<shoal::Neighbor>> got, uint32_t k) {
  if (got.empty() || k == 0) return 0;
  size_t hits = 0;
  for (size_t q = 0; q < got.size(); ++q) {
    const auto want_end = truth[q].begin() + std::min<size_t>(k, truth[q].size());
    const size_t n = std::min<size_t>(got[q].size(), k);
    for (size_t j = 0; j < n; ++j) {
      hits += std::find(truth[q].begin(), want_end, got[q][j].id) != want_end;
    }
  }
  return static_cast<double>(hits) / (static_cast<double>(got.size()) * k);
}

double RecallAtK(const std::vector<std::vector<uint64_t>>& truth,
                 std::span<const std::vector<uint64_t>> got, uint32_t k) {
  if (got.empty() || k == 0) return 0;
  size_t hits = 0;
  for (size_t q = 0; q < got.size(); ++q) {
    const auto want_end = truth[q].begin() + std::min<size_t>(k, truth[q].size());
    const size_t n = std::min<size_t>(got[q].size(), k);
    for (size_t j = 0; j < n; ++j) {
      hits += std::find(truth[q].begin(), want_end, got[q][j]) != want_end;
    }
  }
  return static_cast<double>(hits) / (static_cast<double>(got.size()) * k);
}

}  // namespace shoal_bench

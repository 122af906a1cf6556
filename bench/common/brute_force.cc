// Copyright 2026 The shoal Authors.

#include "common/brute_force.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <queue>
#include <thread>

#include "common/progress.h"

namespace shoal_bench {
namespace {

// Queries answered together against one tile of base rows.
constexpr size_t kQueryBlock = 8;
// Bytes of base rows per tile: about half of a typical L2 cache.
constexpr size_t kTileBytes = 256 << 10;

float L2Portable(const float* a, const float* b, uint32_t n) {
  float s[8] = {};
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) {
      const float d = a[i + j] - b[i + j];
      s[j] += d * d;
    }
  }
  for (; i < n; ++i) s[0] += (a[i] - b[i]) * (a[i] - b[i]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

float DotPortable(const float* a, const float* b, uint32_t n) {
  float s[8] = {};
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += a[i + j] * b[i + j];
  }
  for (; i < n; ++i) s[0] += a[i] * b[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

__attribute__((target("avx2,fma"))) float HorizontalSum(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) float L2Avx2(const float* a, const float* b, uint32_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    s0 = _mm256_fmadd_ps(d0, d0, s0);
    s1 = _mm256_fmadd_ps(d1, d1, s1);
  }
  float tail = 0;
  for (; i < n; ++i) tail += (a[i] - b[i]) * (a[i] - b[i]);
  return HorizontalSum(_mm256_add_ps(s0, s1)) + tail;
}

__attribute__((target("avx2,fma"))) float DotAvx2(const float* a, const float* b, uint32_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  float tail = 0;
  for (; i < n; ++i) tail += a[i] * b[i];
  return HorizontalSum(_mm256_add_ps(s0, s1)) + tail;
}

using Kernel = float (*)(const float*, const float*, uint32_t);

bool HaveAvx2() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}

// Distances of one metric, with what kCosine needs precomputed.
class Scorer {
 public:
  Scorer(MatrixView base, shoal::Metric metric) : metric_(metric), dim_(base.dim) {
    l2_ = HaveAvx2() ? L2Avx2 : L2Portable;
    dot_ = HaveAvx2() ? DotAvx2 : DotPortable;
    if (metric_ != shoal::Metric::kCosine) return;
    inv_norm_.resize(base.rows);
    for (size_t i = 0; i < base.rows; ++i) {
      const float norm = std::sqrt(dot_(base.Row(i), base.Row(i), dim_));
      inv_norm_[i] = norm > 0 ? 1 / norm : 0;
    }
  }
  // The query as the scan wants it: normalized for kCosine.
  std::vector<float> Prepare(const float* q) const {
    std::vector<float> out(q, q + dim_);
    if (metric_ == shoal::Metric::kCosine) {
      const float norm = std::sqrt(dot_(q, q, dim_));
      for (float& x : out) x = norm > 0 ? x / norm : 0;
    }
    return out;
  }
  float Distance(const float* q, const float* row, size_t i) const {
    switch (metric_) {
      case shoal::Metric::kL2: return l2_(q, row, dim_);
      case shoal::Metric::kInnerProduct: return -dot_(q, row, dim_);
      case shoal::Metric::kCosine: return 1 - dot_(q, row, dim_) * inv_norm_[i];
    }
    return 0;
  }

 private:
  shoal::Metric metric_;
  uint32_t dim_;
  Kernel l2_, dot_;
  std::vector<float> inv_norm_;
};

struct Worse {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.distance < b.distance || (a.distance == b.distance && a.row < b.row);
  }
};
using Heap = std::priority_queue<Candidate, std::vector<Candidate>, Worse>;

// Scans all of `base` for queries [first, last), writing their answers.
void ScanBlock(MatrixView base, MatrixView queries, const Scorer& scorer, uint32_t k,
               size_t first, size_t last, std::vector<std::vector<Candidate>>& out) {
  std::vector<std::vector<float>> q;
  std::vector<Heap> heaps(last - first);
  for (size_t j = first; j < last; ++j) q.push_back(scorer.Prepare(queries.Row(j)));
  const size_t tile = std::max<size_t>(16, kTileBytes / (base.dim * sizeof(float)));
  for (size_t t0 = 0; t0 < base.rows; t0 += tile) {
    const size_t t1 = std::min(base.rows, t0 + tile);
    for (size_t j = 0; j < q.size(); ++j) {
      Heap& heap = heaps[j];
      for (size_t i = t0; i < t1; ++i) {
        const Candidate c{scorer.Distance(q[j].data(), base.Row(i), i),
                          static_cast<uint32_t>(i)};
        if (heap.size() < k) {
          heap.push(c);
        } else if (Worse()(c, heap.top())) {
          heap.pop();
          heap.push(c);
        }
      }
    }
  }
  for (size_t j = 0; j < heaps.size(); ++j) {
    std::vector<Candidate>& dst = out[first + j];
    dst.resize(heaps[j].size());
    for (size_t m = dst.size(); m-- > 0; heaps[j].pop()) dst[m] = heaps[j].top();
  }
}

}  // namespace

std::vector<std::vector<Candidate>> ExactKnnFloat(MatrixView base, MatrixView queries,
                                                  shoal::Metric metric, uint32_t k,
                                                  uint32_t threads, Progress* progress) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const Scorer scorer(base, metric);
  std::vector<std::vector<Candidate>> out(queries.rows);
  const size_t blocks = (queries.rows + kQueryBlock - 1) / kQueryBlock;
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t b; (b = next.fetch_add(1)) < blocks;) {
        const size_t first = b * kQueryBlock;
        const size_t last = std::min(queries.rows, first + kQueryBlock);
        ScanBlock(base, queries, scorer, k, first, last, out);
        if (progress != nullptr) progress->Add(last - first);
      }
    });
  }
  for (std::thread& th : pool) th.join();
  return out;
}

struct ExactScan::Impl {
  Impl(MatrixView b, shoal::Metric metric) : base(b), scorer(b, metric) {}
  MatrixView base;
  Scorer scorer;
};

ExactScan::ExactScan(MatrixView base, shoal::Metric metric)
    : impl_(std::make_unique<Impl>(base, metric)) {}

ExactScan::~ExactScan() = default;

std::vector<Candidate> ExactScan::Search(const float* query, uint32_t k,
                                         std::span<const uint32_t> rows) const {
  const std::vector<float> q = impl_->scorer.Prepare(query);
  Heap heap;
  for (const uint32_t row : rows) {
    const Candidate c{impl_->scorer.Distance(q.data(), impl_->base.Row(row), row), row};
    if (heap.size() < k) {
      heap.push(c);
    } else if (Worse()(c, heap.top())) {
      heap.pop();
      heap.push(c);
    }
  }
  std::vector<Candidate> out(heap.size());
  for (size_t m = out.size(); m-- > 0; heap.pop()) out[m] = heap.top();
  return out;
}

const char* BruteForceKernelName() { return HaveAvx2() ? "avx2+fma" : "portable"; }

}  // namespace shoal_bench

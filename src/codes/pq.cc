// Copyright 2026 The shoal Authors.

#include "codes/pq.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "codes/pq_kmeans.h"
#include "util/thread_pool.h"

namespace shoal::codes {

static_assert(Pq::kCentroids == kPqCentroids);

uint32_t Pq::ChooseSubspaces(uint32_t dim) { return std::max<uint32_t>(1, (dim + 3) / 4); }

Pq::Pq(uint32_t dim, std::vector<uint32_t> offsets, std::vector<float> mean,
       std::vector<float> centroids)
    : dim_(dim),
      offsets_(std::move(offsets)),
      mean_(std::move(mean)),
      centroids_(std::move(centroids)) {}

uint8_t Pq::Nearest(uint32_t s, const float* r) const {
  const uint32_t begin = offsets_[s];
  return static_cast<uint8_t>(NearestCentroid(centroids_.data() + size_t{begin} * kCentroids,
                                              offsets_[s + 1] - begin, r, nullptr));
}

void Pq::Encode(const float* v, uint8_t* out) const {
  float small[64];
  std::vector<float> large;  // only for chunks of more than 64 dimensions
  for (uint32_t s = 0; s < subspaces(); ++s) {
    const uint32_t begin = offsets_[s], end = offsets_[s + 1];
    float* r = small;
    if (end - begin > std::size(small)) {
      large.resize(end - begin);
      r = large.data();
    }
    for (uint32_t j = begin; j < end; ++j) r[j - begin] = v[j] - mean_[j];
    out[s] = Nearest(s, r);
  }
}

void Pq::EncodeBatch(const float* vectors, size_t n, uint8_t* out, ThreadPool* pool) const {
  constexpr size_t kBlock = 1024;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  auto encode_block = [&](size_t b) {
    const size_t end = std::min(n, (b + 1) * kBlock);
    for (size_t i = b * kBlock; i < end; ++i) Encode(vectors + i * dim_, out + i * code_bytes());
  };
  if (pool == nullptr || blocks <= 1) {
    for (size_t b = 0; b < blocks; ++b) encode_block(b);
  } else {
    pool->ParallelFor(blocks, encode_block);
  }
}

void Pq::Decode(const uint8_t* code, float* out) const {
  for (uint32_t s = 0; s < subspaces(); ++s) {
    for (uint32_t j = offsets_[s]; j < offsets_[s + 1]; ++j) {
      out[j] = mean_[j] + centroid(j, code[s]);
    }
  }
}

void PqQuery::Reset(const Pq& pq, Metric metric, const float* q) {
  constexpr uint32_t kK = Pq::kCentroids;
  m_ = pq.subspaces();
  table_.assign(m_ * kK, 0.0f);
  double dot_mean = 0;
  for (uint32_t s = 0; s < m_; ++s) {
    float* t = table_.data() + size_t{s} * kK;
    for (uint32_t j = pq.offset(s); j < pq.offset(s + 1); ++j) {
      const float* row = pq.centroid_row(j);
      if (metric == Metric::kL2) {
        const float r = q[j] - pq.mean()[j];
        for (uint32_t c = 0; c < kK; ++c) {
          const float e = r - row[c];
          t[c] += e * e;
        }
      } else {
        const float w = q[j];
        for (uint32_t c = 0; c < kK; ++c) t[c] -= w * row[c];
        dot_mean += static_cast<double>(q[j]) * pq.mean()[j];
      }
    }
  }
  switch (metric) {
    case Metric::kL2:
      bias_ = 0;
      break;
    case Metric::kInnerProduct:
      bias_ = static_cast<float>(-dot_mean);
      break;
    case Metric::kCosine:
      bias_ = static_cast<float>(1.0 - dot_mean);
      break;
  }
}

void PqQuery::Distances(const uint8_t* codes, size_t count, float* out) const {
  for (size_t i = 0; i < count; ++i) out[i] = Distance(codes + i * m_);
}

}  // namespace shoal::codes

// Copyright 2026 The shoal Authors.

#include "segment/sq8.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shoal::segment {

Sq8 Sq8::Train(const float* vectors, size_t n, uint32_t dim) {
  std::vector<float> lo(dim, n == 0 ? 0.0f : std::numeric_limits<float>::infinity());
  std::vector<float> hi(dim, n == 0 ? 0.0f : -std::numeric_limits<float>::infinity());
  for (size_t i = 0; i < n; ++i) {
    const float* v = vectors + i * dim;
    for (uint32_t j = 0; j < dim; ++j) {
      lo[j] = std::min(lo[j], v[j]);
      hi[j] = std::max(hi[j], v[j]);
    }
  }
  std::vector<float> scale(dim);
  for (uint32_t j = 0; j < dim; ++j) {
    // In double: hi - lo of finite floats may overflow a float.
    const double step = (static_cast<double>(hi[j]) - lo[j]) / 255.0;
    scale[j] = static_cast<float>(std::min<double>(step, std::numeric_limits<float>::max()));
  }
  return Sq8(std::move(lo), std::move(scale));
}

Sq8::Sq8(std::vector<float> lo, std::vector<float> scale)
    : lo_(std::move(lo)), scale_(std::move(scale)), inverse_(scale_.size()) {
  for (size_t j = 0; j < scale_.size(); ++j) {
    inverse_[j] = scale_[j] > 0 ? 1.0f / scale_[j] : 0.0f;
  }
}

void Sq8::Encode(const float* v, uint8_t* out) const {
  const uint32_t d = dim();
  const size_t bytes = CodeBytes(d);
  std::memset(out, 0, bytes);
  double norm = 0;
  for (uint32_t j = 0; j < d; ++j) {
    const double t = (static_cast<double>(v[j]) - lo_[j]) * inverse_[j];
    const uint8_t c = static_cast<uint8_t>(std::clamp(std::nearbyint(t), 0.0, 255.0));
    out[j] = c;
    const double x = lo_[j] + static_cast<double>(scale_[j]) * c;
    norm += x * x;
  }
  const float n = static_cast<float>(norm);
  std::memcpy(out + bytes - 4, &n, 4);
}

void Sq8::Decode(const uint8_t* code, float* out) const {
  for (uint32_t j = 0; j < dim(); ++j) out[j] = lo_[j] + scale_[j] * code[j];
}

namespace {

// The query's sums over its dimensions, in four independent lanes (a search
// resets a query once per segment, so this is per-query work).
struct QuerySums {
  double largest = 0;  // max |q_j scale_j|
  double bias = 0;     // sum q_j lo_j
  double norm = 0;     // sum q_j^2
};

QuerySums SumQuery(const float* q, const float* lo, const float* scale, size_t dim) {
  constexpr size_t kLanes = 4;
  double largest[kLanes] = {}, bias[kLanes] = {}, norm[kLanes] = {};
  size_t j = 0;
  for (; j + kLanes <= dim; j += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const double x = q[j + l];
      largest[l] = std::max(largest[l], std::fabs(x * scale[j + l]));
      bias[l] += x * lo[j + l];
      norm[l] += x * x;
    }
  }
  for (; j < dim; ++j) {
    const double x = q[j];
    largest[0] = std::max(largest[0], std::fabs(x * scale[j]));
    bias[0] += x * lo[j];
    norm[0] += x * x;
  }
  QuerySums sums;
  for (size_t l = 0; l < kLanes; ++l) {
    sums.largest = std::max(sums.largest, largest[l]);
    sums.bias += bias[l];
    sums.norm += norm[l];
  }
  return sums;
}

}  // namespace

void Sq8Query::Reset(const Sq8& quantizer, Metric metric, const float* q) {
  dim_ = quantizer.dim();
  code_bytes_ = Sq8::CodeBytes(quantizer.dim());
  metric_ = metric;
  dot_bytes_ = Kernels().dot_bytes;
  weights_.resize(dim_);
  const float* scale = quantizer.scale().data();
  const QuerySums sums = SumQuery(q, quantizer.lo().data(), scale, dim_);
  // The largest |k_j| such that 255 * sum |k_j| < 2^31 whatever the code.
  const double most =
      std::min<double>(32767, std::floor(static_cast<double>(kMaxWeightedBytesSum) /
                                         (255.0 * std::max<size_t>(dim_, 1))));
  const double step = sums.largest > 0 ? sums.largest / most : 0;
  const bool usable = step > 0 && std::isfinite(step);
  const double inverse = usable ? 1.0 / step : 0;
  for (size_t j = 0; j < dim_; ++j) {
    const double w = static_cast<double>(q[j]) * scale[j] * inverse;
    // A query is finite and within range (validated), but a hostile file's
    // vector searched for may not be: NaN weighs nothing, never undefined.
    // Clamped, then rounded half away from zero by truncation: branch-free
    // (the weights' signs are random, and a branch on them mispredicted
    // half the time) and no libm call (std::nearbyint is one without
    // SSE4.1). The clamp keeps |k| + 0.5 below 2^15.
    const double k = std::isnan(w) ? 0.0 : std::clamp(w, -most, most);
    weights_[j] = static_cast<int16_t>(k + std::copysign(0.5, k));
  }
  step_ = static_cast<float>(step);
  bias_ = static_cast<float>(sums.bias);
  query_norm_ = static_cast<float>(sums.norm);
}

}  // namespace shoal::segment

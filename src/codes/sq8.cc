// Copyright 2026 The shoal Authors.

#include "codes/sq8.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shoal::codes {

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

void Sq8Query::Reset(const Sq8& quantizer, Metric metric, const float* q) {
  dim_ = quantizer.dim();
  code_bytes_ = Sq8::CodeBytes(quantizer.dim());
  metric_ = metric;
  weights_.resize(dim_);
  const DistanceKernels& kernels = Kernels();
  dot_bytes_ = kernels.dot_bytes;
  dot_bytes_four_ = kernels.dot_bytes_four;
  // sums: max |q_j scale_j|, sum q_j lo_j, sum q_j^2 (per query and
  // segment: a search resets a query once per segment).
  double sums[3];
  kernels.scaled_sums(q, quantizer.lo().data(), quantizer.scale().data(), dim_, sums);
  // The largest |k_j| such that 255 * sum |k_j| < 2^31 whatever the code.
  const double most =
      std::min<double>(32767, std::floor(static_cast<double>(kMaxWeightedBytesSum) /
                                         (255.0 * std::max<size_t>(dim_, 1))));
  const double step = sums[0] > 0 ? sums[0] / most : 0;
  const bool usable = step > 0 && std::isfinite(step);
  // A query is finite and within range (validated), but a hostile file's
  // vector searched for may not be: NaN weighs nothing, never undefined.
  kernels.quantize_scaled(q, quantizer.scale().data(), usable ? 1.0 / step : 0, most, dim_,
                          weights_.data());
  step_ = static_cast<float>(step);
  bias_ = static_cast<float>(sums[1]);
  query_norm_ = static_cast<float>(sums[2]);
}

}  // namespace shoal::codes

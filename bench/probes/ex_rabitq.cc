// Copyright 2026 The shoal Authors.

#include "probes/ex_rabitq.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace shoal_bench {
namespace {

// Scales tried for a vector's code, as fractions of the scale beyond which
// its largest coordinate would clip (round past the grid's last level).
constexpr int kScaleSteps = 96;
constexpr double kMinScale = 0.05;
constexpr double kMaxScale = 1.5;

}  // namespace

ExRabitq::ExRabitq(uint32_t dim, uint32_t bits, uint64_t seed)
    : dim_(dim), bits_(bits), rotation_(size_t{dim} * dim) {
  // Gram-Schmidt (twice, in double) over Gaussian rows: a random orthogonal
  // matrix.
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> m(size_t{dim} * dim);
  for (double& v : m) v = normal(rng);
  for (uint32_t i = 0; i < dim; ++i) {
    double* row = &m[size_t{i} * dim];
    for (int pass = 0; pass < 2; ++pass) {
      for (uint32_t j = 0; j < i; ++j) {
        const double* other = &m[size_t{j} * dim];
        double dot = 0;
        for (uint32_t d = 0; d < dim; ++d) dot += row[d] * other[d];
        for (uint32_t d = 0; d < dim; ++d) row[d] -= dot * other[d];
      }
    }
    double norm = 0;
    for (uint32_t d = 0; d < dim; ++d) norm += row[d] * row[d];
    norm = std::sqrt(norm);
    for (uint32_t d = 0; d < dim; ++d) row[d] /= norm;
  }
  for (size_t i = 0; i < m.size(); ++i) rotation_[i] = static_cast<float>(m[i]);
}

void ExRabitq::Rotate(const float* in, float* out) const {
  for (uint32_t i = 0; i < dim_; ++i) {
    const float* row = &rotation_[size_t{i} * dim_];
    float sum = 0;
    for (uint32_t d = 0; d < dim_; ++d) sum += row[d] * in[d];
    out[i] = sum;
  }
}

ExRabitq::Code ExRabitq::Encode(const float* o, const float* centre) const {
  const uint32_t top = (1u << bits_) - 1;
  const double half = top / 2.0;
  Code code;
  code.levels.assign(dim_, static_cast<uint8_t>(top / 2));
  std::vector<float> r(dim_), u(dim_);
  double norm = 0;
  for (uint32_t d = 0; d < dim_; ++d) {
    r[d] = o[d] - centre[d];
    norm += double{r[d]} * r[d];
  }
  norm = std::sqrt(norm);
  code.norm = static_cast<float>(norm);
  if (norm == 0) return code;
  Rotate(r.data(), u.data());
  double largest = 0;
  for (uint32_t d = 0; d < dim_; ++d) {
    u[d] = static_cast<float>(u[d] / norm);
    largest = std::max(largest, std::fabs(double{u[d]}));
  }
  // The scale whose rounding gives x the direction closest to u.
  const double reach = (half + 0.5) / largest;
  double best_cos = -2, best_dot = 0;
  std::vector<uint8_t> levels(dim_);
  for (int step = 0; step < kScaleSteps; ++step) {
    const double t =
        reach * (kMinScale + (kMaxScale - kMinScale) * step / (kScaleSteps - 1));
    double dot = 0, square = 0;
    for (uint32_t d = 0; d < dim_; ++d) {
      const double k = std::clamp(std::floor(t * u[d] + half + 0.5), 0.0, static_cast<double>(top));
      levels[d] = static_cast<uint8_t>(k);
      const double x = k - half;
      dot += x * u[d];
      square += x * x;
    }
    const double cos = square > 0 ? dot / std::sqrt(square) : -1;
    if (cos > best_cos) {
      best_cos = cos;
      best_dot = dot;
      code.levels = levels;
    }
  }
  code.factor = best_dot > 0 ? static_cast<float>(1.0 / best_dot) : 0.0f;
  return code;
}

ExRabitq::Query ExRabitq::Prepare(const float* q, const float* centre) const {
  Query query;
  query.rotated.assign(dim_, 0.0f);
  std::vector<float> r(dim_);
  double norm = 0;
  for (uint32_t d = 0; d < dim_; ++d) {
    r[d] = q[d] - centre[d];
    norm += double{r[d]} * r[d];
  }
  query.norm = static_cast<float>(std::sqrt(norm));
  if (query.norm == 0) return query;
  Rotate(r.data(), query.rotated.data());
  for (float& v : query.rotated) {
    v /= query.norm;
    query.sum += v;
  }
  return query;
}

float ExRabitq::Distance(const Query& q, const Code& code) const {
  const float half = static_cast<float>((1u << bits_) - 1) / 2.0f;
  float dot = 0;
  for (uint32_t d = 0; d < dim_; ++d) dot += static_cast<float>(code.levels[d]) * q.rotated[d];
  const float cos = (dot - half * q.sum) * code.factor;
  return code.norm * code.norm + q.norm * q.norm - 2.0f * code.norm * q.norm * cos;
}

}  // namespace shoal_bench

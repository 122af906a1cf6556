// Copyright 2026 The shoal Authors.

#include "graph/build_distance.h"

#include <algorithm>
#include <cmath>

namespace shoal::graph {

BuildDistance::BuildDistance(const NodeStore& store, Metric metric)
    : vectors_(store.size() == 0 ? nullptr : store.vector(0)),
      stride_(store.stride()),
      n_(store.size()),
      dim_(store.dim()),
      l2_(Kernels().l2_squared),
      l2_four_(Kernels().l2_squared_four) {
  const size_t n = n_;
  const uint32_t dim = dim_;
  if (metric != Metric::kInnerProduct || n == 0) return;
  // Norms in double: h_x is the square root of a difference of two nearly
  // equal numbers for the longest vectors, where float would lose it.
  std::vector<double> norm2(n);
  double max_norm2 = 0;
  for (size_t i = 0; i < n; ++i) {
    const float* v = row(static_cast<uint32_t>(i));
    double s = 0;
    for (uint32_t j = 0; j < dim; ++j) s += static_cast<double>(v[j]) * v[j];
    norm2[i] = s;
    max_norm2 = std::max(max_norm2, s);
  }
  lift_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    lift_[i] = static_cast<float>(std::sqrt(std::max(0.0, max_norm2 - norm2[i])));
  }
}

}  // namespace shoal::graph

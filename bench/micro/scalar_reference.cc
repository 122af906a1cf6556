// Copyright 2026 The shoal Authors.

#include "micro/scalar_reference.h"

namespace shoal_bench {

float L2SquaredReference(const float* a, const float* b, size_t dim) {
  float sum = 0.0f;
  for (size_t i = 0; i < dim; ++i) {
    const float d = a[i] - b[i];
    sum += d * d;
  }
  return sum;
}

float DotReference(const float* a, const float* b, size_t dim) {
  float sum = 0.0f;
  for (size_t i = 0; i < dim; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace shoal_bench

// Copyright 2026 The shoal Authors.
//
// The plain scalar loops the distance kernels are measured against: one
// accumulator, one element per step, as a first implementation is written.
//
// scalar_reference.cc is compiled with -fno-tree-vectorize (CMakeLists.txt),
// and without -ffast-math the compiler may not reorder the float sum anyway,
// so these stay scalar: each step waits for the previous add (one element per
// FP-add latency, 3 cycles on Zen 3 and Skylake). They live in a file of
// their own so that they are never inlined into the benchmark loop: like the
// library's kernels, they are called through a function pointer.

#ifndef SHOAL_BENCH_MICRO_SCALAR_REFERENCE_H_
#define SHOAL_BENCH_MICRO_SCALAR_REFERENCE_H_

#include <cstddef>

namespace shoal_bench {

float L2SquaredReference(const float* a, const float* b, size_t dim);
float DotReference(const float* a, const float* b, size_t dim);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_MICRO_SCALAR_REFERENCE_H_

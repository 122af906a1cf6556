// Copyright 2026 The shoal Authors.
//
// Distance kernels, chosen once at run time for the CPU (scalar, AVX2+FMA,
// AVX-512). Nothing here requires the library to be built with -march=native:
// the SIMD variants live in *_avx2.cc / *_avx512.cc, compiled for their ISA,
// and are only called after cpuid says the CPU has it.
//
// Conventions: smaller distance is closer, always.
//   kL2:           squared Euclidean distance
//   kInnerProduct: -dot(a, b)
//   kCosine:       1 - dot(a, b); both vectors are unit-normalized beforehand
//
// Thread-safe: the dispatch table is initialized once (function-local static).

#ifndef SHOAL_SRC_DISTANCE_DISTANCE_H_
#define SHOAL_SRC_DISTANCE_DISTANCE_H_

#include <cstddef>
#include <cstdint>

#include "shoal/options.h"

namespace shoal {

// Distance between two vectors of `dim` floats. Any dim >= 1 (odd dims too).
using DistanceFn = float (*)(const float* a, const float* b, size_t dim);

// Distances from `query` to `n` vectors stored contiguously at `base`
// (row i at base + i * dim); out[i] receives the distance to row i.
using BatchDistanceFn = void (*)(const float* query, const float* base,
                                 size_t n, size_t dim, float* out);

// Squared L2 from `a` to each of four vectors: out[k] is bit for bit
// l2_squared(a, b[k], dim) of the same kernel set (and so of
// l2_squared(b[k], a, dim)). One load of a serves four distances, and
// eight chains of adds overlap where one distance has four: the
// neighbour prune of a graph build runs on it (graph/robust_prune.h).
using FourDistancesFn = void (*)(const float* a, const float* const b[4], size_t dim,
                                 float out[4]);

// sum w_i * c_i over `dim` 16-bit weights and `dim` bytes (8-bit codes,
// codes/sq8.h), exact in 32-bit integers: the inner product of a query
// quantized to 16 bits with a code. REQUIRES: 255 * sum |w_i| < 2^31 (the
// caller bounds its weights: kMaxWeightedBytesSum).
using WeightedBytesFn = int32_t (*)(const int16_t* w, const uint8_t* c, size_t dim);
// The same sum for four codes at once: out[k] = dot_bytes(w, c[k], dim),
// exactly. One load of the weights serves four codes, and the four sums
// overlap where one waits for its own adds: a graph walk scores a node's
// neighbours on it (codes/sq8.h). Same REQUIRES as WeightedBytesFn.
using WeightedBytesFourFn = void (*)(const int16_t* w, const uint8_t* const c[4], size_t dim,
                                     int32_t out[4]);
inline constexpr int64_t kMaxWeightedBytesSum = (int64_t{1} << 31) - 1;

// What an SQ8 query needs of its `dim` floats q and a segment's ranges lo and
// scale (codes/sq8.h), in double precision: out[0] = max |q_i scale_i|,
// out[1] = sum q_i lo_i, out[2] = sum q_i^2. Each runs in four lanes (dim i
// in lane i % 4, the last dim % 4 dims in lane 0), then the lanes are added
// to 0 in order 0..3: every kernel set gives the scalar one's bits (a NaN
// sum is NaN in all, perhaps with other payload bits). Every product is of
// two floats, exact in double, so a fused multiply-add gives the same bits.
using ScaledSumsFn = void (*)(const float* q, const float* lo, const float* scale, size_t dim,
                              double out[3]);
// out[i] = clamp(q_i scale_i inverse, -most, most) rounded half away from
// zero to 16 bits (0 where the product is NaN), in double precision: every
// kernel set gives the scalar one's bits. REQUIRES: 0 <= most <= 32767.
using QuantizeScaledFn = void (*)(const float* q, const float* scale, double inverse,
                                  double most, size_t dim, int16_t* out);

struct DistanceKernels {
  const char* isa;          // "scalar", "avx2", "avx512" or "avx512vnni"
  DistanceFn l2_squared;    // sum (a_i - b_i)^2
  DistanceFn dot;           // sum a_i * b_i
  BatchDistanceFn l2_squared_batch;
  BatchDistanceFn dot_batch;
  FourDistancesFn l2_squared_four;  // out[k] = sum (a_i - b[k]_i)^2
  WeightedBytesFn dot_bytes;  // sum w_i * c_i
  WeightedBytesFourFn dot_bytes_four;  // out[k] = sum w_i * c[k]_i
  ScaledSumsFn scaled_sums;
  QuantizeScaledFn quantize_scaled;
};

// The best kernels this CPU supports. SHOAL_FORCE_ISA=scalar|avx2|avx512|avx512vnni in
// the environment overrides the choice (never picking an unsupported ISA).
const DistanceKernels& Kernels();

// The scalar reference kernels (always available; used by tests).
const DistanceKernels& ScalarKernels();

// Distance under `metric` (see conventions above), via Kernels().
float Distance(Metric metric, const float* a, const float* b, size_t dim);

// Distances under `metric` from query to n contiguous rows, via Kernels().
void DistanceBatch(Metric metric, const float* query, const float* base,
                   size_t n, size_t dim, float* out);

// Scales v to unit length in place. Returns false (and leaves v unchanged)
// when its norm is zero or not finite.
bool NormalizeInPlace(float* v, size_t dim);

// True when every one of the n floats is finite (no NaN, no +-Inf).
bool AllFinite(const float* v, size_t n);

// The largest squared Euclidean norm a vector may have under kL2 and
// kInnerProduct: 2^124 (~2.1e37, a norm of ~4.6e18). For any two such
// vectors a and b, |dot(a, b)| <= |a||b| <= 2^124 and |a - b|^2 <= (|a| +
// |b|)^2 <= 2^126, below FLT_MAX (~2^128), and so are the kernels' partial
// sums: no distance overflows to +-Inf or becomes NaN (+Inf - Inf), whatever
// the order of summation. kCosine vectors are unit length once normalized.
inline constexpr double kMaxSquaredNorm = 0x1p124;

// True when v (dim finite floats) has a squared norm <= kMaxSquaredNorm.
bool NormWithinDistanceRange(const float* v, size_t dim);

// True when each of the n floats has a magnitude below 2^56: then they are
// finite, and every row of at most 4096 of them has a squared norm below
// dim * 2^112 <= kMaxSquaredNorm. One pass that settles both checks above
// for all the rows of a batch at once (false says nothing: check each).
bool AllWellBelowDistanceRange(const float* v, size_t n);

}  // namespace shoal

#endif  // SHOAL_SRC_DISTANCE_DISTANCE_H_

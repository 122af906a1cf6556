// Copyright 2026 The shoal Authors.
//
// Scalar reference kernels, the run-time choice of kernel set, and the
// metric-level helpers. This file is compiled for baseline x86-64 (SSE2):
// it must run on every CPU, including the ones it then finds lacking AVX2.

#include "distance/distance.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "distance/distance_isa.h"

namespace shoal {

namespace {

// ---- Scalar kernels ----
//
// Four partial sums: a single running sum is one long chain of dependent
// adds, and the compiler may not reorder float adds without -ffast-math. With
// four chains the adds overlap, and the compiler can put them in SSE2 lanes.

float L2SquaredScalar(const float* a, const float* b, size_t dim) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  size_t i = 0;
  for (; i + 4 <= dim; i += 4) {
    const float d0 = a[i] - b[i];
    const float d1 = a[i + 1] - b[i + 1];
    const float d2 = a[i + 2] - b[i + 2];
    const float d3 = a[i + 3] - b[i + 3];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < dim; ++i) {
    const float d = a[i] - b[i];
    s0 += d * d;
  }
  return (s0 + s1) + (s2 + s3);
}

float DotScalar(const float* a, const float* b, size_t dim) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  size_t i = 0;
  for (; i + 4 <= dim; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < dim; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

// The batch kernels call the single ones, so a row's distance is bit-for-bit
// the same whichever path computed it.
void L2SquaredBatchScalar(const float* query, const float* base, size_t n,
                          size_t dim, float* out) {
  for (size_t r = 0; r < n; ++r) {
    out[r] = L2SquaredScalar(query, base + r * dim, dim);
  }
}

void DotBatchScalar(const float* query, const float* base, size_t n,
                    size_t dim, float* out) {
  for (size_t r = 0; r < n; ++r) out[r] = DotScalar(query, base + r * dim, dim);
}

void L2SquaredFourScalar(const float* a, const float* const b[4], size_t dim, float out[4]) {
  for (size_t k = 0; k < 4; ++k) out[k] = L2SquaredScalar(a, b[k], dim);
}

int32_t DotBytesScalar(const int16_t* w, const uint8_t* c, size_t dim) {
  int32_t sum = 0;
  for (size_t i = 0; i < dim; ++i) sum += int32_t{w[i]} * c[i];
  return sum;
}

void DotBytesFourScalar(const int16_t* w, const uint8_t* const c[4], size_t dim,
                        int32_t out[4]) {
  for (size_t k = 0; k < 4; ++k) out[k] = DotBytesScalar(w, c[k], dim);
}

void ScaledSumsScalar(const float* q, const float* lo, const float* scale, size_t dim,
                      double out[3]) {
  constexpr size_t kLanes = 4;
  double largest[kLanes] = {}, bias[kLanes] = {}, norm[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= dim; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const double x = q[i + l];
      largest[l] = std::max(largest[l], std::fabs(x * scale[i + l]));
      bias[l] += x * lo[i + l];
      norm[l] += x * x;
    }
  }
  for (; i < dim; ++i) {
    const double x = q[i];
    largest[0] = std::max(largest[0], std::fabs(x * scale[i]));
    bias[0] += x * lo[i];
    norm[0] += x * x;
  }
  out[0] = out[1] = out[2] = 0;
  for (size_t l = 0; l < kLanes; ++l) {
    out[0] = std::max(out[0], largest[l]);
    out[1] += bias[l];
    out[2] += norm[l];
  }
}

void QuantizeScaledScalar(const float* q, const float* scale, double inverse, double most,
                          size_t dim, int16_t* out) {
  for (size_t i = 0; i < dim; ++i) {
    const double w = static_cast<double>(q[i]) * scale[i] * inverse;
    // Clamped, then rounded half away from zero by truncation: branch-free
    // (the weights' signs are random, and a branch on them mispredicted
    // half the time) and no libm call (std::nearbyint is one without
    // SSE4.1). The clamp keeps |k| + 0.5 below 2^15.
    const double k = std::isnan(w) ? 0.0 : std::clamp(w, -most, most);
    out[i] = static_cast<int16_t>(k + std::copysign(0.5, k));
  }
}

constexpr DistanceKernels kScalarKernels = {"scalar",
                                             &L2SquaredScalar,
                                             &DotScalar,
                                             &L2SquaredBatchScalar,
                                             &DotBatchScalar,
                                             &L2SquaredFourScalar,
                                             &DotBytesScalar,
                                             &DotBytesFourScalar,
                                             &ScaledSumsScalar,
                                             &QuantizeScaledScalar};

// ---- Dispatch ----

// Ordered: a forced ISA caps the choice at min(forced, best supported).
enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Vnni = 3 };

// The best ISA this CPU can run. libgcc's feature bits also check (XGETBV)
// that the OS saves the YMM/ZMM registers, so "supported" means "usable".
Isa BestSupportedIsa() {
  // Only needed when we run before libgcc's constructor has (static init of
  // another file); harmless otherwise.
  __builtin_cpu_init();
  // The AVX2 file is built with -mfma too, so it needs both.
  const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl")) {
    return __builtin_cpu_supports("avx512vnni") ? Isa::kAvx512Vnni : Isa::kAvx512;
  }
  return avx2 ? Isa::kAvx2 : Isa::kScalar;
}

// SHOAL_FORCE_ISA=scalar|avx2|avx512|avx512vnni lowers the choice (for tests and
// benchmarks); it never raises it above what the CPU has, since that would
// die with SIGILL. Other values are ignored.
Isa ChooseIsa() {
  const Isa best = BestSupportedIsa();
  const char* forced = std::getenv("SHOAL_FORCE_ISA");
  if (forced == nullptr) return best;
  Isa wanted;
  if (std::strcmp(forced, "scalar") == 0) {
    wanted = Isa::kScalar;
  } else if (std::strcmp(forced, "avx2") == 0) {
    wanted = Isa::kAvx2;
  } else if (std::strcmp(forced, "avx512") == 0) {
    wanted = Isa::kAvx512;
  } else if (std::strcmp(forced, "avx512vnni") == 0) {
    wanted = Isa::kAvx512Vnni;
  } else {
    return best;
  }
  return std::min(wanted, best);
}

const DistanceKernels& KernelsFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512Vnni:
      return Avx512VnniKernels();
    case Isa::kAvx512:
      return Avx512Kernels();
    case Isa::kAvx2:
      return Avx2Kernels();
    case Isa::kScalar:
      break;
  }
  return kScalarKernels;
}

}  // namespace

const DistanceKernels& Kernels() {
  // Chosen once; C++ makes the initialization of a local static thread-safe.
  static const DistanceKernels* const kernels = &KernelsFor(ChooseIsa());
  return *kernels;
}

const DistanceKernels& ScalarKernels() { return kScalarKernels; }

float Distance(Metric metric, const float* a, const float* b, size_t dim) {
  const DistanceKernels& k = Kernels();
  switch (metric) {
    case Metric::kL2:
      return k.l2_squared(a, b, dim);
    case Metric::kInnerProduct:
      return -k.dot(a, b, dim);
    case Metric::kCosine:
      return 1.0f - k.dot(a, b, dim);
  }
  // Not a Metric: collections validate theirs when created or opened.
  assert(false && "invalid Metric");
  return std::numeric_limits<float>::quiet_NaN();
}

void DistanceBatch(Metric metric, const float* query, const float* base,
                   size_t n, size_t dim, float* out) {
  const DistanceKernels& k = Kernels();
  switch (metric) {
    case Metric::kL2:
      k.l2_squared_batch(query, base, n, dim, out);
      return;
    case Metric::kInnerProduct:
      k.dot_batch(query, base, n, dim, out);
      for (size_t i = 0; i < n; ++i) out[i] = -out[i];
      return;
    case Metric::kCosine:
      k.dot_batch(query, base, n, dim, out);
      for (size_t i = 0; i < n; ++i) out[i] = 1.0f - out[i];
      return;
  }
  assert(false && "invalid Metric");
  std::fill(out, out + n, std::numeric_limits<float>::quiet_NaN());
}

bool NormalizeInPlace(float* v, size_t dim) {
  // In double: in float, the squares of components above ~1.8e19 overflow and
  // those below ~1e-19 underflow, yet such vectors are finite and have a
  // direction. In double every float product is exact and no sum of up to
  // millions of them overflows, so a finite nonzero v always gets a finite,
  // positive norm. Four sums for the same reason as the scalar kernels.
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  size_t i = 0;
  for (; i + 4 <= dim; i += 4) {
    s0 += static_cast<double>(v[i]) * v[i];
    s1 += static_cast<double>(v[i + 1]) * v[i + 1];
    s2 += static_cast<double>(v[i + 2]) * v[i + 2];
    s3 += static_cast<double>(v[i + 3]) * v[i + 3];
  }
  for (; i < dim; ++i) s0 += static_cast<double>(v[i]) * v[i];
  const double norm_squared = (s0 + s1) + (s2 + s3);
  // A NaN or Inf component makes the sum NaN or Inf; !(x > 0) also catches NaN.
  if (!(norm_squared > 0.0) || !std::isfinite(norm_squared)) return false;
  const double inverse_norm = 1.0 / std::sqrt(norm_squared);
  for (i = 0; i < dim; ++i) v[i] = static_cast<float>(v[i] * inverse_norm);
  return true;
}

namespace {

// True when every one of the n floats has a biased exponent field below
// kLimit (1..255), i.e. is finite with magnitude below 2^(kLimit - 127).
// Adding (256 - kLimit) to the isolated 8-bit exponent field carries into
// bit 31 exactly when the field is >= kLimit. OR-ing those sums is
// branch-free integer work the compiler vectorizes with plain SSE2; the fixed
// block length keeps that true even under -O2's "very cheap" vectorizer (no
// epilogue), and bounds how far we scan past a bad value.
template <uint32_t kLimit>
bool ExponentsBelow(const float* v, size_t n) {
  static_assert(kLimit >= 1 && kLimit <= 255);
  constexpr uint32_t kExponent = 0x7f800000u;
  constexpr uint32_t kAdd = (256u - kLimit) << 23;
  constexpr uint32_t kCarry = 0x80000000u;
  constexpr size_t kBlock = 64;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t sums = 0;
    for (size_t j = 0; j < kBlock; ++j) {
      sums |= (std::bit_cast<uint32_t>(v[i + j]) & kExponent) + kAdd;
    }
    if (sums & kCarry) return false;
  }
  uint32_t sums = 0;
  for (; i < n; ++i) {
    sums |= (std::bit_cast<uint32_t>(v[i]) & kExponent) + kAdd;
  }
  return (sums & kCarry) == 0;
}

}  // namespace

bool AllFinite(const float* v, size_t n) {
  // NaN and +-Inf are exactly the floats whose exponent bits are all ones.
  return ExponentsBelow<255>(v, n);
}

bool AllWellBelowDistanceRange(const float* v, size_t n) {
  // Biased exponent < 127 + 56: magnitude below 2^56.
  return ExponentsBelow<127 + 56>(v, n);
}

bool NormWithinDistanceRange(const float* v, size_t dim) {
  // Fast path: every component below 2^56, so the squared norm is below
  // dim * 2^112 <= 2^124 for dim <= 4096.
  if (dim <= 4096 && AllWellBelowDistanceRange(v, dim)) return true;
  // In double, where no product or sum of these overflows.
  double sum = 0.0;
  for (size_t i = 0; i < dim; ++i) {
    if (!std::isfinite(v[i])) return false;
    sum += static_cast<double>(v[i]) * v[i];
  }
  return sum <= kMaxSquaredNorm;
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// AVX2 + FMA kernels. Compiled with -mavx2 -mfma -mf16c (see CMakeLists.txt)
// and called only through Avx2Kernels() after the CPU check in distance.cc.
// Keep this file free of inline code shared with other files (see
// distance_isa.h) and of anything that runs at static-initialization time.

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "distance/distance.h"
#include "distance/distance_isa.h"

namespace shoal {

namespace {

// Batch kernels scan memtables far larger than the caches, so we keep
// software prefetches this far ahead of the row being read (a few rows at
// common dims). Measured on a Zen 3 VM, any distance from 0 to 8 KiB gave the
// same ~16 GB/s: its hardware prefetcher already streams contiguous rows. The
// prefetches are for hardware prefetchers that stop at 4 KiB page boundaries
// and cost about one instruction per 16 floats.
constexpr size_t kPrefetchAheadBytes = 2048;
constexpr size_t kCacheLineBytes = 64;

// Mask for the last dim % 8 floats: kTailMask + 8 - rem starts with rem
// all-ones lanes. Masked-off lanes are not read, so they cannot fault even
// when the vector ends right before an unmapped page.
alignas(64) constexpr int32_t kTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                               0,  0,  0,  0,  0,  0,  0,  0};

inline __m256i TailMask(size_t rem) {
  return _mm256_loadu_si256(
      reinterpret_cast<const __m256i*>(kTailMask + 8 - rem));
}

inline float HorizontalSum(__m256 v) {
  __m128 x =
      _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// acc + (a - b)^2 and acc + a * b, lane-wise: the step of each kernel.
inline __m256 AddSquaredDifference(__m256 acc, __m256 a, __m256 b) {
  const __m256 d = _mm256_sub_ps(a, b);
  return _mm256_fmadd_ps(d, d, acc);
}

inline __m256 AddProduct(__m256 acc, __m256 a, __m256 b) {
  return _mm256_fmadd_ps(a, b, acc);
}

// Sums kStep over all dims. Four accumulators: an FMA has a latency of 4-5
// cycles and two issue per cycle, so one accumulator would leave the FMA
// units mostly idle.
template <__m256 (*kStep)(__m256, __m256, __m256)>
inline float Accumulate(const float* a, const float* b, size_t dim) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const float* x = a + i;
    const float* y = b + i;
    acc0 = kStep(acc0, _mm256_loadu_ps(x), _mm256_loadu_ps(y));
    acc1 = kStep(acc1, _mm256_loadu_ps(x + 8), _mm256_loadu_ps(y + 8));
    acc2 = kStep(acc2, _mm256_loadu_ps(x + 16), _mm256_loadu_ps(y + 16));
    acc3 = kStep(acc3, _mm256_loadu_ps(x + 24), _mm256_loadu_ps(y + 24));
  }
  for (; i + 8 <= dim; i += 8) {
    acc0 = kStep(acc0, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
  }
  if (i < dim) {
    // Masked-off lanes load as 0 in both inputs and add 0 in either kernel.
    const __m256i mask = TailMask(dim - i);
    acc1 = kStep(acc1, _mm256_maskload_ps(a + i, mask),
                 _mm256_maskload_ps(b + i, mask));
  }
  return HorizontalSum(
      _mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
}

inline float L2SquaredImpl(const float* a, const float* b, size_t dim) {
  return Accumulate<AddSquaredDifference>(a, b, dim);
}

inline float DotImpl(const float* a, const float* b, size_t dim) {
  return Accumulate<AddProduct>(a, b, dim);
}

// Rows are contiguous, so we prefetch the region as one stream: before row r,
// every cache line up to kPrefetchAheadBytes past its end has been requested.
// Offsets, not pointers, so nothing points past the end of `base`.
template <float (*kKernel)(const float*, const float*, size_t)>
void BatchImpl(const float* query, const float* base, size_t n, size_t dim,
               float* out) {
  const char* bytes = reinterpret_cast<const char*>(base);
  const size_t total_bytes = n * dim * sizeof(float);
  size_t prefetched = 0;  // Offset of the next line to request.
  for (size_t r = 0; r < n; ++r) {
    const size_t row_end = (r + 1) * dim * sizeof(float);
    const size_t target =
        row_end + kPrefetchAheadBytes < total_bytes
            ? row_end + kPrefetchAheadBytes
            : total_bytes;
    for (; prefetched < target; prefetched += kCacheLineBytes) {
      _mm_prefetch(bytes + prefetched, _MM_HINT_T0);
    }
    out[r] = kKernel(query, base + r * dim, dim);
  }
}

// Accumulate<AddSquaredDifference> from a to four rows at once, each row's
// four accumulators receiving the same chunks in the same order as there,
// so every distance has the single kernel's bits. Sixteen accumulators do
// not fit with the loads in AVX2's 16 registers, so two sweeps: the first
// fills accumulators 0 and 1 (with the leftover chunks and the masked
// tail, which Accumulate adds to those two), the second 2 and 3. Each
// float of a is loaded once for the four rows, and eight independent
// chains of FMAs keep both FMA units busy where one distance has four.
void L2SquaredFourAvx2(const float* a, const float* const b[4], size_t dim, float out[4]) {
  const float* b0 = b[0];
  const float* b1 = b[1];
  const float* b2 = b[2];
  const float* b3 = b[3];
  __m256 s00 = _mm256_setzero_ps(), s01 = _mm256_setzero_ps();
  __m256 s10 = _mm256_setzero_ps(), s11 = _mm256_setzero_ps();
  __m256 s20 = _mm256_setzero_ps(), s21 = _mm256_setzero_ps();
  __m256 s30 = _mm256_setzero_ps(), s31 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m256 x0 = _mm256_loadu_ps(a + i);
    const __m256 x1 = _mm256_loadu_ps(a + i + 8);
    s00 = AddSquaredDifference(s00, x0, _mm256_loadu_ps(b0 + i));
    s10 = AddSquaredDifference(s10, x0, _mm256_loadu_ps(b1 + i));
    s20 = AddSquaredDifference(s20, x0, _mm256_loadu_ps(b2 + i));
    s30 = AddSquaredDifference(s30, x0, _mm256_loadu_ps(b3 + i));
    s01 = AddSquaredDifference(s01, x1, _mm256_loadu_ps(b0 + i + 8));
    s11 = AddSquaredDifference(s11, x1, _mm256_loadu_ps(b1 + i + 8));
    s21 = AddSquaredDifference(s21, x1, _mm256_loadu_ps(b2 + i + 8));
    s31 = AddSquaredDifference(s31, x1, _mm256_loadu_ps(b3 + i + 8));
  }
  const size_t blocks_end = i;
  for (; i + 8 <= dim; i += 8) {
    const __m256 x = _mm256_loadu_ps(a + i);
    s00 = AddSquaredDifference(s00, x, _mm256_loadu_ps(b0 + i));
    s10 = AddSquaredDifference(s10, x, _mm256_loadu_ps(b1 + i));
    s20 = AddSquaredDifference(s20, x, _mm256_loadu_ps(b2 + i));
    s30 = AddSquaredDifference(s30, x, _mm256_loadu_ps(b3 + i));
  }
  if (i < dim) {
    const __m256i mask = TailMask(dim - i);
    const __m256 x = _mm256_maskload_ps(a + i, mask);
    s01 = AddSquaredDifference(s01, x, _mm256_maskload_ps(b0 + i, mask));
    s11 = AddSquaredDifference(s11, x, _mm256_maskload_ps(b1 + i, mask));
    s21 = AddSquaredDifference(s21, x, _mm256_maskload_ps(b2 + i, mask));
    s31 = AddSquaredDifference(s31, x, _mm256_maskload_ps(b3 + i, mask));
  }
  // Accumulators 0 + 1 of each row, kept while the second sweep runs: the
  // single kernel adds (acc0 + acc1) + (acc2 + acc3).
  const __m256 low0 = _mm256_add_ps(s00, s01), low1 = _mm256_add_ps(s10, s11);
  const __m256 low2 = _mm256_add_ps(s20, s21), low3 = _mm256_add_ps(s30, s31);
  s00 = s01 = s10 = s11 = s20 = s21 = s30 = s31 = _mm256_setzero_ps();
  for (i = 0; i < blocks_end; i += 32) {
    const __m256 x2 = _mm256_loadu_ps(a + i + 16);
    const __m256 x3 = _mm256_loadu_ps(a + i + 24);
    s00 = AddSquaredDifference(s00, x2, _mm256_loadu_ps(b0 + i + 16));
    s10 = AddSquaredDifference(s10, x2, _mm256_loadu_ps(b1 + i + 16));
    s20 = AddSquaredDifference(s20, x2, _mm256_loadu_ps(b2 + i + 16));
    s30 = AddSquaredDifference(s30, x2, _mm256_loadu_ps(b3 + i + 16));
    s01 = AddSquaredDifference(s01, x3, _mm256_loadu_ps(b0 + i + 24));
    s11 = AddSquaredDifference(s11, x3, _mm256_loadu_ps(b1 + i + 24));
    s21 = AddSquaredDifference(s21, x3, _mm256_loadu_ps(b2 + i + 24));
    s31 = AddSquaredDifference(s31, x3, _mm256_loadu_ps(b3 + i + 24));
  }
  out[0] = HorizontalSum(_mm256_add_ps(low0, _mm256_add_ps(s00, s01)));
  out[1] = HorizontalSum(_mm256_add_ps(low1, _mm256_add_ps(s10, s11)));
  out[2] = HorizontalSum(_mm256_add_ps(low2, _mm256_add_ps(s20, s21)));
  out[3] = HorizontalSum(_mm256_add_ps(low3, _mm256_add_ps(s30, s31)));
}

float L2SquaredAvx2(const float* a, const float* b, size_t dim) {
  return L2SquaredImpl(a, b, dim);
}

float DotAvx2(const float* a, const float* b, size_t dim) {
  return DotImpl(a, b, dim);
}

// 8 bytes widened to 8 floats.
inline __m256 BytesToFloats(const uint8_t* c) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c))));
}

int32_t DotBytesAvx2(const int16_t* w, const uint8_t* c, size_t dim) {
  // Bytes widened to 16 bits, times the weights, adjacent pairs summed into
  // 32 bits (vpmaddwd): exact, 16 products an instruction.
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m256i c0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i)));
    const __m256i c1 =
        _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i + 16)));
    acc0 = _mm256_add_epi32(
        acc0, _mm256_madd_epi16(c0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i))));
    acc1 = _mm256_add_epi32(
        acc1,
        _mm256_madd_epi16(c1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i + 16))));
  }
  for (; i + 16 <= dim; i += 16) {
    const __m256i c0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i)));
    acc0 = _mm256_add_epi32(
        acc0, _mm256_madd_epi16(c0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i))));
  }
  const __m256i acc = _mm256_add_epi32(acc0, acc1);
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4e));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xb1));
  int32_t total = _mm_cvtsi128_si32(sum);
  for (; i < dim; ++i) total += int32_t{w[i]} * c[i];  // never reads past c[dim - 1]
  return total;
}

// Four floats widened to doubles.
inline __m256d FloatsToDoubles(const float* f) { return _mm256_cvtps_pd(_mm_loadu_ps(f)); }

// Four codes against one load of the weights; the four sums of eight lanes
// are added across by three horizontal adds. Integer sums: exact in any
// order, so the same as DotBytesAvx2's (and the scalar kernel's).
void DotBytesFourAvx2(const int16_t* w, const uint8_t* const c[4], size_t dim,
                      int32_t out[4]) {
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
  size_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    const __m256i weights = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i));
    for (int k = 0; k < 4; ++k) {
      const __m256i bytes =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c[k] + i)));
      acc[k] = _mm256_add_epi32(acc[k], _mm256_madd_epi16(bytes, weights));
    }
  }
  // hadd(a, b) = [a01 a23 b01 b23 | a45 a67 b45 b67]; twice gives each
  // code's sum of lanes 0-3 (low half) and 4-7 (high half) in lane k.
  const __m256i sums = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]),
                                         _mm256_hadd_epi32(acc[2], acc[3]));
  __m128i total = _mm_add_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), total);
  for (; i < dim; ++i) {  // never reads past c[k][dim - 1]
    for (int k = 0; k < 4; ++k) out[k] += int32_t{w[i]} * c[k][i];
  }
}

constexpr DistanceKernels kAvx2Kernels = {"avx2",
                                           &L2SquaredAvx2,
                                           &DotAvx2,
                                           &BatchImpl<L2SquaredImpl>,
                                           &BatchImpl<DotImpl>,
                                           &L2SquaredFourAvx2,
                                           &DotBytesAvx2,
                                           &DotBytesFourAvx2,
                                           &ScaledSumsAvx2,
                                           &QuantizeScaledAvx2};

}  // namespace

// The scalar kernel's four lanes are the vector's four lanes, with the same
// operations in the same order, so the same bits. The compiler may fuse a
// multiply and the add after it (GCC contracts C++ too, and this file has
// FMA): that changes nothing here only because each product is of two
// floats, exact in double. Keep it so (distance.h).
void ScaledSumsAvx2(const float* q, const float* lo, const float* scale, size_t dim,
                    double out[3]) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d largest = _mm256_setzero_pd(), bias = _mm256_setzero_pd(), norm = _mm256_setzero_pd();
  size_t i = 0;
  for (; i + 4 <= dim; i += 4) {
    const __m256d x = FloatsToDoubles(q + i);
    // max(new, running): the running value when the new one is NaN, as
    // std::max(running, new) does.
    largest = _mm256_max_pd(_mm256_andnot_pd(sign, _mm256_mul_pd(x, FloatsToDoubles(scale + i))),
                            largest);
    bias = _mm256_add_pd(bias, _mm256_mul_pd(x, FloatsToDoubles(lo + i)));
    norm = _mm256_add_pd(norm, _mm256_mul_pd(x, x));
  }
  alignas(32) double lanes[3][4];
  _mm256_store_pd(lanes[0], largest);
  _mm256_store_pd(lanes[1], bias);
  _mm256_store_pd(lanes[2], norm);
  for (; i < dim; ++i) {
    // Compiler builtins, not <cmath> or <algorithm>: no inline function
    // shared with other files may be compiled here (distance_isa.h).
    const double x = q[i];
    const double a = __builtin_fabs(x * scale[i]);
    lanes[0][0] = lanes[0][0] < a ? a : lanes[0][0];
    lanes[1][0] += x * lo[i];
    lanes[2][0] += x * x;
  }
  out[0] = out[1] = out[2] = 0;
  for (size_t l = 0; l < 4; ++l) {
    out[0] = out[0] < lanes[0][l] ? lanes[0][l] : out[0];
    out[1] += lanes[1][l];
    out[2] += lanes[2][l];
  }
}

void QuantizeScaledAvx2(const float* q, const float* scale, double inverse, double most,
                        size_t dim, int16_t* out) {
  const __m256d sign = _mm256_set1_pd(-0.0), half = _mm256_set1_pd(0.5);
  const __m256d inv = _mm256_set1_pd(inverse), ceiling = _mm256_set1_pd(most),
                floor = _mm256_set1_pd(-most);
  size_t i = 0;
  for (; i + 4 <= dim; i += 4) {
    const __m256d w =
        _mm256_mul_pd(_mm256_mul_pd(FloatsToDoubles(q + i), FloatsToDoubles(scale + i)), inv);
    // std::clamp(w, -most, most); NaN (unordered) then weighs nothing.
    __m256d k = _mm256_min_pd(_mm256_max_pd(w, floor), ceiling);
    k = _mm256_blendv_pd(k, _mm256_setzero_pd(), _mm256_cmp_pd(w, w, _CMP_UNORD_Q));
    const __m256d r = _mm256_add_pd(k, _mm256_or_pd(_mm256_and_pd(k, sign), half));
    const __m128i n = _mm256_cvttpd_epi32(r);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_packs_epi32(n, n));
  }
  // Each weight stands alone: the last dim % 4 are the scalar kernel's.
  if (i < dim) ScalarKernels().quantize_scaled(q + i, scale + i, inverse, most, dim - i, out + i);
}

const DistanceKernels& Avx2Kernels() { return kAvx2Kernels; }

}  // namespace shoal

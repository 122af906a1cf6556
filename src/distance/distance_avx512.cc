// Copyright 2026 The shoal Authors.
//
// AVX-512 kernels. Compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl
// -mfma (see CMakeLists.txt) and called only through Avx512Kernels() after
// the CPU check in distance.cc. The same shape as distance_avx2.cc, 16 lanes
// wide; the tail uses a lane mask instead of a mask table.

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "distance/distance.h"
#include "distance/distance_isa.h"

namespace shoal {

namespace {

constexpr size_t kPrefetchAheadBytes = 2048;  // See distance_avx2.cc.
constexpr size_t kCacheLineBytes = 64;

// Lanes [0, rem) set, for 1 <= rem <= 15. Masked-off lanes are not read and
// cannot fault.
inline __mmask16 TailMask(size_t rem) {
  return static_cast<__mmask16>((1u << rem) - 1u);
}

// Not _mm512_reduce_add_ps or _mm512_castps512_ps256: in GCC 12's headers
// they expand to _mm256_undefined_pd(), which warns -Wuninitialized. The
// zero-masked extract with a full mask is the same instruction, warning-free.
inline float HorizontalSum(__m512 v) {
  const __m256 v8 = _mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xff, v, 0),
                                  _mm512_maskz_extractf32x8_ps(0xff, v, 1));
  __m128 x =
      _mm_add_ps(_mm256_castps256_ps128(v8), _mm256_extractf128_ps(v8, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// acc + (a - b)^2 and acc + a * b, lane-wise: the step of each kernel.
inline __m512 AddSquaredDifference(__m512 acc, __m512 a, __m512 b) {
  const __m512 d = _mm512_sub_ps(a, b);
  return _mm512_fmadd_ps(d, d, acc);
}

inline __m512 AddProduct(__m512 acc, __m512 a, __m512 b) {
  return _mm512_fmadd_ps(a, b, acc);
}

// Sums kStep over all dims, with four accumulators to cover the FMA latency
// as in distance_avx2.cc.
template <__m512 (*kStep)(__m512, __m512, __m512)>
inline float Accumulate(const float* a, const float* b, size_t dim) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  __m512 acc2 = _mm512_setzero_ps(), acc3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    const float* x = a + i;
    const float* y = b + i;
    acc0 = kStep(acc0, _mm512_loadu_ps(x), _mm512_loadu_ps(y));
    acc1 = kStep(acc1, _mm512_loadu_ps(x + 16), _mm512_loadu_ps(y + 16));
    acc2 = kStep(acc2, _mm512_loadu_ps(x + 32), _mm512_loadu_ps(y + 32));
    acc3 = kStep(acc3, _mm512_loadu_ps(x + 48), _mm512_loadu_ps(y + 48));
  }
  for (; i + 16 <= dim; i += 16) {
    acc0 = kStep(acc0, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
  }
  if (i < dim) {
    // Masked-off lanes load as 0 in both inputs and add 0 in either kernel.
    const __mmask16 mask = TailMask(dim - i);
    acc1 = kStep(acc1, _mm512_maskz_loadu_ps(mask, a + i),
                 _mm512_maskz_loadu_ps(mask, b + i));
  }
  return HorizontalSum(
      _mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

inline float L2SquaredImpl(const float* a, const float* b, size_t dim) {
  return Accumulate<AddSquaredDifference>(a, b, dim);
}

inline float DotImpl(const float* a, const float* b, size_t dim) {
  return Accumulate<AddProduct>(a, b, dim);
}

// See distance_avx2.cc: one prefetch stream over the contiguous rows.
template <float (*kKernel)(const float*, const float*, size_t)>
void BatchImpl(const float* query, const float* base, size_t n, size_t dim,
               float* out) {
  const char* bytes = reinterpret_cast<const char*>(base);
  const size_t total_bytes = n * dim * sizeof(float);
  size_t prefetched = 0;
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

float L2SquaredAvx512(const float* a, const float* b, size_t dim) {
  return L2SquaredImpl(a, b, dim);
}

// Four rows against one load of `a`: Accumulate's steps for each row, in
// its order (16 accumulators of AVX-512's 32 registers), so each out[k] is
// L2SquaredImpl(a, b[k], dim) bit for bit. What a graph build's prunes
// spend their time on.
void L2SquaredFourAvx512(const float* a, const float* const b[4], size_t dim, float out[4]) {
  __m512 acc[4][4];
  for (auto& row : acc) {
    for (__m512& x : row) x = _mm512_setzero_ps();
  }
  size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    const __m512 x0 = _mm512_loadu_ps(a + i), x1 = _mm512_loadu_ps(a + i + 16);
    const __m512 x2 = _mm512_loadu_ps(a + i + 32), x3 = _mm512_loadu_ps(a + i + 48);
    for (size_t k = 0; k < 4; ++k) {
      const float* y = b[k] + i;
      acc[k][0] = AddSquaredDifference(acc[k][0], x0, _mm512_loadu_ps(y));
      acc[k][1] = AddSquaredDifference(acc[k][1], x1, _mm512_loadu_ps(y + 16));
      acc[k][2] = AddSquaredDifference(acc[k][2], x2, _mm512_loadu_ps(y + 32));
      acc[k][3] = AddSquaredDifference(acc[k][3], x3, _mm512_loadu_ps(y + 48));
    }
  }
  for (; i + 16 <= dim; i += 16) {
    const __m512 x = _mm512_loadu_ps(a + i);
    for (size_t k = 0; k < 4; ++k) {
      acc[k][0] = AddSquaredDifference(acc[k][0], x, _mm512_loadu_ps(b[k] + i));
    }
  }
  if (i < dim) {
    const __mmask16 mask = TailMask(dim - i);
    const __m512 x = _mm512_maskz_loadu_ps(mask, a + i);
    for (size_t k = 0; k < 4; ++k) {
      acc[k][1] = AddSquaredDifference(acc[k][1], x, _mm512_maskz_loadu_ps(mask, b[k] + i));
    }
  }
  for (size_t k = 0; k < 4; ++k) {
    out[k] = HorizontalSum(
        _mm512_add_ps(_mm512_add_ps(acc[k][0], acc[k][1]), _mm512_add_ps(acc[k][2], acc[k][3])));
  }
}

float DotAvx512(const float* a, const float* b, size_t dim) {
  return DotImpl(a, b, dim);
}

// 16 bytes (the first `mask` lanes of them) widened to 16 floats.
int32_t DotBytesAvx512(const int16_t* w, const uint8_t* c, size_t dim) {
  // Bytes widened to 16 bits, times the weights, adjacent pairs summed into
  // 32 bits (vpmaddwd): exact, 32 products an instruction.
  __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    const __m512i c0 =
        _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + i)));
    const __m512i c1 =
        _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + i + 32)));
    acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(c0, _mm512_loadu_si512(w + i)));
    acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(c1, _mm512_loadu_si512(w + i + 32)));
  }
  for (; i < dim; i += 32) {
    // Masked-off lanes are not read: nothing past c[dim - 1] or w[dim - 1].
    const __mmask32 mask =
        dim - i >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << (dim - i)) - 1);
    const __m512i c0 = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(mask, c + i));
    acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(c0, _mm512_maskz_loadu_epi16(mask, w + i)));
  }
  const __m512i acc = _mm512_add_epi32(acc0, acc1);
  const __m256i half = _mm256_add_epi32(_mm512_maskz_extracti32x8_epi32(0xff, acc, 0),
                                        _mm512_maskz_extracti32x8_epi32(0xff, acc, 1));
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4e));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xb1));
  return _mm_cvtsi128_si32(sum);
}

// Code k's 16 lanes folded to 8, then distance_avx2.cc's horizontal adds:
// hadd twice leaves code k's sums of lanes 0-3 and 4-7 in lane k of the low
// and high halves.
inline void StoreFourSums(const __m512i acc[4], int32_t out[4]) {
  __m256i half[4];
  for (int k = 0; k < 4; ++k) {
    half[k] = _mm256_add_epi32(_mm512_maskz_extracti32x8_epi32(0xff, acc[k], 0),
                               _mm512_maskz_extracti32x8_epi32(0xff, acc[k], 1));
  }
  const __m256i sums = _mm256_hadd_epi32(_mm256_hadd_epi32(half[0], half[1]),
                                         _mm256_hadd_epi32(half[2], half[3]));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_add_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1)));
}

// The last dim % 32 bytes of code k widened to 16 bits; masked-off lanes
// are not read (nothing past c[dim - 1]) and load as 0.
inline __m512i TailBytes(const uint8_t* c, __mmask32 mask) {
  return _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(mask, c));
}
inline __m512i Bytes(const uint8_t* c) {
  return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c)));
}
inline __mmask32 TailMask32(size_t rem) {
  return static_cast<__mmask32>((uint64_t{1} << rem) - 1);
}

// Four codes against one load of the weights, as in distance_avx2.cc, 32
// lanes wide. Integer sums: exact in any order, so the same as the scalar
// kernel's.
void DotBytesFourAvx512(const int16_t* w, const uint8_t* const c[4], size_t dim,
                        int32_t out[4]) {
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512()};
  size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m512i weights = _mm512_loadu_si512(w + i);
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm512_add_epi32(acc[k], _mm512_madd_epi16(Bytes(c[k] + i), weights));
    }
  }
  if (i < dim) {
    const __mmask32 mask = TailMask32(dim - i);
    const __m512i weights = _mm512_maskz_loadu_epi16(mask, w + i);
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm512_add_epi32(acc[k], _mm512_madd_epi16(TailBytes(c[k] + i, mask), weights));
    }
  }
  StoreFourSums(acc, out);
}

// The same on AVX-512 VNNI: vpdpwssd multiplies, adds pairs and accumulates
// in one instruction where vpmaddwd + vpaddd take two. The same sums: the
// widened bytes (0-255) and the weights are int16, a pair's sum fits int32,
// and the running sum wraps alike. Only this function is compiled for
// VNNI (the file's flags stop at BW/DQ/VL, so that the compiler never
// fuses the plain kernel's madd + add on a CPU without it).
__attribute__((target("avx512vnni"))) void DotBytesFourAvx512Vnni(const int16_t* w,
                                                                   const uint8_t* const c[4],
                                                                   size_t dim, int32_t out[4]) {
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512()};
  size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m512i weights = _mm512_loadu_si512(w + i);
    for (int k = 0; k < 4; ++k) acc[k] = _mm512_dpwssd_epi32(acc[k], Bytes(c[k] + i), weights);
  }
  if (i < dim) {
    const __mmask32 mask = TailMask32(dim - i);
    const __m512i weights = _mm512_maskz_loadu_epi16(mask, w + i);
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm512_dpwssd_epi32(acc[k], TailBytes(c[k] + i, mask), weights);
    }
  }
  StoreFourSums(acc, out);
}

// The SQ8 query's kernels are AVX2's: a query is reset once per segment,
// and 4 doubles a step already make it a small share of a search.
constexpr DistanceKernels kAvx512Kernels = {"avx512",
                                             &L2SquaredAvx512,
                                             &DotAvx512,
                                             &BatchImpl<L2SquaredImpl>,
                                             &BatchImpl<DotImpl>,
                                             &L2SquaredFourAvx512,
                                             &DotBytesAvx512,
                                             &DotBytesFourAvx512,
                                             &ScaledSumsAvx2,
                                             &QuantizeScaledAvx2};

// The same with the four codes' sums on VNNI, the kernel of every hop.
constexpr DistanceKernels WithVnniFourCodes(DistanceKernels kernels) {
  kernels.isa = "avx512vnni";
  kernels.dot_bytes_four = &DotBytesFourAvx512Vnni;
  return kernels;
}
constexpr DistanceKernels kAvx512VnniKernels = WithVnniFourCodes(kAvx512Kernels);

}  // namespace

const DistanceKernels& Avx512Kernels() { return kAvx512Kernels; }
const DistanceKernels& Avx512VnniKernels() { return kAvx512VnniKernels; }

}  // namespace shoal

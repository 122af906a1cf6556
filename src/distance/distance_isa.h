// Copyright 2026 The shoal Authors.
//
// Entry points of the kernel sets compiled for one instruction set
// (distance_avx2.cc, distance_avx512.cc). Internal to src/distance and tests.
//
// REQUIRES: call Avx2Kernels() only when the CPU has AVX2 and FMA, and
// Avx512Kernels() only when it has those and AVX-512 F/DQ/BW/VL, and
// Avx512VnniKernels() only when it also has AVX-512 VNNI; anything else dies
// with SIGILL. Kernels() in distance.cc does this check.
//
// Why this header includes no <immintrin.h>: the ISA files are compiled with
// -mavx2 / -mavx512f, and an inline function they share with other files may
// be emitted there with those instructions and then picked by the linker for
// the whole program. So they share nothing but plain declarations.

#ifndef SHOAL_SRC_DISTANCE_DISTANCE_ISA_H_
#define SHOAL_SRC_DISTANCE_DISTANCE_ISA_H_

#include "distance/distance.h"

namespace shoal {

// Both return a table that is constant-initialized: no code of the ISA file
// runs at program start, so linking it in is safe on any x86-64 CPU.
const DistanceKernels& Avx2Kernels();
const DistanceKernels& Avx512Kernels();
const DistanceKernels& Avx512VnniKernels();  // Avx512Kernels(), four codes on VNNI

// The AVX2 kernels of an SQ8 query's sums and weights (distance.h), which
// the AVX-512 sets use too. Same REQUIRES as Avx2Kernels().
void ScaledSumsAvx2(const float* q, const float* lo, const float* scale, size_t dim,
                    double out[3]);
void QuantizeScaledAvx2(const float* q, const float* scale, double inverse, double most,
                        size_t dim, int16_t* out);

}  // namespace shoal

#endif  // SHOAL_SRC_DISTANCE_DISTANCE_ISA_H_

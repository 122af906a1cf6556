// Copyright 2026 The shoal Authors.

#include "codes/pq_kmeans.h"

#include <algorithm>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace shoal::codes {
namespace {

constexpr uint32_t kK = kPqCentroids;

// Copies point p into column c of the transposed centroids.
void SetCentroid(float* centroids, uint32_t len, uint32_t c, const float* p) {
  for (uint32_t j = 0; j < len; ++j) centroids[size_t{j} * kK + c] = p[j];
}

void CopyCentroid(float* centroids, uint32_t len, uint32_t to, uint32_t from) {
  for (uint32_t j = 0; j < len; ++j) {
    centroids[size_t{j} * kK + to] = centroids[size_t{j} * kK + from];
  }
}

double SquaredDistance(const float* a, const float* b, uint32_t len) {
  double d = 0;
  for (uint32_t j = 0; j < len; ++j) {
    const double e = static_cast<double>(a[j]) - b[j];
    d += e * e;
  }
  return d;
}

// k-means++ seeding: each next centroid is a point drawn with probability
// proportional to its squared distance to the nearest chosen one. Once every
// point coincides with a chosen centroid (fewer than 256 distinct points),
// the rest repeat the chosen ones in turn.
void SeedPlusPlus(const float* points, size_t n, uint32_t len, PqRandom* rng,
                  float* centroids) {
  std::vector<double> nearest(n);
  const float* first = points + (rng->Next() % n) * len;
  SetCentroid(centroids, len, 0, first);
  for (size_t i = 0; i < n; ++i) nearest[i] = SquaredDistance(points + i * len, first, len);
  uint32_t distinct = 1;
  for (uint32_t c = 1; c < kK; ++c) {
    double total = 0;
    for (double d : nearest) total += d;
    if (!(total > 0)) {
      CopyCentroid(centroids, len, c, c % distinct);
      continue;
    }
    double target = rng->Uniform() * total;
    size_t pick = 0;
    // The last point with a nonzero weight when rounding leaves target over.
    for (size_t i = 0; i < n; ++i) {
      if (nearest[i] > 0) pick = i;
      if (nearest[i] > 0 && target < nearest[i]) break;
      target -= nearest[i];
    }
    const float* p = points + pick * len;
    SetCentroid(centroids, len, c, p);
    distinct = c + 1;
    for (size_t i = 0; i < n; ++i) {
      nearest[i] = std::min(nearest[i], SquaredDistance(points + i * len, p, len));
    }
  }
}

// One Lloyd iteration: assigns every point, moves every centroid to the mean
// of its points (an empty one to the farthest point not yet taken). Returns
// whether any assignment changed or a cluster was empty.
bool LloydStep(const float* points, size_t n, uint32_t len, float* centroids,
               std::vector<uint32_t>* assignment) {
  std::vector<float> distance(n);
  bool changed = false;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t c = NearestCentroid(centroids, len, points + i * len, &distance[i]);
    changed |= (*assignment)[i] != c;
    (*assignment)[i] = c;
  }
  std::vector<double> sums(size_t{kK} * len, 0.0);
  std::vector<size_t> counts(kK, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t c = (*assignment)[i];
    ++counts[c];
    for (uint32_t j = 0; j < len; ++j) sums[size_t{c} * len + j] += points[i * len + j];
  }
  for (uint32_t c = 0; c < kK; ++c) {
    if (counts[c] == 0) continue;
    for (uint32_t j = 0; j < len; ++j) {
      centroids[size_t{j} * kK + c] = static_cast<float>(sums[size_t{c} * len + j] / counts[c]);
    }
  }
  for (uint32_t c = 0; c < kK; ++c) {
    if (counts[c] != 0) continue;
    const size_t far = std::max_element(distance.begin(), distance.end()) - distance.begin();
    // No point is off its centroid: the cluster stays a repeat, harmlessly.
    if (!(distance[far] > 0)) break;
    SetCentroid(centroids, len, c, points + far * len);
    distance[far] = 0;
    changed = true;
  }
  return changed;
}

// The lane with the smallest value, the lowest index among equal ones.
uint32_t FirstMinimum(const float* value, const uint32_t* index, uint32_t lanes,
                      float* distance) {
  uint32_t best = 0;
  for (uint32_t k = 1; k < lanes; ++k) {
    if (value[k] < value[best] || (value[k] == value[best] && index[k] < index[best])) best = k;
  }
  if (distance != nullptr) *distance = value[best];
  return index[best];
}

}  // namespace

#if defined(__SSE2__)
// SSE2 (part of x86-64) by hand: GCC at -O2 vectorizes neither the fused
// distance-and-compare loop nor the argmin, which took 85% of training as a
// scalar scan. Sixteen lanes (centroids c % 16) each keep their first
// minimum; the distances are summed in the same order as the scalar version,
// so both give the same index.
uint32_t NearestCentroid(const float* centroids, uint32_t len, const float* r,
                         float* distance) {
  constexpr uint32_t kLanes = 16;
  __m128 best[4];
  __m128i arg[4], index[4];
  for (int k = 0; k < 4; ++k) {
    best[k] = _mm_set1_ps(std::numeric_limits<float>::infinity());
    index[k] = _mm_setr_epi32(4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3);
    arg[k] = index[k];
  }
  const __m128i step = _mm_set1_epi32(kLanes);
  for (uint32_t c = 0; c < kK; c += kLanes) {
    __m128 sum[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    for (uint32_t j = 0; j < len; ++j) {
      const __m128 x = _mm_set1_ps(r[j]);
      const float* row = centroids + size_t{j} * kK + c;
      for (int k = 0; k < 4; ++k) {
        const __m128 e = _mm_sub_ps(x, _mm_loadu_ps(row + 4 * k));
        sum[k] = _mm_add_ps(sum[k], _mm_mul_ps(e, e));
      }
    }
    for (int k = 0; k < 4; ++k) {
      const __m128i less = _mm_castps_si128(_mm_cmplt_ps(sum[k], best[k]));
      best[k] = _mm_min_ps(sum[k], best[k]);
      arg[k] = _mm_or_si128(_mm_and_si128(less, index[k]), _mm_andnot_si128(less, arg[k]));
      index[k] = _mm_add_epi32(index[k], step);
    }
  }
  alignas(16) float lane_min[kLanes];
  alignas(16) uint32_t lane_arg[kLanes];
  for (int k = 0; k < 4; ++k) {
    _mm_store_ps(lane_min + 4 * k, best[k]);
    _mm_store_si128(reinterpret_cast<__m128i*>(lane_arg + 4 * k), arg[k]);
  }
  return FirstMinimum(lane_min, lane_arg, kLanes, distance);
}
#else
uint32_t NearestCentroid(const float* centroids, uint32_t len, const float* r,
                         float* distance) {
  float d[kK] = {};
  for (uint32_t j = 0; j < len; ++j) {
    const float x = r[j];
    const float* row = centroids + size_t{j} * kK;
    for (uint32_t c = 0; c < kK; ++c) {
      const float e = x - row[c];
      d[c] += e * e;
    }
  }
  uint32_t arg[kK];
  for (uint32_t c = 0; c < kK; ++c) arg[c] = c;
  return FirstMinimum(d, arg, kK, distance);
}
#endif

std::vector<float> TrainChunk(const float* points, size_t n, uint32_t len,
                              int iterations, uint64_t seed) {
  std::vector<float> centroids(size_t{len} * kK, 0.0f);
  if (n == 0) return centroids;
  PqRandom rng(seed);
  SeedPlusPlus(points, n, len, &rng, centroids.data());
  std::vector<uint32_t> assignment(n, kK);  // kK: none yet
  for (int it = 0; it < iterations; ++it) {
    if (!LloydStep(points, n, len, centroids.data(), &assignment)) break;
  }
  return centroids;
}

}  // namespace shoal::codes

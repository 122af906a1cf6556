// Copyright 2026 The shoal Authors.
//
// k-means for one PQ chunk (codes/pq.h): points of `len` floats, 256
// centroids stored transposed (len rows of 256 floats: entry (j, c) is
// coordinate j of centroid c), so that the distances from a point to every
// centroid are `len` passes over 256 contiguous floats, which vectorize.

#ifndef SHOAL_SRC_CODES_PQ_KMEANS_H_
#define SHOAL_SRC_CODES_PQ_KMEANS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shoal::codes {

inline constexpr uint32_t kPqCentroids = 256;

// The index of the centroid nearest to r (len floats) in squared L2, the
// lowest index on a tie; *distance (if not null) receives its distance.
// centroids: len x 256, transposed.
uint32_t NearestCentroid(const float* centroids, uint32_t len, const float* r,
                         float* distance);

// Centroids (len x 256, transposed) of the n row-major points (len floats
// each) after k-means++ seeding from `seed` and up to `iterations` Lloyd
// iterations (fewer once no assignment changes). An empty cluster takes the
// point farthest from its centroid. With fewer than 256 distinct points the
// extra centroids repeat chosen ones; with n == 0 all are zero. A pure
// function of its arguments.
std::vector<float> TrainChunk(const float* points, size_t n, uint32_t len,
                              int iterations, uint64_t seed);

// SplitMix64: a tiny, fully specified generator (as in vamana_builder.cc), so
// training gives the same codebook with every standard library.
class PqRandom {
 public:
  explicit PqRandom(uint64_t seed) : x_(seed) {}
  uint64_t Next() {
    uint64_t z = (x_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }

 private:
  uint64_t x_;
};

}  // namespace shoal::codes

#endif  // SHOAL_SRC_CODES_PQ_KMEANS_H_

// Copyright 2026 The shoal Authors.
//
// Helpers shared by the micro-benchmarks (bench/micro/): synthetic vectors
// and a scratch directory in memory.

#ifndef SHOAL_BENCH_MICRO_MICRO_UTIL_H_
#define SHOAL_BENCH_MICRO_MICRO_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shoal_bench {

// n rows of dim floats, each component standard normal. Deterministic for a
// seed.
std::vector<float> GaussianVectors(size_t n, size_t dim, uint64_t seed);

// n rows of dim floats around `clusters` random centres (spread 1 per
// component around centres spread 2): closer to real embeddings than pure
// noise, which matters for how a graph search walks.
std::vector<float> ClusteredVectors(size_t n, size_t dim, size_t clusters, uint64_t seed);

// A new, empty directory under /dev/shm (tmpfs: no disk in the figures),
// removed with everything in it by the destructor. Dies when it cannot be
// created.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_MICRO_MICRO_UTIL_H_

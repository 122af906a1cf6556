// Copyright 2026 The shoal Authors.

#include "micro/micro_util.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include "absl/strings/str_cat.h"
#include "common/bench_util.h"
#include "util/file_system.h"

namespace shoal_bench {

std::vector<float> GaussianVectors(size_t n, size_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n * dim);
  for (float& x : v) x = normal(rng);
  return v;
}

std::vector<float> ClusteredVectors(size_t n, size_t dim, size_t clusters, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> centres(clusters * dim);
  for (float& x : centres) x = 2.0f * normal(rng);
  std::vector<float> v(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const float* centre = &centres[(rng() % clusters) * dim];
    for (size_t j = 0; j < dim; ++j) v[i * dim + j] = centre[j] + normal(rng);
  }
  return v;
}

ScratchDir::ScratchDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  path_ = absl::StrCat("/dev/shm/shoal_micro_", getpid(), "_", tag, "_", counter++);
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  CheckOk(fs->RemoveDirRecursive(path_), "clear scratch directory");
  CheckOk(fs->CreateDir(path_), "create scratch directory");
}

ScratchDir::~ScratchDir() {
  (void)shoal::FileSystem::Default()->RemoveDirRecursive(path_);
}

}  // namespace shoal_bench

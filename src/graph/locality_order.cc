// Copyright 2026 The shoal Authors.

#include "graph/locality_order.h"

#include <algorithm>
#include <functional>

#include "distance/distance.h"
#include "util/hash.h"

namespace shoal::graph {
namespace {

constexpr size_t kLeafSize = 64;
// Ranges at least this large split their two halves over the pool.
constexpr size_t kParallelSize = 1 << 14;

struct Splitter {
  const float* vectors;
  uint32_t dim;
  uint64_t seed;
  ThreadPool* pool;
  DistanceFn dot = Kernels().dot;

  const float* row(uint32_t i) const { return vectors + size_t{i} * dim; }

  // Orders order[begin, end) (sorting `keys` alongside as scratch).
  void Split(uint32_t* order, std::pair<float, uint32_t>* keys, size_t size,
             uint64_t path) const {
    if (size <= kLeafSize) return;
    // Two random points of the range, chosen from (seed, position in tree)
    // only, so the result does not depend on which thread runs this.
    const uint64_t h1 = Mix(path * 2 + 1), h2 = Mix(path * 2 + 2);
    const float* a = row(order[h1 % size]);
    const float* b = row(order[h2 % size]);
    std::vector<float> direction(dim);
    for (uint32_t j = 0; j < dim; ++j) direction[j] = a[j] - b[j];
    for (size_t i = 0; i < size; ++i) {
      keys[i] = {dot(direction.data(), row(order[i]), dim), order[i]};
    }
    // Ties (duplicates, or a == b) fall back to the point index: still a
    // strict order, so the split is deterministic.
    const size_t half = size / 2;
    std::nth_element(keys, keys + half, keys + size);
    for (size_t i = 0; i < size; ++i) order[i] = keys[i].second;
    auto left = [&] { Split(order, keys, half, path * 2 + 1); };
    auto right = [&] { Split(order + half, keys + half, size - half, path * 2 + 2); };
    if (pool != nullptr && size >= kParallelSize) {
      pool->ParallelFor(2, [&](size_t side) { side == 0 ? left() : right(); });
    } else {
      left();
      right();
    }
  }

  uint64_t Mix(uint64_t x) const {
    const uint64_t words[2] = {seed, x};
    return Checksum64(words, sizeof(words));
  }
};

}  // namespace

std::vector<uint32_t> LocalityOrder(const float* vectors, size_t n, uint32_t dim,
                                    uint64_t seed, ThreadPool* pool) {
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::vector<std::pair<float, uint32_t>> keys(n);
  Splitter{vectors, dim, seed, pool}.Split(order.data(), keys.data(), n, 0);
  return order;
}

}  // namespace shoal::graph

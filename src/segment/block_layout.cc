// Copyright 2026 The shoal Authors.

#include "segment/block_layout.h"

#include <numeric>

namespace shoal::segment {

std::vector<uint32_t> BlockLayout(
    uint32_t n, uint32_t nodes_per_block,
    const std::function<std::span<const uint32_t>(uint32_t)>& neighbors) {
  std::vector<uint32_t> order;
  order.reserve(n);
  if (nodes_per_block <= 1) {
    order.resize(n);
    std::iota(order.begin(), order.end(), 0u);
    return order;
  }
  std::vector<bool> placed(n, false);
  const auto place = [&](uint32_t u) {
    placed[u] = true;
    order.push_back(u);
  };
  const auto block_full = [&] { return order.size() % nodes_per_block == 0; };
  for (uint32_t seed = 0; seed < n; ++seed) {
    if (placed[seed]) continue;
    // The walk's queue is the part of `order` it placed: breadth-first.
    size_t next = order.size();
    place(seed);
    while (!block_full() && next < order.size()) {
      for (uint32_t v : neighbors(order[next++])) {
        if (placed[v]) continue;
        place(v);
        if (block_full()) break;
      }
    }
  }
  return order;
}

}  // namespace shoal::segment

// Copyright 2026 The shoal Authors.

#include "segment/graph_reach.h"

#include <algorithm>
#include <vector>

#include "util/status_macros.h"

namespace shoal::segment {

absl::StatusOr<uint64_t> CountUnreachableNodes(const Segment& segment) {
  const uint64_t n = segment.vector_count();
  if (n == 0) return 0;
  // The lists side by side: node v's at neighbors[begin[v], begin[v + 1]).
  std::vector<uint64_t> begin(n + 1, 0);
  std::vector<uint32_t> neighbors;
  SHOAL_RETURN_IF_ERROR(segment.ForEachNode(
      [&](uint32_t node, uint64_t, uint64_t, const float*, std::span<const uint32_t> list) {
        neighbors.insert(neighbors.end(), list.begin(), list.end());
        begin[node + 1] = neighbors.size();
      }));
  // ForEachNode visits nodes in order: fill the gaps of any it skipped.
  for (uint64_t v = 1; v <= n; ++v) begin[v] = std::max(begin[v], begin[v - 1]);
  const uint64_t medoid = segment.medoid();
  if (medoid >= n) return n;  // Open checks it; no walk could start
  std::vector<uint8_t> reached(n, 0);
  std::vector<uint32_t> stack = {static_cast<uint32_t>(medoid)};
  reached[stack[0]] = 1;
  uint64_t count = 1;
  while (!stack.empty()) {
    const uint32_t u = stack.back();
    stack.pop_back();
    for (uint64_t k = begin[u]; k < begin[u + 1]; ++k) {
      const uint32_t v = neighbors[k];
      if (!reached[v]) {
        reached[v] = 1;
        ++count;
        stack.push_back(v);
      }
    }
  }
  return n - count;
}

}  // namespace shoal::segment

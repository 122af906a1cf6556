// Copyright 2026 The shoal Authors.

#include "segment/robust_prune.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"

namespace shoal::segment {

void SortCandidates(uint32_t p, std::vector<Candidate>* pool) {
  std::sort(pool->begin(), pool->end(), CloserCandidate);
  auto zero_end = pool->begin();
  while (zero_end != pool->end() && zero_end->distance <= 0.0f) ++zero_end;
  if (zero_end == pool->begin()) return;
  auto after_p = std::find_if(pool->begin(), zero_end,
                              [p](const Candidate& c) { return c.node > p; });
  std::rotate(pool->begin(), after_p, zero_end);
}

void RobustPrune(uint32_t p, std::span<const Candidate> pool, float alpha,
                 uint32_t max_degree, const BuildDistance& distance,
                 std::vector<Candidate>* out, uint64_t* distance_count) {
  out->clear();
  const uint32_t max_duplicates = MaxDuplicateEdges(max_degree);
  uint32_t duplicates = 0;
  uint64_t computed = 0;
  // The kept neighbours that can occlude: all but duplicates of p, whose
  // d(s, c) == d(p, c) exactly.
  absl::InlinedVector<uint32_t, 128> occluders;
  for (const Candidate& c : pool) {
    if (c.node == p) continue;
    if (c.distance <= 0.0f) {
      // alpha * d(s, c) < 0 never holds: a duplicate of p is never occluded.
      if (duplicates == max_duplicates) continue;
      ++duplicates;
    } else {
      // Whether any kept s occludes c; four at a time, which may compute up
      // to three distances past the first occluder (the answer is the same).
      const uint32_t* s = occluders.data();
      const size_t m = occluders.size();
      bool occluded = false;
      size_t j = 0;
      for (; j + 4 <= m && !occluded; j += 4) {
        float d[4];
        distance.FromOneToFour(c.node, s + j, d);
        computed += 4;
        occluded = alpha * d[0] < c.distance || alpha * d[1] < c.distance ||
                   alpha * d[2] < c.distance || alpha * d[3] < c.distance;
      }
      for (; j < m && !occluded; ++j) {
        ++computed;
        occluded = alpha * distance(s[j], c.node) < c.distance;
      }
      if (occluded) continue;
      occluders.push_back(c.node);
    }
    out->push_back(c);
    if (out->size() == max_degree) break;
  }
  *distance_count += computed;
}

}  // namespace shoal::segment

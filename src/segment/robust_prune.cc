// Copyright 2026 The shoal Authors.

#include "segment/robust_prune.h"

#include <algorithm>

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
  for (const Candidate& c : pool) {
    if (c.node == p) continue;
    if (c.distance <= 0.0f) {
      // alpha * d(s, c) < 0 never holds: a duplicate of p is never occluded.
      if (duplicates == max_duplicates) continue;
      ++duplicates;
    } else {
      bool occluded = false;
      for (const Candidate& s : *out) {
        // A duplicate s of p has d(s, c) == d(p, c) exactly: it cannot occlude.
        if (s.distance <= 0.0f) continue;
        ++computed;
        if (alpha * distance(s.node, c.node) < c.distance) {
          occluded = true;
          break;
        }
      }
      if (occluded) continue;
    }
    out->push_back(c);
    if (out->size() == max_degree) break;
  }
  *distance_count += computed;
}

}  // namespace shoal::segment

// Copyright 2026 The shoal Authors.

#include "graph/robust_prune.h"

#include <algorithm>
#include <cassert>

#include "absl/container/inlined_vector.h"

namespace shoal::graph {

void SortCandidates(uint32_t p, std::vector<Candidate>* pool) {
  std::sort(pool->begin(), pool->end(), CloserCandidate);
  auto zero_end = pool->begin();
  while (zero_end != pool->end() && zero_end->distance <= 0.0f) ++zero_end;
  if (zero_end == pool->begin()) return;
  auto after_p = std::find_if(pool->begin(), zero_end,
                              [p](const Candidate& c) { return c.node > p; });
  std::rotate(pool->begin(), after_p, zero_end);
}

namespace {

// Whether any of the kept neighbours s[0..m) occludes c: alpha * d(s, c) <
// d(p, c). Four at a time, which may compute up to three distances past the
// first occluder (the answer is the same).
bool Occluded(const Candidate& c, const uint32_t* s, size_t m, float alpha,
              const BuildDistance& distance, uint64_t* computed) {
  size_t j = 0;
  for (; j + 4 <= m; j += 4) {
    float d[4];
    distance.DistancesToFour(c.node, s + j, d);
    *computed += 4;
    if (alpha * d[0] < c.distance || alpha * d[1] < c.distance ||
        alpha * d[2] < c.distance || alpha * d[3] < c.distance) {
      return true;
    }
  }
  for (; j < m; ++j) {
    ++*computed;
    if (alpha * distance(s[j], c.node) < c.distance) return true;
  }
  return false;
}

}  // namespace

void RobustPrune(uint32_t p, std::span<const Candidate> pool, float alpha,
                 uint32_t max_degree, const BuildDistance& distance,
                 std::vector<Candidate>* out, uint64_t* distance_count,
                 std::span<const uint8_t> kept_before) {
  assert(kept_before.empty() || kept_before.size() == pool.size());
  out->clear();
  const uint32_t max_duplicates = MaxDuplicateEdges(max_degree);
  uint32_t duplicates = 0;
  uint64_t computed = 0;
  // The kept neighbours that can occlude: all but duplicates of p, whose
  // d(s, c) == d(p, c) exactly. `fresh` are those not flagged in
  // kept_before, the only ones a flagged candidate is tested against (kept
  // only when there are flags).
  // Inline up to R = 128 (the default is 64); larger R allocates here.
  absl::InlinedVector<uint32_t, 128> occluders;
  absl::InlinedVector<uint32_t, 128> fresh;
  for (size_t i = 0; i < pool.size(); ++i) {
    const Candidate& c = pool[i];
    if (c.node == p) continue;
    const bool flagged = !kept_before.empty() && kept_before[i] != 0;
    if (c.distance <= 0.0f) {
      // alpha * d(s, c) < 0 never holds: a duplicate of p is never occluded.
      if (duplicates == max_duplicates) continue;
      ++duplicates;
    } else {
      const absl::InlinedVector<uint32_t, 128>& against = flagged ? fresh : occluders;
      if (Occluded(c, against.data(), against.size(), alpha, distance, &computed)) continue;
      occluders.push_back(c.node);
      if (!flagged && !kept_before.empty()) fresh.push_back(c.node);
    }
    out->push_back(c);
    if (out->size() == max_degree) break;
  }
  *distance_count += computed;
}

}  // namespace shoal::graph

// Copyright 2026 The shoal Authors.
//
// Entry points of a segment's graph: nodes spread evenly over the node
// order (a locality order, so over the data), with their codes side by
// side, that a search scans and lists with the medoid so that its walk
// starts near the query (docs/architecture.md, "Entry points"). The mapped
// reader keeps them only for graphs its probe finds the medoid does not
// cover (segment_search.cc); the disk-resident reader always
// (disk_segment_reader.cc).

#ifndef SHOAL_SRC_GRAPH_ENTRY_POINTS_H_
#define SHOAL_SRC_GRAPH_ENTRY_POINTS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/candidate_list.h"
#include "graph/visited_set.h"

namespace shoal::graph {

inline constexpr size_t kMinNodesForEntryPoints = 1024;
inline constexpr size_t kNodesPerEntryPoint = 64;
inline constexpr size_t kMaxEntryPoints = 4096;

// How many entry points a graph of n nodes gets: one per
// kNodesPerEntryPoint, at most kMaxEntryPoints; none below
// kMinNodesForEntryPoints.
inline size_t EntryPointCount(size_t n) {
  return n < kMinNodesForEntryPoints ? 0 : std::min(n / kNodesPerEntryPoint, kMaxEntryPoints);
}

// The i-th of `count` nodes spread evenly over 0..n-1: the middle of the
// i-th of `count` equal runs. REQUIRES: i < count <= n.
inline uint32_t SpreadNode(size_t i, size_t count, size_t n) {
  return static_cast<uint32_t>((2 * i + 1) * n / (2 * count));
}

// Sets *nodes to `count` nodes spread evenly over 0..n-1 (SpreadNode) and
// *codes to their codes, code_bytes each, copied from `all_codes` (node v's
// at all_codes + v * code_bytes).
// REQUIRES: count <= n.
inline void SpreadEntryPoints(size_t n, size_t count, const uint8_t* all_codes,
                              size_t code_bytes, std::vector<uint32_t>* nodes,
                              std::vector<uint8_t>* codes) {
  nodes->clear();
  codes->clear();
  nodes->reserve(count);
  codes->reserve(count * code_bytes);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t v = SpreadNode(i, count, n);
    nodes->push_back(v);
    const uint8_t* code = all_codes + size_t{v} * code_bytes;
    codes->insert(codes->end(), code, code + code_bytes);
  }
}

// Offers entry points [begin, end) to a walk's list: each one's code
// distance (distance(code)) is taken, and a node not yet visited is marked
// visited and listed when the list accepts it. `codes` holds node i's code
// at codes + i * code_bytes. Returns how many distances counted (those of
// nodes not visited before).
// `visited` is a VisitedSet or a HashedVisitedSet.
template <class CodeDistance, class Visited>
size_t ListEntryPoints(const std::vector<uint32_t>& nodes, const uint8_t* codes,
                       size_t code_bytes, size_t begin, size_t end,
                       const CodeDistance& distance, Visited* visited,
                       CandidateList* list) {
  size_t computed = 0;
  const uint8_t* code = codes + begin * code_bytes;
  for (size_t i = begin; i < end; ++i, code += code_bytes) {
    const float d = distance(code);
    const uint32_t v = nodes[i];
    if (visited->TestAndSet(v)) continue;
    ++computed;
    if (list->Accepts(d)) list->Insert(d, v);
  }
  return computed;
}

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_ENTRY_POINTS_H_

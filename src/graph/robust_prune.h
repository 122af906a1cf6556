// Copyright 2026 The shoal Authors.
//
// DiskANN's RobustPrune: picks the out-neighbours of a node p from a pool of
// candidates. Closest first, a candidate c is kept unless an already kept
// neighbour s "occludes" it: alpha * d(s, c) < d(p, c), i.e. c is reachable
// through s almost as cheaply as directly. alpha = 1 gives a sparse graph of
// short edges; alpha > 1 also keeps longer edges, which make searches
// converge in fewer hops. At most R are kept.
//
// Exact duplicates of p (distance 0) occlude nothing and are never occluded,
// so a large group of identical points would fill its members' lists with
// each other and cut the group off from the rest of the graph. They are
// capped at kMaxDuplicateEdges(R) per list and ordered cyclically after p
// (SortCandidates), so within a group each member links to the next few:
// the group stays connected and most of each list points outside it.

#ifndef SHOAL_SRC_GRAPH_ROBUST_PRUNE_H_
#define SHOAL_SRC_GRAPH_ROBUST_PRUNE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "graph/build_distance.h"

namespace shoal::graph {

struct Candidate {
  float distance;  // to the node whose list is being chosen
  uint32_t node;
};

// Ascending (distance, node): the order lists are kept in.
inline bool CloserCandidate(const Candidate& a, const Candidate& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.node < b.node);
}

inline uint32_t MaxDuplicateEdges(uint32_t max_degree) {
  return max_degree < 16 ? 1 : max_degree / 8;
}

// Sorts by ascending (distance, node), then rotates the candidates at
// distance 0 so those with node > p come first (cyclic order after p).
// REQUIRES: no node appears twice.
void SortCandidates(uint32_t p, std::vector<Candidate>* pool);

// Chooses p's neighbours from `pool` (sorted by SortCandidates; p itself is
// skipped if present) into *out, at most max_degree of them, closest first.
// Adds the number of distances computed to *distance_count.
//
// kept_before is empty, or holds one flag per pool entry: set for the
// entries that an earlier RobustPrune of p with the same alpha kept
// together (p's list as that prune left it; the distances to p are the
// same numbers). Each of them passed the occlusion test against every
// other one closer to p there, so two flagged entries are not tested
// against each other again: the choice is exactly the one without flags,
// for fewer distances (a list pruned again because back edges overflowed
// it holds mostly such entries). REQUIRES: kept_before is empty or as long
// as pool.
void RobustPrune(uint32_t p, std::span<const Candidate> pool, float alpha,
                 uint32_t max_degree, const BuildDistance& distance,
                 std::vector<Candidate>* out, uint64_t* distance_count,
                 std::span<const uint8_t> kept_before = {});

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_ROBUST_PRUNE_H_

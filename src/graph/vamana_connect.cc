// Copyright 2026 The shoal Authors.
//
// The last step of every build (VamanaBuilder step 4): every node can be
// found. Robust pruning keeps a node's list short and diverse, and a back
// edge to p is dropped whenever its target's list overflows, so a node can
// end up with no in-edge at all, in a group only its own members point
// into, or with in-edges only from far away. With R 16 and L 40, 5.3% of
// 25K Gaussian points were unreachable and 17.5% were not found by a
// search for their own values; with the defaults, 4 in 100K unreachable,
// 0.12% not found (issue 41). Two passes:
//
// LinkNearestBack: each node x gives each of its few nearest out-neighbours
// y (R / 16 of them, 1 to 4) an edge back to x (a walk that reaches x's neighbourhood
// then reaches x). A full list drops its edge to the neighbour with the
// most in-edges, a hub that many other paths reach. Self-searches that
// miss fell from 0.11% to 0.001-0.004% (100K x 32 Gaussian, defaults) and
// from 17% to 2.9% (25K, R 16, L 40), with recall@10 of ordinary queries
// unchanged (docs/performance.md, "Every node found").
// Parallel: each list is changed under its lock; in-degrees are relaxed
// counters (a stale one only picks another hub). A merge that extends a
// graph links back only the nodes it inserted: the seeded ones were linked
// when their graph was built (a graph built before this step still gets
// every node reached, by Connect).
//
// Connect: a breadth-first search from the medoid (where every walk
// starts; some also start at entry points, which are nodes of the graph)
// marks what is reached
// and the tree it walked (each reached node's parent). Each node left out
// is then searched for from the medoid as an insertion is (the walk sees
// reached nodes only), and the closest node the search expanded that can
// take one more edge gets an edge to it: one with a free slot, else one
// that drops its farthest edge outside the tree (the tree keeps every
// reached node reached, so dropping any other edge loses nobody). A search
// from the new node then marks what it leads to. Such a node always exists
// among the reached ones: m reached nodes with full lists of tree edges
// only would hold m R >= m tree edges, and a tree on m nodes has m - 1.
// Sequential: after LinkNearestBack there are few nodes (if any) to
// connect, and one search each costs what inserting them cost; a connected
// graph costs one breadth-first search (about n R list reads).

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <vector>

#include "graph/vamana_builder.h"

namespace shoal::graph {
namespace {

constexpr uint32_t kNoParent = std::numeric_limits<uint32_t>::max();

// Each node gets an in-edge from this many of its nearest out-neighbours:
// one per kDegreePerBackLink of R, at least one, at most kMostBackLinks.
// Each may take a slot of a full list, so short lists give fewer: at R 16,
// four cost 0.08 of recall@10 at list 10 on 25K Gaussian points, one
// nothing (docs/performance.md, "Every node found").
constexpr uint32_t kDegreePerBackLink = 16;
constexpr uint32_t kMostBackLinks = 4;

// Nodes claimed at a time by a thread of LinkNearestBack.
constexpr size_t kChunkNodes = 256;

}  // namespace

void VamanaBuilder::LinkNearestBack(size_t first, ThreadPool* pool) {
  const uint32_t links =
      std::clamp<uint32_t>(max_degree_ / kDegreePerBackLink, 1, kMostBackLinks);
  // In-degrees, kept roughly current as edges move (relaxed atomics: a
  // stale count only picks a slightly different hub).
  std::vector<uint32_t> indegree(n_, 0);
  for (uint32_t u = 0; u < n_; ++u) {
    for (uint32_t k = 0; k < store_->count(u); ++k) ++indegree[store_->ids(u)[k]];
  }
  auto in = [&](uint32_t v) { return std::atomic_ref<uint32_t>(indegree[v]); };
  std::atomic<size_t> next{first};
  OnEveryThread(pool, scratch_.size(), [&](size_t t) {
    std::vector<Candidate>& nearest = scratch_[t].pool;
    for (size_t begin; (begin = next.fetch_add(kChunkNodes)) < n_;) {
      for (size_t i = begin; i < std::min(n_, begin + kChunkNodes); ++i) {
        const uint32_t x = static_cast<uint32_t>(i);
        nearest.clear();
        Lock(x);
        for (uint32_t k = 0; k < store_->count(x); ++k) {
          nearest.push_back({store_->distances(x)[k], store_->ids(x)[k]});
        }
        Unlock(x);
        const size_t take = std::min<size_t>(links, nearest.size());
        std::partial_sort(nearest.begin(), nearest.begin() + take, nearest.end(),
                          CloserCandidate);
        for (size_t j = 0; j < take; ++j) {
          const uint32_t y = nearest[j].node;
          Lock(y);
          uint32_t* ids = store_->ids(y);
          float* distances = store_->distances(y);
          uint32_t& count = store_->count(y);
          if (std::find(ids, ids + count, x) == ids + count) {
            uint32_t slot = count;
            if (count < max_degree_) {
              ++count;
            } else {
              // y's most linked neighbour: the edge whose loss costs least.
              slot = 0;
              for (uint32_t k = 1; k < count; ++k) {
                if (in(ids[k]).load(std::memory_order_relaxed) >
                    in(ids[slot]).load(std::memory_order_relaxed)) {
                  slot = k;
                }
              }
              in(ids[slot]).fetch_sub(1, std::memory_order_relaxed);
            }
            ids[slot] = x;
            distances[slot] = nearest[j].distance;
            in(x).fetch_add(1, std::memory_order_relaxed);
          }
          Unlock(y);
        }
      }
    }
  });
}

size_t VamanaBuilder::Connect() {
  if (n_ == 0) return 0;
  // parent[v]: the node whose edge first reached v (the medoid is its own).
  std::vector<uint32_t> parent(n_, kNoParent);
  // Every reached node, in the order reached: the breadth-first queue, and
  // the fallback list (reached[open, end) may still take an edge).
  std::vector<uint32_t> reached;
  reached.reserve(n_);
  size_t open = 0;
  // Marks everything reachable from `from` (just reached) and not yet
  // reached.
  auto reach_from = [&](uint32_t from) {
    size_t next = reached.size();
    reached.push_back(from);
    for (; next < reached.size(); ++next) {
      const uint32_t u = reached[next];
      const uint32_t* ids = store_->ids(u);
      for (uint32_t k = 0; k < store_->count(u); ++k) {
        const uint32_t v = ids[k];
        if (parent[v] == kNoParent) {
          parent[v] = u;
          reached.push_back(v);
        }
      }
    }
  };
  parent[medoid_] = medoid_;
  reach_from(medoid_);

  Scratch* s = &scratch_[0];
  size_t connected = 0;
  for (uint32_t x = 0; x < n_; ++x) {
    if (parent[x] != kNoParent) continue;
    Search(x, s);
    std::sort(s->expanded.begin(), s->expanded.end(), CloserCandidate);
    // Links u -> x when u is reached and can take the edge.
    auto try_link = [&](uint32_t u, float distance) {
      if (u == x || parent[u] == kNoParent) return false;
      uint32_t* ids = store_->ids(u);
      float* distances = store_->distances(u);
      uint32_t& count = store_->count(u);
      uint32_t slot = count;
      if (count >= max_degree_) {
        // The farthest edge outside the tree.
        slot = kNoParent;
        for (uint32_t k = 0; k < count; ++k) {
          if (parent[ids[k]] != u && (slot == kNoParent || distances[k] > distances[slot])) {
            slot = k;
          }
        }
        if (slot == kNoParent) return false;
      } else {
        ++count;
      }
      ids[slot] = x;
      distances[slot] = distance;
      return true;
    };
    uint32_t from = kNoParent;
    for (const Candidate& c : s->expanded) {
      if (try_link(c.node, c.distance)) {
        from = c.node;
        break;
      }
    }
    // Else the first reached node that can take it. One that cannot (a full
    // list of tree edges) never can again: its list and its targets'
    // parents stay as they are, so the fallback skips it for good (a scan
    // from node 0 each time was quadratic at R 1).
    while (from == kNoParent && open < reached.size()) {
      const uint32_t u = reached[open];
      if (try_link(u, distance_(u, x))) {
        from = u;
      } else {
        ++open;
      }
    }
    if (from == kNoParent) continue;  // cannot happen: see the file comment
    parent[x] = from;
    reach_from(x);
    ++connected;
  }
  return connected;
}

}  // namespace shoal::graph

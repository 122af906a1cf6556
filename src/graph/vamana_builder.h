// Copyright 2026 The shoal Authors.
//
// Builds a Vamana graph (DiskANN, Subramanya et al. 2019) in memory:
//
//   1. entry point: the medoid (FindMedoid);
//   2. one insertion pass: starting from an empty graph, every point in a
//      seeded random order is inserted: a greedy search for it from the
//      medoid with list size L (on the SQ8 codes when the BuildDistance has
//      them, the expanded nodes then measured exactly), RobustPrune with
//      alpha of the nodes it expanded (plus its current neighbours) down to
//      R, then a backward edge from each new neighbour, pruned (alpha) when
//      that neighbour's list overflows;
//   3. lists still longer than R (see kSlack) are pruned to R;
//   4. every node gets an in-edge from each of its few nearest
//      out-neighbours (LinkNearestBack), and every node no walk from the
//      medoid reaches then gets one from a reached node near it (Connect),
//      so that every node can be found (vamana_connect.cc).
// DiskANN runs step 2 twice, first with alpha = 1. So did shoal until
// 2026-11-27: since searches start from entry points where the medoid's
// walks miss (entry_points.h), the first pass bought little recall (none on
// medium; 0.006-0.011 of recall@10 at lists 5-12 on embed; out-of-distribution
// queries did better without it) for 1.2-1.45x the build time
// (docs/performance-history.md, "One insertion pass").
//
// Extend builds from a seed instead (a merge reusing its largest input's
// graph, as FreshDiskANN's StreamingMerge): the seeded nodes' lists are
// given (and repaired where they lost edges, see SeedNode), the entry point
// is the seeded node nearest the centroid, and only the other nodes go
// through steps 2 and 3.
//
// Points are inserted concurrently on all threads of the pool: each node's
// list has a spinlock (a seqlock for readers, see Lock), held only to update
// that list (and during the prune of an overflowing list). Searches may miss
// edges being added concurrently, as in DiskANN; with one thread the graph
// is a pure function of (points, options, seed).
//
// Not thread-safe; one Build per object.

#ifndef SHOAL_SRC_GRAPH_VAMANA_BUILDER_H_
#define SHOAL_SRC_GRAPH_VAMANA_BUILDER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "graph/build_distance.h"
#include "graph/candidate_list.h"
#include "graph/node_store.h"
#include "graph/robust_prune.h"
#include "graph/build_stats.h"
#include "graph/visited_set.h"
#include "shoal/options.h"
#include "util/thread_pool.h"

namespace shoal::graph {

class VamanaBuilder {
 public:
  // Slots per list a NodeStore needs for max_degree R: R plus slack.
  static uint32_t ListCapacity(uint32_t max_degree);

  // Builds into `store` (its lists must be empty, with ListCapacity(R)
  // slots); `distance` must be over `store`. Both must outlive this object.
  // REQUIRES: max_degree >= 1, build_list_size >= 1, alpha >= 1,
  // store->size() < 2^31.
  VamanaBuilder(NodeStore* store, const BuildDistance& distance, const GraphOptions& options,
                uint64_t seed);
  VamanaBuilder(const VamanaBuilder&) = delete;
  VamanaBuilder& operator=(const VamanaBuilder&) = delete;

  // Builds the graph on `pool`'s threads (null: the calling thread only).
  // Fills the medoid/insertion timings and distance_computations of *stats
  // (may be null).
  void Build(ThreadPool* pool, GraphBuildStats* stats);

  // Gives node's seed list into *candidates: first its own neighbours that
  // are kept, then the kept neighbours of those it lost (the repair's
  // candidates); returns how many lead (its own). Called concurrently from
  // the pool's threads.
  using SeedFn = std::function<size_t(uint32_t node, std::vector<uint32_t>* candidates)>;

  // Builds with nodes [0, seeded) seeded by `seed` and nodes [seeded, n)
  // inserted (see the file comment); Build is Extend(0, {}, ...).
  // Fills *stats as Build, and the seeding's seed_seconds (may be null).
  void Extend(size_t seeded, const SeedFn& seed, ThreadPool* pool, GraphBuildStats* stats);

  // After Build: the entry point, and each node's out-neighbours (at most R;
  // a prune leaves a list closest first, back edges added after it are
  // appended, and step 4 appends or overwrites slots). Valid while this
  // object lives.
  uint32_t medoid() const { return medoid_; }
  std::span<const uint32_t> neighbors(uint32_t node) const {
    return {store_->ids(node), store_->count(node)};
  }

  // For tests: prune every list from scratch, as before kept_before, to
  // check that the flags leave the graph as it was. Call before Build.
  void TEST_PruneWithoutKeptBefore() { use_kept_before_ = false; }
  // For tests: skip step 4 (LinkNearestBack and Connect), as builds did
  // before it.
  void TEST_SkipConnect() { connect_ = false; }

 private:
  // Per-thread buffers, reused for every insertion so the inner loops never
  // allocate.
  // Cache-line aligned: the threads update their own scratch constantly.
  struct alignas(64) Scratch {
    CandidateList list;
    VisitedSet visited;
    std::vector<Candidate> expanded;  // nodes expanded by the last search
    std::vector<Candidate> pool;
    std::vector<Candidate> pruned;
    std::vector<Candidate> chosen;  // the new list of the node being inserted
    std::vector<uint32_t> neighbors;
    std::vector<uint32_t> todo;
    std::vector<uint8_t> kept_before;  // PruneList's flags for RobustPrune
    CodedBuildQuery coded;  // with codes: the point being inserted
    uint64_t distances = 0;
  };

  // Runs fn(t) for t in [0, threads) concurrently, one per pool thread
  // (threads == 1: on the calling thread).
  static void OnEveryThread(ThreadPool* pool, size_t threads,
                            const std::function<void(size_t)>& fn);
  // Inserts every node of `order` (every prune with alpha).
  void RunPass(const std::vector<uint32_t>& order, ThreadPool* pool);
  // Sets p's list from its seed, repairing it where it lost edges.
  void SeedNode(uint32_t p, const SeedFn& seed, Scratch* s);
  void Insert(uint32_t p, Scratch* s);
  // Greedy search for point p from the medoid; leaves the expanded nodes in
  // s->expanded, with exact distances. With codes, the search navigates on
  // them and only the expanded nodes' distances are computed exactly.
  void Search(uint32_t p, Scratch* s);
  // DistanceToP: FloatBuildQuery or CodedBuildQuery (one distance to p, or
  // four).
  template <class DistanceToP>
  void Walk(uint32_t p, const DistanceToP& distance, bool codes, Scratch* s);
  // Adds p's list entries not yet marked in s->visited to s->pool; returns
  // whether there were any. REQUIRES: p's lock held.
  bool AddListToPool(uint32_t p, Scratch* s);
  void AddBackEdge(uint32_t from, uint32_t to, float distance, Scratch* s);
  // Replaces `node`'s list by RobustPrune of it (plus `extra`, when given).
  // Overwrites s->visited, s->pool, s->pruned and s->kept_before.
  // REQUIRES: node's lock held, or no concurrent access.
  void PruneList(uint32_t node, const Candidate* extra, Scratch* s);
  void FinalPrune(ThreadPool* pool);
  // Step 4: links every node not reachable from the medoid to a reached
  // node near it (vamana_connect.cc); returns how many it linked. Runs on
  // the calling thread with scratch_[0]. REQUIRES: no concurrent access.
  size_t Connect();
  // Step 4, first part: gives every node from `first` on an in-edge from
  // each of its nearest out-neighbours, R / 16 of them (1 to 4;
  // vamana_connect.cc).
  void LinkNearestBack(size_t first, ThreadPool* pool);
  // `pruned`: the list is RobustPrune's output (with alpha_), which a
  // later prune of the node need not test against itself again
  // (pruned_prefix_). REQUIRES: node's lock held, or no concurrent access.
  void SetList(uint32_t node, const std::vector<Candidate>& list, bool pruned);

  // A list's version word is a seqlock: odd while a writer holds it. Writers
  // (Lock/Unlock) exclude each other; readers (ReadIds) never write, and
  // retry if the version moved while they copied. Searches read ~200 lists
  // per insertion and write none, so they take no locked instruction and
  // never pull a list's line in exclusive state.
  void Lock(uint32_t node);
  void Unlock(uint32_t node);
  // Copies node's ids into *out (consistent snapshot).
  void ReadIds(uint32_t node, std::vector<uint32_t>* out);

  NodeStore* const store_;
  const BuildDistance& distance_;
  const size_t n_;
  const uint32_t max_degree_;  // R
  const uint32_t list_size_;   // L
  const float alpha_;
  const uint64_t seed_;
  uint32_t medoid_ = 0;
  // GraphBuildStats::placed of the running build (null: not counted).
  std::atomic<uint64_t>* placed_ = nullptr;

  // Invariant: pruned_prefix_[v] <= count(v), and ids[0, pruned_prefix_[v])
  // with their distances are exactly the output of one RobustPrune of v
  // with alpha_ (back edges are appended after them; 0 when v's list was
  // set any other way). Guarded by v's lock. PruneList passes them to
  // RobustPrune as kept_before.
  std::vector<uint32_t> pruned_prefix_;
  bool use_kept_before_ = true;  // false: TEST_PruneWithoutKeptBefore
  bool connect_ = true;          // false: TEST_SkipConnect

  std::vector<Scratch> scratch_;  // one per thread
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_VAMANA_BUILDER_H_

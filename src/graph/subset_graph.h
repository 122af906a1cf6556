// Copyright 2026 The shoal Authors.
//
// A graph over a subset of a segment's nodes (the nodes of one label), in
// the segment's node numbers: each member's list names members only. A
// filtered walk whose matches are exactly the subset follows these lists
// instead of gathering each step's matches from the full graph, which
// reads the neighbour lists of the non-matching neighbours too (ACORN-1's
// second hop; docs/architecture.md, "Filtered search"): the second hop is
// done once, when the subset graph is built, not at every step of every
// search.
//
// Layout: one row per member, `1 + degree` words (count, then up to
// `degree` ids), rows in node order; row_of_[node] is the member's row, or
// kNone. 4 * (n + members * (1 + degree)) bytes.
//
// Thread-safe: immutable once built.

#ifndef SHOAL_SRC_GRAPH_SUBSET_GRAPH_H_
#define SHOAL_SRC_GRAPH_SUBSET_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace shoal::graph {

class SubsetGraph {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  // An empty graph over nodes [0, n) with room for `members` lists of up
  // to `degree` entries; AddList fills them, members in ascending order.
  SubsetGraph(size_t n, size_t members, uint32_t degree)
      : degree_(degree), row_of_(n, kNone) {
    rows_.reserve(members * (size_t{degree} + 1));
  }

  // Appends `node`'s list (at most degree() entries, each a member).
  // REQUIRES: node greater than every node added before.
  void AddList(uint32_t node, std::span<const uint32_t> list) {
    row_of_[node] = static_cast<uint32_t>(rows_.size() / (size_t{degree_} + 1));
    rows_.push_back(static_cast<uint32_t>(list.size()));
    rows_.insert(rows_.end(), list.begin(), list.end());
    rows_.resize(rows_.size() + degree_ - list.size(), 0);
  }

  uint32_t degree() const { return degree_; }
  bool member(uint32_t node) const { return row_of_[node] != kNone; }
  // The start of node's row (count, then ids), for prefetching.
  // REQUIRES: member(node).
  const uint32_t* row(uint32_t node) const {
    return rows_.data() + size_t{row_of_[node]} * (size_t{degree_} + 1);
  }
  // Node's neighbours among the members. REQUIRES: member(node).
  std::span<const uint32_t> neighbors(uint32_t node) const {
    const uint32_t* r = row(node);
    return {r + 1, r[0]};
  }
  size_t bytes() const { return 4 * (row_of_.size() + entries_.size() + rows_.size()); }

  // For each of the segment's entry points (in its order), a member near
  // it, or kNone: where a walk among the members starts in the part of the
  // graph the query is in (empty: the segment has no entry points).
  void set_entries(std::vector<uint32_t> entries) { entries_ = std::move(entries); }
  std::span<const uint32_t> entries() const { return entries_; }

 private:
  uint32_t degree_;
  std::vector<uint32_t> row_of_;
  std::vector<uint32_t> rows_;
  std::vector<uint32_t> entries_;
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_SUBSET_GRAPH_H_

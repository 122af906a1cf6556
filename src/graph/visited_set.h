// Copyright 2026 The shoal Authors.
//
// The set of graph nodes a search has already seen. One 16-bit mark per node:
// a node is in the set when its mark equals the current epoch, so emptying
// the set is one increment (and a real clear once every 65535 searches).
// Not thread-safe; one per search thread, reused across searches.

#ifndef SHOAL_SRC_GRAPH_VISITED_SET_H_
#define SHOAL_SRC_GRAPH_VISITED_SET_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shoal::graph {

class VisitedSet {
 public:
  // Empties the set and makes room for nodes 0..n-1.
  void Clear(size_t n) {
    if (marks_.size() < n) {
      marks_.assign(n, 0);
      epoch_ = 0;
    }
    if (++epoch_ == 0) {
      std::fill(marks_.begin(), marks_.end(), 0);
      epoch_ = 1;
    }
  }

  // Adds `node`; returns whether it was already present.
  bool TestAndSet(uint32_t node) {
    if (marks_[node] == epoch_) return true;
    marks_[node] = epoch_;
    return false;
  }

  bool Contains(uint32_t node) const { return marks_[node] == epoch_; }

  // For branch-free loops: node is in the set when marks()[node] == epoch();
  // storing epoch() there adds it. Valid until the next Clear.
  uint16_t* marks() { return marks_.data(); }
  uint16_t epoch() const { return epoch_; }

 private:
  std::vector<uint16_t> marks_;
  uint16_t epoch_ = 0;
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_VISITED_SET_H_

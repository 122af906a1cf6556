// Copyright 2026 The shoal Authors.
//
// Keeps the k closest neighbours seen so far. Ties in distance go to the
// smaller id, so results are deterministic. Not thread-safe.

#ifndef SHOAL_SRC_UTIL_TOP_K_H_
#define SHOAL_SRC_UTIL_TOP_K_H_

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "shoal/db.h"

namespace shoal {

// Strict "closer than" order on neighbours.
inline bool Closer(const Neighbor& a, const Neighbor& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.id < b.id);
}

class TopK {
 public:
  // Memory grows with what is pushed, not with k: a caller may ask for more
  // neighbours than exist.
  explicit TopK(size_t k) : k_(k) { heap_.reserve(std::min<size_t>(k, kReserveAtMost) + 1); }

  // The distance a candidate must beat (or tie with a smaller id) to enter.
  float threshold() const {
    return heap_.size() < k_ ? std::numeric_limits<float>::infinity()
                             : heap_.front().distance;
  }

  void Push(uint64_t id, float distance) {
    const Neighbor n{id, distance};
    if (heap_.size() < k_) {
      heap_.push_back(n);
      std::push_heap(heap_.begin(), heap_.end(), Closer);
    } else if (k_ > 0 && Closer(n, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Closer);
      heap_.back() = n;
      std::push_heap(heap_.begin(), heap_.end(), Closer);
    }
  }

  size_t size() const { return heap_.size(); }

  // The neighbours, closest first. Leaves this TopK empty.
  std::vector<Neighbor> Take() {
    std::sort_heap(heap_.begin(), heap_.end(), Closer);
    return std::move(heap_);
  }

 private:
  static constexpr size_t kReserveAtMost = 1024;

  size_t k_;
  std::vector<Neighbor> heap_;  // max-heap under Closer: front is the farthest
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_TOP_K_H_

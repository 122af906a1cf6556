// Copyright 2026 The shoal Authors.
//
// The set of graph nodes a disk-resident search has seen, held by open
// addressing over the nodes one search touches (a few thousand) rather
// than as VisitedSet's mark per node of the segment. A disk search thread
// keeps two sets (seen, expanded) in its scratch for as long as it lives;
// with a mark per node they cost 4 bytes a node of the largest segment per
// thread (4 MB for 1M nodes), which counts against a disk-resident DB's
// RAM as much as its codes do. Here they grow to what a search needs:
// 6 bytes a slot, twice the nodes seen, rounded up to a power of two.
//
// Clear, TestAndSet and Contains as VisitedSet's (no marks() or epoch(): no
// branch-free loops over it). Emptying is one increment of a 16-bit epoch (a
// slot is taken when its epoch is the current one). Not thread-safe; one
// per search thread, reused across searches.

#ifndef SHOAL_SRC_GRAPH_HASHED_VISITED_SET_H_
#define SHOAL_SRC_GRAPH_HASHED_VISITED_SET_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shoal::graph {

class HashedVisitedSet {
 public:
  // Empties the set. `n` (the segment's nodes) is not needed: the set
  // grows with what is added.
  void Clear(size_t /*n*/) {
    count_ = 0;
    if (++epoch_ == 0) {
      std::fill(epochs_.begin(), epochs_.end(), 0);
      epoch_ = 1;
    }
  }

  // Adds `node`; returns whether it was already present.
  bool TestAndSet(uint32_t node) {
    if (2 * (count_ + 1) > epochs_.size()) Grow();
    size_t i = Slot(node);
    while (epochs_[i] == epoch_) {
      if (keys_[i] == node) return true;
      i = (i + 1) & mask_;
    }
    keys_[i] = node;
    epochs_[i] = epoch_;
    ++count_;
    return false;
  }

  bool Contains(uint32_t node) const {
    if (epochs_.empty()) return false;
    for (size_t i = Slot(node); epochs_[i] == epoch_; i = (i + 1) & mask_) {
      if (keys_[i] == node) return true;
    }
    return false;
  }

  size_t size() const { return count_; }
  // Slots allocated (for tests of the growth).
  size_t capacity() const { return epochs_.size(); }

 private:
  static constexpr size_t kMinSlots = 1024;

  size_t Slot(uint32_t node) const {
    // Fibonacci hashing: the top bits of the product spread nearby nodes.
    return static_cast<size_t>((uint64_t{node} * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }

  // Doubles the slots (at least kMinSlots) and re-adds the current nodes.
  void Grow() {
    std::vector<uint32_t> keys = std::move(keys_);
    std::vector<uint16_t> epochs = std::move(epochs_);
    const size_t slots = std::max(kMinSlots, 2 * epochs.size());
    keys_.assign(slots, 0);
    epochs_.assign(slots, 0);
    mask_ = slots - 1;
    shift_ = 64;
    for (size_t s = slots; s > 1; s >>= 1) --shift_;
    for (size_t i = 0; i < epochs.size(); ++i) {
      if (epochs[i] != epoch_) continue;
      size_t j = Slot(keys[i]);
      while (epochs_[j] == epoch_) j = (j + 1) & mask_;
      keys_[j] = keys[i];
      epochs_[j] = epoch_;
    }
  }

  std::vector<uint32_t> keys_;
  std::vector<uint16_t> epochs_;  // a slot is taken when it holds epoch_
  size_t mask_ = 0;
  int shift_ = 64;
  size_t count_ = 0;
  uint16_t epoch_ = 1;  // never 0, the mark of a free slot
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_HASHED_VISITED_SET_H_

// Copyright 2026 The shoal Authors.
//
// The candidate list of Vamana's greedy (build) and beam (query) search: at
// most L nodes, sorted by ascending (distance, node), each marked once it has
// been expanded. A sorted array beats a heap here: L is ~100, most offers are
// rejected by one comparison with the last entry, and the search needs "the
// closest unexpanded entries", which a cursor into the array gives for free.
//
// Node indices must be < 2^31: the top bit holds the "expanded" mark.
// Not thread-safe; one per search thread, reused across searches.

#ifndef SHOAL_SRC_GRAPH_CANDIDATE_LIST_H_
#define SHOAL_SRC_GRAPH_CANDIDATE_LIST_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace shoal::graph {

class CandidateList {
 public:
  struct Entry {
    float distance;
    uint32_t node;  // top bit: expanded
  };
  static constexpr uint32_t kExpanded = 0x80000000u;
  // Lists of at most this many entries insert by moving entries up from the
  // end rather than by a binary search and a memmove: 8-11% less CPU a query
  // on small at lists 4-10 (capacity 12; docs/performance-history.md, "Four codes at
  // a time"), where most offers land near the end.
  static constexpr size_t kShortList = 16;

  // Empties the list and sets L. Allocates only when L grows.
  void Reset(size_t capacity) {
    capacity_ = capacity;
    size_ = 0;
    cursor_ = 0;
    if (entries_.size() < capacity + 1) entries_.resize(capacity + 1);
  }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // Entries [0, size()), closest first (nodes carry the kExpanded bit).
  std::span<const Entry> entries() const { return {entries_.data(), size_}; }
  float distance(size_t i) const { return entries_[i].distance; }
  uint32_t node(size_t i) const { return entries_[i].node & ~kExpanded; }
  bool expanded(size_t i) const { return (entries_[i].node & kExpanded) != 0; }
  void MarkExpanded(size_t i) { entries_[i].node |= kExpanded; }

  // Whether an offer at `distance` could enter the list.
  bool Accepts(float distance) const {
    return size_ < capacity_ || distance < entries_[size_ - 1].distance;
  }

  // Inserts `node` (not already in the list) unless the list is full and it
  // is not closer than the last entry, which then falls off. Returns its
  // index, or size() when it was not inserted.
  size_t Insert(float distance, uint32_t node) {
    if (size_ == capacity_) {
      if (size_ == 0 || !Before(distance, node, entries_[size_ - 1])) return size_;
      --size_;
    }
    if (capacity_ <= kShortList) {
      // From the end, moving each entry that comes after it up by one.
      size_t i = size_;
      while (i > 0 && Before(distance, node, entries_[i - 1])) {
        entries_[i] = entries_[i - 1];
        --i;
      }
      entries_[i] = Entry{distance, node};
      ++size_;
      if (i < cursor_) cursor_ = i;
      return i;
    }
    // Binary search for the first entry that comes after (distance, node).
    size_t lo = 0, hi = size_;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (Before(distance, node, entries_[mid])) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    std::memmove(&entries_[lo + 1], &entries_[lo], (size_ - lo) * sizeof(Entry));
    entries_[lo] = Entry{distance, node};
    ++size_;
    if (lo < cursor_) cursor_ = lo;
    return lo;
  }

  // Index of `node`, or size() when it is not in the list. Linear: for the
  // rare lookups of a search, not its inner loop.
  size_t Find(uint32_t node) const {
    for (size_t i = 0; i < size_; ++i) {
      if ((entries_[i].node & ~kExpanded) == node) return i;
    }
    return size_;
  }

  // Index of the closest unexpanded entry, or size() when every entry has
  // been expanded.
  size_t NextUnexpanded() {
    while (cursor_ < size_ && expanded(cursor_)) ++cursor_;
    return cursor_;
  }

 private:
  static bool Before(float distance, uint32_t node, const Entry& e) {
    return distance < e.distance ||
           (distance == e.distance && node < (e.node & ~kExpanded));
  }

  std::vector<Entry> entries_;  // capacity_ + 1 slots; [0, size_) in use
  size_t capacity_ = 0;
  size_t size_ = 0;
  size_t cursor_ = 0;  // no unexpanded entry before this index
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_CANDIDATE_LIST_H_

// Copyright 2026 The shoal Authors.
//
// The one place that decides whether a segment search may answer an entry
// it found. Every walk (memory-mapped, disk beam, disk pipelined) ranks what
// it found and offers it through OfferRanked; the scan of a whole segment
// (segment_scan.h) asks Admits for each entry. Today the decision is
// visibility: the shard's callback says whether (id, sequence) is the
// newest version of its id and not deleted. A filter on what a record
// carries joins it here, so that no walk can decide differently.

#ifndef SHOAL_SRC_SEGMENT_ANSWER_FILTER_H_
#define SHOAL_SRC_SEGMENT_ANSWER_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "util/top_k.h"

namespace shoal::segment {

class AnswerFilter {
 public:
  using VisibleFn = std::function<bool(uint64_t id, uint64_t sequence)>;

  // Admits every entry.
  AnswerFilter() = default;
  // Admits the entries for which visible(id, sequence) is true (all, when
  // `visible` is an empty std::function). Implicit: a callback is a filter.
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, AnswerFilter> &&
             std::is_invocable_r_v<bool, F, uint64_t, uint64_t>)
  AnswerFilter(F&& visible) : visible_(std::forward<F>(visible)) {}  // NOLINT

  bool Admits(uint64_t id, uint64_t sequence) const {
    return !visible_ || visible_(id, sequence);
  }

  // A walk's answers: `at(i)` for i < count gives the i-th closest entry
  // found as {id, sequence, distance}; the admitted ones are pushed into
  // *top, closest first, until k of them are.
  template <class EntryAt>
  void OfferRanked(size_t count, uint32_t k, const EntryAt& at, TopK* top) const {
    uint32_t offered = 0;
    for (size_t i = 0; i < count && offered < k; ++i) {
      const auto [id, sequence, distance] = at(i);
      if (!Admits(id, sequence)) continue;
      top->Push(id, distance);
      ++offered;
    }
  }

 private:
  VisibleFn visible_;
};

// What OfferRanked's `at` returns.
struct RankedEntry {
  uint64_t id;
  uint64_t sequence;
  float distance;
};

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_ANSWER_FILTER_H_

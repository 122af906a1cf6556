// Copyright 2026 The shoal Authors.
//
// The one place that decides whether a segment search may answer an entry
// it found. Every walk (memory-mapped, disk beam, disk pipelined) ranks what
// it found and offers it through OfferRanked; the scan of a whole segment
// (segment_scan.h) asks Admits for each entry. Today the decision is
// visibility: the shard's callback says whether (id, sequence) is the
// newest version of its id and not deleted; and, for a filtered search
// (issue 44), whether the node's record matches the search's filter
// (filter/compiled_filter.h), asked first since it is the cheaper. Walks
// traverse the entries it refuses but never offer them, so that no walk
// can decide differently. Without a filter the record test is one null
// pointer comparison per offered entry (k of them a walk).

#ifndef SHOAL_SRC_SEGMENT_ANSWER_FILTER_H_
#define SHOAL_SRC_SEGMENT_ANSWER_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "filter/compiled_filter.h"
#include "util/bit_set.h"
#include "util/top_k.h"

namespace shoal::segment {

class RecordRegions;  // segment/record_regions.h

// What OfferRanked's `at` returns: the entry's node (its number in the
// segment), id and sequence, and its distance.
struct RankedEntry {
  uint64_t id;
  uint64_t sequence;
  float distance;
  uint32_t node;
};

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

  // Also admits only the nodes whose records (`regions`, the segment's)
  // match `filter`; a null `filter` changes nothing. `selected`, when not
  // null, is the filter's CompiledFilter::Select over the segment's nodes:
  // exact without an Ids condition (then the test is one bit), a superset
  // with one (then the filter is evaluated for the nodes in it). A mapped
  // segment's walk then navigates among the selected nodes alone, reaching
  // past the others by their neighbour lists (segment_search.cc); without
  // it the walk traverses every node and the filter decides only what it
  // offers. All three must outlive the filter's use.
  void SetRecordFilter(const filter::CompiledFilter* filter, const RecordRegions* regions,
                       const BitSet* selected = nullptr) {
    filter_ = filter;
    regions_ = regions;
    selected_ = selected;
    selected_exact_ = selected != nullptr && filter != nullptr && !filter->has_ids();
  }
  bool filtered() const { return filter_ != nullptr; }
  const BitSet* selected() const { return selected_; }
  // Says that the selected nodes are exactly those with `label` (the
  // filter is that label alone: CompiledFilter::SoleLabel), so that a
  // mapped segment's walk may follow its graph of that label's nodes.
  // REQUIRES: SetRecordFilter with `selected` first.
  void SetSelectedLabel(uint32_t label) {
    selected_label_ = label;
    has_selected_label_ = true;
  }
  bool selected_label(uint32_t* label) const {
    *label = selected_label_;
    return has_selected_label_;
  }

  // Whether the record of `node` (its entry (id, sequence)) passes the
  // filter: true without one.
  bool Matches(uint32_t node, uint64_t id) const {
    if (filter_ == nullptr) return true;
    if (selected_ != nullptr) {
      if (!selected_->Test(node)) return false;
      if (selected_exact_) return true;
    }
    return filter_->MatchesNode(*regions_, node, id);
  }
  bool Admits(uint64_t id, uint64_t sequence, uint32_t node) const {
    return Matches(node, id) && (!visible_ || visible_(id, sequence));
  }

  // A walk's answers: `at(i)` for i < count gives the i-th closest entry
  // found as {id, sequence, distance}; the admitted ones are pushed into
  // *top, closest first, until k of them are.
  template <class EntryAt>
  void OfferRanked(size_t count, uint32_t k, const EntryAt& at, TopK* top) const {
    uint32_t offered = 0;
    for (size_t i = 0; i < count && offered < k; ++i) {
      const auto [id, sequence, distance, node] = at(i);
      if (!Admits(id, sequence, node)) continue;
      top->Push(id, distance);
      ++offered;
    }
  }

 private:
  VisibleFn visible_;
  const filter::CompiledFilter* filter_ = nullptr;
  const RecordRegions* regions_ = nullptr;
  const BitSet* selected_ = nullptr;
  uint32_t selected_label_ = 0;
  bool has_selected_label_ = false;
  bool selected_exact_ = false;
};

}  // namespace shoal::segment

#endif  // SHOAL_SRC_SEGMENT_ANSWER_FILTER_H_

// Copyright 2026 The shoal Authors.
//
// A search's Filter (shoal/filter.h), checked once when the search starts
// and compiled into a flat array of conditions that answers per segment
// node (its labels and attribute columns, segment/record_regions.h) or per
// memtable slot (its encoded extras, record/record_format.h) without
// allocating. A node or slot without a record has no labels and no
// attributes.
//
// The tree is kept in preorder: op i's subtree is ops [i, end). An And
// lists its children cheapest first (label and range conditions, then
// subtrees, then the caller's id predicate last), so the predicate is
// asked only about entries that pass the rest.
//
// Thread-safe: immutable once compiled (the caller's id predicate must be
// thread-safe itself, as filter.h requires).

#ifndef SHOAL_SRC_FILTER_COMPILED_FILTER_H_
#define SHOAL_SRC_FILTER_COMPILED_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "shoal/filter.h"
#include "util/bit_set.h"

namespace shoal {
namespace segment {
class RecordRegions;  // segment/record_regions.h
}  // namespace segment

namespace filter {

class CompiledFilter {
 public:
  // Checks `filter` against the limits of filter.h and resolves its
  // attribute names against `attributes` (CollectionOptions::attributes).
  // InvalidArgumentError saying what is wrong and where (a path such as
  // "filter.children[1]").
  static absl::StatusOr<std::unique_ptr<const CompiledFilter>> Compile(
      const Filter& filter, std::span<const std::string> attributes);

  // Whether node `node` of the segment whose record regions are `r`, whose
  // id is `id`, matches.
  bool MatchesNode(const segment::RecordRegions& r, uint32_t node, uint64_t id) const;
  // Whether a memtable slot whose encoded extras are `extras` (empty: none)
  // matches. Extras that do not parse count as none (memtables hold only
  // extras checked when written).
  bool MatchesExtras(std::string_view extras, uint64_t id) const;
  // Whether an entry without labels or attributes matches.
  bool MatchesBare(uint64_t id) const;
  // Whether the answer for an entry without record parts depends on its id
  // (the filter holds an Ids condition).
  bool has_ids() const { return has_ids_; }
  // Whether the filter is one label alone (AnyLabel or AllLabels of one
  // label), which it then sets *label to: a segment's matches are then
  // exactly that label's posting list, which a walk may follow a graph of
  // (SegmentReader's label graphs).
  bool SoleLabel(uint32_t* label) const;

  // An upper bound on the nodes of the segment (`nodes` of them, records
  // `r`) that match, from posting list lengths and attribute summaries;
  // `nodes` where the filter cannot be costed (NoLabel, Ids). 0 means none
  // can: the segment need not be searched.
  uint64_t MaxMatches(const segment::RecordRegions& r, uint64_t nodes) const;

  // Sets *out to the nodes of the segment (`nodes` of them, records `r`)
  // that match, from its posting lists and attribute columns: exact,
  // except that an Ids condition counts as true (the caller's predicate is
  // asked per entry, never per node here), so then a superset. Costs a
  // pass over nodes/64 words per label condition and over nodes values per
  // range; the postings' lengths for the rest.
  void Select(const segment::RecordRegions& r, uint32_t nodes, BitSet* out) const;

 private:
  struct Op {
    Filter::Kind kind;
    uint32_t end;         // one past this op's subtree
    uint32_t begin = 0;   // labels: first in labels_
    uint32_t count = 0;   // labels: how many (ascending, distinct)
    uint32_t attribute = 0;
    int64_t min = 0;      // range, inclusive
    int64_t max = -1;     // range, inclusive; max < min: matches nothing
    const std::function<bool(uint64_t)>* ids = nullptr;
  };
  CompiledFilter() = default;
  absl::Status Add(const Filter& f, std::span<const std::string> attributes, size_t depth,
                   const std::string& where);
  template <class Record>
  bool Eval(const Record& rec, uint32_t op, uint64_t id) const;
  uint64_t Bound(const segment::RecordRegions& r, uint64_t nodes, uint32_t op) const;
  void SelectOp(const segment::RecordRegions& r, uint32_t nodes, uint32_t op, BitSet* out) const;

  std::vector<Op> ops_;
  std::vector<uint32_t> labels_;
  bool has_ids_ = false;
};

}  // namespace filter
}  // namespace shoal

#endif  // SHOAL_SRC_FILTER_COMPILED_FILTER_H_

// Copyright 2026 The shoal Authors.
//
// Filtered search: a predicate on what records carry (shoal/record.h), set
// in SearchOptions::filter. A filtered search answers the nearest
// neighbours among the live vectors that match it, exactly: never an id
// that fails it, and k results whenever at least k live vectors match (all
// of them when fewer do).
//
//   labels     AnyLabel(L): the record has at least one label of L
//              AllLabels(L): it has every label of L
//              NoLabel(L): it has none of L
//   attribute  Range(name, lower, upper): the record has the attribute and
//              lower <= value < upper (half-open: "ts in [a, b)"); AtLeast
//              and Below leave one side open
//   ids        Ids(fn): fn(id) is true (the caller's predicate)
//   AND / OR   And({...}), Or({...}) of any of these
//
// A record without labels fails AnyLabel and AllLabels and passes NoLabel;
// one without the attribute fails every Range on it. Vectors written
// without records (DB::Put with a span, or before records existed) are
// records without labels or attributes.
//
// Attributes are named as CollectionOptions::attributes declares them: a
// name the collection does not declare is an error (InvalidArgument, when
// the search starts), not a condition that nothing matches.
//
// Limits (InvalidArgument when the search starts): a tree at most
// kMaxFilterDepth deep (a single condition is depth 1), an And or Or of
// 1..kMaxFilterChildren children, a label condition of
// 1..kMaxFilterLabels labels, lower <= upper in a Range (lower == upper
// is an empty range: nothing matches).
//
// Ids(fn) is uncostable: the engine cannot count what it matches, so a
// search plans as if every vector might, and asks fn only about vectors
// that pass the rest of an And. fn must be thread-safe (DB::SearchBatch
// and a search's shards call it from several threads at once), cheap, and
// must not call into the DB.
//
// How it is searched (docs/architecture.md, "Filtered search"): per
// segment, the matching nodes are selected from the segment's posting
// lists and attribute columns and counted first. None: the segment is
// skipped. Few: they are scanned (ranked by their codes, the closest
// max(list_size, k + a few) reranked by their vectors). Many: the graph is
// walked among the matching nodes only. A walk that comes back short is
// followed by the scan. The answers are as near as an unfiltered search's
// at the same SearchOptions::list_size (the same knob trades recall for
// speed); their number and their matching are exact. SearchStats says
// which path each segment took.
//
// A Filter is a value: copy it, keep it, reuse it for many searches.

#ifndef SHOAL_INCLUDE_SHOAL_FILTER_H_
#define SHOAL_INCLUDE_SHOAL_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace shoal {

inline constexpr size_t kMaxFilterDepth = 8;
inline constexpr size_t kMaxFilterChildren = 16;
inline constexpr size_t kMaxFilterLabels = 1024;

struct Filter {
  enum class Kind : uint8_t {
    kAnyLabel,   // labels
    kAllLabels,  // labels
    kNoLabel,    // labels
    kRange,      // attribute, lower, upper, upper_bounded
    kIds,        // ids
    kAnd,        // children
    kOr,         // children
  };

  Kind kind = Kind::kAnd;
  std::vector<uint32_t> labels;  // any order; repeats count once
  std::string attribute;         // a name in CollectionOptions::attributes
  int64_t lower = std::numeric_limits<int64_t>::min();  // inclusive
  int64_t upper = std::numeric_limits<int64_t>::max();  // exclusive, when upper_bounded
  bool upper_bounded = false;    // false: no upper bound (INT64_MAX matches too)
  std::function<bool(uint64_t id)> ids;
  std::vector<Filter> children;

  static Filter AnyLabel(std::vector<uint32_t> labels) {
    return Labels(Kind::kAnyLabel, std::move(labels));
  }
  static Filter AllLabels(std::vector<uint32_t> labels) {
    return Labels(Kind::kAllLabels, std::move(labels));
  }
  static Filter NoLabel(std::vector<uint32_t> labels) {
    return Labels(Kind::kNoLabel, std::move(labels));
  }
  // lower <= value < upper.
  static Filter Range(std::string attribute, int64_t lower, int64_t upper) {
    Filter f = AtLeast(std::move(attribute), lower);
    f.upper = upper;
    f.upper_bounded = true;
    return f;
  }
  // lower <= value.
  static Filter AtLeast(std::string attribute, int64_t lower) {
    Filter f;
    f.kind = Kind::kRange;
    f.attribute = std::move(attribute);
    f.lower = lower;
    return f;
  }
  // value < upper.
  static Filter Below(std::string attribute, int64_t upper) {
    return Range(std::move(attribute), std::numeric_limits<int64_t>::min(), upper);
  }
  static Filter Ids(std::function<bool(uint64_t id)> fn) {
    Filter f;
    f.kind = Kind::kIds;
    f.ids = std::move(fn);
    return f;
  }
  static Filter And(std::vector<Filter> children) {
    return Node(Kind::kAnd, std::move(children));
  }
  static Filter Or(std::vector<Filter> children) {
    return Node(Kind::kOr, std::move(children));
  }

 private:
  static Filter Labels(Kind kind, std::vector<uint32_t> labels) {
    Filter f;
    f.kind = kind;
    f.labels = std::move(labels);
    return f;
  }
  static Filter Node(Kind kind, std::vector<Filter> children) {
    Filter f;
    f.kind = kind;
    f.children = std::move(children);
    return f;
  }
};

}  // namespace shoal

#endif  // SHOAL_INCLUDE_SHOAL_FILTER_H_

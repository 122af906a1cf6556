// Copyright 2026 The shoal Authors.

#include "filter/compiled_filter.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "record/record_format.h"
#include "segment/record_regions.h"

namespace shoal::filter {
namespace {

// Order of an And's children: cheapest first, the caller's predicate last.
int Cost(const Filter& f) {
  switch (f.kind) {
    case Filter::Kind::kAnyLabel:
    case Filter::Kind::kAllLabels:
    case Filter::Kind::kNoLabel:
    case Filter::Kind::kRange:
      return 0;
    case Filter::Kind::kAnd:
    case Filter::Kind::kOr:
      return 1;
    case Filter::Kind::kIds:
      return 2;
  }
  return 2;
}

bool Contains(std::span<const uint32_t> sorted, uint32_t v) {
  return std::binary_search(sorted.begin(), sorted.end(), v);
}

// A segment node as Eval reads it.
struct NodeRecord {
  const segment::RecordRegions& r;
  uint32_t node;
  std::span<const uint32_t> labels() const { return r.labels(node); }
  bool Attribute(uint32_t a, int64_t* v) const {
    if (!r.has_attribute(node, a)) return false;
    *v = r.attribute(node, a);
    return true;
  }
};

// A memtable slot's parsed extras as Eval reads them (copied out of the
// unaligned encoding once, on the stack).
struct ExtrasRecord {
  std::array<uint32_t, kMaxLabels> label_values;
  size_t label_count = 0;
  uint32_t mask = 0;
  std::array<int64_t, kMaxAttributes> values;

  explicit ExtrasRecord(const record::ExtrasView& e) {
    label_count = std::min(e.label_count(), kMaxLabels);
    for (size_t i = 0; i < label_count; ++i) label_values[i] = e.label(i);
    for (size_t i = 0; i < e.attribute_count(); ++i) {
      const AttributeValue av = e.attribute(i);
      if (av.attribute >= kMaxAttributes) continue;
      mask |= uint32_t{1} << av.attribute;
      values[av.attribute] = av.value;
    }
  }
  ExtrasRecord() = default;
  std::span<const uint32_t> labels() const { return {label_values.data(), label_count}; }
  bool Attribute(uint32_t a, int64_t* v) const {
    if (((mask >> a) & 1) == 0) return false;
    *v = values[a];
    return true;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<const CompiledFilter>> CompiledFilter::Compile(
    const Filter& filter, std::span<const std::string> attributes) {
  std::unique_ptr<CompiledFilter> c(new CompiledFilter());
  absl::Status s = c->Add(filter, attributes, 1, "filter");
  if (!s.ok()) return s;
  return std::unique_ptr<const CompiledFilter>(std::move(c));
}

absl::Status CompiledFilter::Add(const Filter& f, std::span<const std::string> attributes,
                                 size_t depth, const std::string& where) {
  if (depth > kMaxFilterDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the filter is deeper than kMaxFilterDepth (", kMaxFilterDepth,
                     ")"));
  }
  const uint32_t at = static_cast<uint32_t>(ops_.size());
  ops_.push_back(Op{f.kind, 0});
  switch (f.kind) {
    case Filter::Kind::kAnyLabel:
    case Filter::Kind::kAllLabels:
    case Filter::Kind::kNoLabel: {
      if (f.labels.empty() || f.labels.size() > kMaxFilterLabels) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": a label condition names 1..kMaxFilterLabels (",
                         kMaxFilterLabels, ") labels, got ", f.labels.size()));
      }
      std::vector<uint32_t> sorted = f.labels;
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      ops_[at].begin = static_cast<uint32_t>(labels_.size());
      ops_[at].count = static_cast<uint32_t>(sorted.size());
      labels_.insert(labels_.end(), sorted.begin(), sorted.end());
      break;
    }
    case Filter::Kind::kRange: {
      const auto it = std::find(attributes.begin(), attributes.end(), f.attribute);
      if (it == attributes.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": attribute \"", f.attribute, "\" is not one the collection declares"));
      }
      if (f.upper_bounded && f.lower > f.upper) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": inverted range [", f.lower,
                                                       ", ", f.upper, ") on \"", f.attribute,
                                                       "\""));
      }
      ops_[at].attribute = static_cast<uint32_t>(it - attributes.begin());
      ops_[at].min = f.lower;
      if (!f.upper_bounded) {
        ops_[at].max = std::numeric_limits<int64_t>::max();
      } else if (f.upper > f.lower) {
        ops_[at].max = f.upper - 1;
      } else {  // empty: max < min
        ops_[at].min = 0;
        ops_[at].max = -1;
      }
      break;
    }
    case Filter::Kind::kIds:
      if (!f.ids) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": Ids without a function"));
      }
      ops_[at].ids = &f.ids;
      has_ids_ = true;
      break;
    case Filter::Kind::kAnd:
    case Filter::Kind::kOr: {
      if (f.children.empty() || f.children.size() > kMaxFilterChildren) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": And and Or take 1..kMaxFilterChildren (", kMaxFilterChildren,
                         ") children, got ", f.children.size()));
      }
      std::vector<size_t> order(f.children.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return Cost(f.children[a]) < Cost(f.children[b]);
      });
      for (size_t i : order) {
        const absl::Status s =
            Add(f.children[i], attributes, depth + 1, absl::StrCat(where, ".children[", i, "]"));
        if (!s.ok()) return s;
      }
      break;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown kind ", static_cast<int>(f.kind)));
  }
  ops_[at].end = static_cast<uint32_t>(ops_.size());
  return absl::OkStatus();
}

template <class Record>
bool CompiledFilter::Eval(const Record& rec, uint32_t i, uint64_t id) const {
  const Op& op = ops_[i];
  switch (op.kind) {
    case Filter::Kind::kAnyLabel:
    case Filter::Kind::kNoLabel: {
      const std::span<const uint32_t> want(labels_.data() + op.begin, op.count);
      bool any = false;
      for (uint32_t label : rec.labels()) {
        if (Contains(want, label)) {
          any = true;
          break;
        }
      }
      return any == (op.kind == Filter::Kind::kAnyLabel);
    }
    case Filter::Kind::kAllLabels: {
      const std::span<const uint32_t> has = rec.labels();
      if (has.size() < op.count) return false;
      for (uint32_t j = op.begin; j < op.begin + op.count; ++j) {
        if (!Contains(has, labels_[j])) return false;
      }
      return true;
    }
    case Filter::Kind::kRange: {
      int64_t v;
      return rec.Attribute(op.attribute, &v) && op.min <= v && v <= op.max;
    }
    case Filter::Kind::kIds:
      return (*op.ids)(id);
    case Filter::Kind::kAnd:
      for (uint32_t c = i + 1; c < op.end; c = ops_[c].end) {
        if (!Eval(rec, c, id)) return false;
      }
      return true;
    case Filter::Kind::kOr:
      for (uint32_t c = i + 1; c < op.end; c = ops_[c].end) {
        if (Eval(rec, c, id)) return true;
      }
      return false;
  }
  return false;
}

bool CompiledFilter::MatchesNode(const segment::RecordRegions& r, uint32_t node,
                                 uint64_t id) const {
  return Eval(NodeRecord{r, node}, 0, id);
}

bool CompiledFilter::MatchesExtras(std::string_view extras, uint64_t id) const {
  if (extras.empty()) return MatchesBare(id);
  record::ExtrasView view;
  if (!record::Parse(extras, &view).ok()) return MatchesBare(id);
  return Eval(ExtrasRecord(view), 0, id);
}

bool CompiledFilter::MatchesBare(uint64_t id) const { return Eval(ExtrasRecord(), 0, id); }

uint64_t CompiledFilter::MaxMatches(const segment::RecordRegions& r, uint64_t nodes) const {
  return Bound(r, nodes, 0);
}

uint64_t CompiledFilter::Bound(const segment::RecordRegions& r, uint64_t nodes,
                               uint32_t i) const {
  const Op& op = ops_[i];
  switch (op.kind) {
    case Filter::Kind::kAnyLabel: {
      uint64_t sum = 0;
      for (uint32_t j = op.begin; j < op.begin + op.count && sum < nodes; ++j) {
        sum += r.postings(labels_[j]).size();
      }
      return std::min(sum, nodes);
    }
    case Filter::Kind::kAllLabels: {
      uint64_t least = nodes;
      for (uint32_t j = op.begin; j < op.begin + op.count; ++j) {
        least = std::min<uint64_t>(least, r.postings(labels_[j]).size());
      }
      return least;
    }
    case Filter::Kind::kRange: {
      if (op.max < op.min || op.attribute >= r.attribute_count()) return 0;
      const segment::AttributeSummary s = r.summary(op.attribute);
      if (s.count == 0 || s.max < op.min || s.min > op.max) return 0;
      return std::min(s.count, nodes);
    }
    case Filter::Kind::kNoLabel:
    case Filter::Kind::kIds:
      return nodes;
    case Filter::Kind::kAnd: {
      uint64_t least = nodes;
      for (uint32_t c = i + 1; c < op.end; c = ops_[c].end) {
        least = std::min(least, Bound(r, nodes, c));
      }
      return least;
    }
    case Filter::Kind::kOr: {
      uint64_t sum = 0;
      for (uint32_t c = i + 1; c < op.end && sum < nodes; c = ops_[c].end) {
        sum += Bound(r, nodes, c);
      }
      return std::min(sum, nodes);
    }
  }
  return nodes;
}

bool CompiledFilter::SoleLabel(uint32_t* label) const {
  if (ops_.size() != 1 || ops_[0].count != 1) return false;
  if (ops_[0].kind != Filter::Kind::kAnyLabel && ops_[0].kind != Filter::Kind::kAllLabels) {
    return false;
  }
  *label = labels_[ops_[0].begin];
  return true;
}

void CompiledFilter::Select(const segment::RecordRegions& r, uint32_t nodes,
                            BitSet* out) const {
  SelectOp(r, nodes, 0, out);
}

void CompiledFilter::SelectOp(const segment::RecordRegions& r, uint32_t nodes, uint32_t i,
                              BitSet* out) const {
  const Op& op = ops_[i];
  out->Reset(nodes);
  switch (op.kind) {
    case Filter::Kind::kAnyLabel:
    case Filter::Kind::kNoLabel:
      // A common label's nodes as the segment keeps them in bits (a copy of
      // n / 64 words), a rarer one's from its posting list.
      for (uint32_t j = op.begin; j < op.begin + op.count; ++j) {
        if (const BitSet* bits = r.LabelBits(labels_[j]);
            bits != nullptr && bits->size() == nodes) {
          out->Or(*bits);
          continue;
        }
        for (uint32_t node : r.postings(labels_[j])) {
          if (node < nodes) out->Set(node);  // Open checked them; cheap to be sure
        }
      }
      if (op.kind == Filter::Kind::kNoLabel) out->Complement();
      return;
    case Filter::Kind::kAllLabels: {
      // The shortest posting list, each of its nodes tested for the rest.
      std::span<const uint32_t> shortest = r.postings(labels_[op.begin]);
      for (uint32_t j = op.begin + 1; j < op.begin + op.count; ++j) {
        const std::span<const uint32_t> p = r.postings(labels_[j]);
        if (p.size() < shortest.size()) shortest = p;
      }
      const std::span<const uint32_t> want(labels_.data() + op.begin, op.count);
      for (uint32_t node : shortest) {
        if (node >= nodes) continue;
        const std::span<const uint32_t> has = r.labels(node);
        bool all = true;
        for (uint32_t label : want) all = all && Contains(has, label);
        if (all) out->Set(node);
      }
      return;
    }
    case Filter::Kind::kRange: {
      if (op.max < op.min || op.attribute >= r.attribute_count()) return;
      const segment::AttributeSummary summary = r.summary(op.attribute);
      if (summary.count == 0 || summary.max < op.min || summary.min > op.max) return;
      // The nodes in range by two binary searches of the nodes ordered by
      // value, when they are few; when they are many (an eighth of the
      // segment or more), a pass over the column sets their bits faster
      // than their scattered members would.
      const std::span<const uint32_t> order = r.NodesByValue(op.attribute);
      const std::span<const int64_t> values = r.attribute_column(op.attribute);
      const auto first = std::partition_point(
          order.begin(), order.end(), [&](uint32_t node) { return values[node] < op.min; });
      const auto last = std::partition_point(
          first, order.end(), [&](uint32_t node) { return values[node] <= op.max; });
      if (static_cast<uint64_t>(last - first) < nodes / 8) {
        for (auto it = first; it != last; ++it) {
          if (*it < nodes) out->Set(*it);
        }
        return;
      }
      // 64 nodes a word, without branches: v in [min, max] as one unsigned
      // comparison. A node without the attribute holds 0 in the column, so
      // the presence masks are asked only when 0 is in the range and some
      // node lacks the attribute.
      const std::span<const int64_t> column = r.attribute_column(op.attribute);
      const uint64_t low = static_cast<uint64_t>(op.min);
      const uint64_t width = static_cast<uint64_t>(op.max) - low;
      for (uint32_t base = 0; base < nodes; base += 64) {
        const uint32_t end = std::min<uint32_t>(nodes, base + 64);
        uint64_t bits = 0;
        for (uint32_t j = base; j < end; ++j) {
          bits |= uint64_t{static_cast<uint64_t>(column[j]) - low <= width} << (j - base);
        }
        out->OrWord(base / 64, bits);
      }
      if (summary.count < nodes && op.min <= 0 && 0 <= op.max) {
        out->ForEach([&](size_t node) {
          if (!r.has_attribute(static_cast<uint32_t>(node), op.attribute)) {
            out->Clear(node);
          }
        });
      }
      return;
    }
    case Filter::Kind::kIds:
      out->Fill();
      return;
    case Filter::Kind::kAnd:
    case Filter::Kind::kOr: {
      const bool is_and = op.kind == Filter::Kind::kAnd;
      BitSet child;
      bool first = true;
      for (uint32_t c = i + 1; c < op.end; c = ops_[c].end) {
        if (ops_[c].kind == Filter::Kind::kIds) {  // true here (see Select)
          if (is_and) continue;
          out->Fill();
          return;
        }
        if (first) {
          SelectOp(r, nodes, c, out);
          first = false;
        } else {
          SelectOp(r, nodes, c, &child);
          if (is_and) {
            out->And(child);
          } else {
            out->Or(child);
          }
        }
      }
      if (first) out->Fill();  // an And of Ids conditions alone
      return;
    }
  }
}

}  // namespace shoal::filter

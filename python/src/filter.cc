// Copyright 2026 The shoal Authors.

#include "filter.h"

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "arrays.h"
#include "nanobind/stl/string.h"

namespace nb = nanobind;
using namespace nanobind::literals;

namespace shoal::python {
namespace {

std::vector<uint32_t> Labels(nb::handle labels) {
  if (nb::isinstance<nb::str>(labels)) throw nb::type_error("labels must be an iterable of ints");
  std::vector<uint32_t> out;
  for (nb::handle label : labels) out.push_back(ToU32(label, "label"));
  return out;
}

PyFilter Make(Filter f) { return PyFilter{std::move(f)}; }

// The predicate of shoal.ids(...): kept as this type (not a bare lambda) so
// that pickling can find the allow-list again (std::function::target).
struct IdAllowList {
  std::shared_ptr<const absl::flat_hash_set<uint64_t>> set;
  bool operator()(uint64_t id) const { return set->contains(id); }
};

// ---- Pickling (so that a Filter crosses to Ray actors and processes) ----
//
// The state is (kStateVersion, node); a node is the tuple
//   (kind, labels, attribute, lower, upper, upper_bounded, ids, children)
// with kind the Filter::Kind value, labels a tuple of ints, ids the
// allow-list as bytes (uint64 in the host's byte order: pickles cross
// processes and machines of one cluster, not architectures) or None, and
// children a tuple of nodes.
constexpr int kStateVersion = 1;

nb::tuple NodeState(const Filter& f) {
  nb::list labels;
  for (uint32_t label : f.labels) labels.append(label);
  nb::object ids = nb::none();
  if (f.kind == Filter::Kind::kIds) {
    const IdAllowList* list = f.ids.target<IdAllowList>();
    if (list == nullptr) throw nb::type_error("shoal.Filter: this ids() filter cannot be pickled");
    std::string bytes(list->set->size() * sizeof(uint64_t), '\0');
    size_t at = 0;
    for (uint64_t id : *list->set) {
      std::memcpy(bytes.data() + at, &id, sizeof(id));
      at += sizeof(id);
    }
    ids = nb::bytes(bytes.data(), bytes.size());
  }
  nb::list children;
  for (const Filter& c : f.children) children.append(NodeState(c));
  return nb::make_tuple(static_cast<int>(f.kind), nb::tuple(labels), f.attribute, f.lower,
                        f.upper, f.upper_bounded, ids, nb::tuple(children));
}

[[noreturn]] void BadState(const char* why) {
  throw nb::value_error(absl::StrCat("shoal.Filter: bad pickled state: ", why).c_str());
}

Filter NodeFromState(nb::handle h, size_t depth) {
  // The engine checks the limits (kMaxFilterDepth, ...) when a search
  // starts; this bound only keeps a hostile state from exhausting the stack.
  if (depth > kMaxFilterDepth + 1) BadState("nested too deeply");
  nb::tuple t;
  if (!nb::try_cast(h, t) || t.size() != 8) BadState("a node is not an 8-tuple");
  Filter f;
  const int kind = nb::cast<int>(t[0]);
  if (kind < static_cast<int>(Filter::Kind::kAnyLabel) ||
      kind > static_cast<int>(Filter::Kind::kOr)) {
    BadState("unknown kind");
  }
  f.kind = static_cast<Filter::Kind>(kind);
  for (nb::handle label : t[1]) f.labels.push_back(ToU32(label, "label"));
  f.attribute = nb::cast<std::string>(t[2]);
  f.lower = nb::cast<int64_t>(t[3]);
  f.upper = nb::cast<int64_t>(t[4]);
  f.upper_bounded = nb::cast<bool>(t[5]);
  if (f.kind == Filter::Kind::kIds) {
    nb::bytes bytes;
    if (!nb::try_cast(t[6], bytes) || bytes.size() % sizeof(uint64_t) != 0) {
      BadState("ids are not bytes of uint64");
    }
    auto set = std::make_shared<absl::flat_hash_set<uint64_t>>();
    set->reserve(bytes.size() / sizeof(uint64_t));
    for (size_t at = 0; at < bytes.size(); at += sizeof(uint64_t)) {
      uint64_t id;
      std::memcpy(&id, bytes.c_str() + at, sizeof(id));
      set->insert(id);
    }
    f.ids = IdAllowList{std::move(set)};
  }
  for (nb::handle c : t[7]) f.children.push_back(NodeFromState(c, depth + 1));
  return f;
}

// a & b (or a | b): one node with the children of both sides that are
// already of that kind, so chains stay flat.
PyFilter Combine(Filter::Kind kind, const PyFilter& a, const PyFilter& b) {
  std::vector<Filter> children;
  for (const PyFilter* side : {&a, &b}) {
    if (side->filter.kind == kind) {
      children.insert(children.end(), side->filter.children.begin(), side->filter.children.end());
    } else {
      children.push_back(side->filter);
    }
  }
  return Make(kind == Filter::Kind::kAnd ? Filter::And(std::move(children))
                                         : Filter::Or(std::move(children)));
}

std::string Repr(const Filter& f) {
  switch (f.kind) {
    case Filter::Kind::kAnyLabel:
      return absl::StrCat("any_label([", absl::StrJoin(f.labels, ", "), "])");
    case Filter::Kind::kAllLabels:
      return absl::StrCat("all_labels([", absl::StrJoin(f.labels, ", "), "])");
    case Filter::Kind::kNoLabel:
      return absl::StrCat("no_label([", absl::StrJoin(f.labels, ", "), "])");
    case Filter::Kind::kRange:
      if (f.upper_bounded) {
        return absl::StrCat("range('", f.attribute, "', ", f.lower, ", ", f.upper, ")");
      }
      return absl::StrCat("at_least('", f.attribute, "', ", f.lower, ")");
    case Filter::Kind::kIds:
      return "ids(...)";
    case Filter::Kind::kAnd:
    case Filter::Kind::kOr: {
      std::vector<std::string> parts;
      for (const Filter& c : f.children) parts.push_back(Repr(c));
      return absl::StrCat("(", absl::StrJoin(parts, f.kind == Filter::Kind::kAnd ? " & " : " | "),
                          ")");
    }
  }
  return "Filter";
}

}  // namespace

const Filter* FilterArg(nb::handle h) {
  if (h.is_none()) return nullptr;
  PyFilter* f = nullptr;
  if (!nb::try_cast(h, f, /*convert=*/false) || f == nullptr) {
    throw nb::type_error(
        absl::StrCat("filter must be a shoal.Filter (shoal.any_label(...), ...), got ",
                     nb::type_name(h.type()).c_str())
            .c_str());
  }
  return &f->filter;
}

void BindFilter(nb::module_& m) {
  nb::class_<PyFilter>(m, "Filter",
                       "A predicate on records that a search honours exactly: only records that "
                       "match it are returned. Made by any_label, all_labels, no_label, range, "
                       "at_least, below and ids; combined with & (and) and | (or).")
      .def("__and__", [](const PyFilter& a, const PyFilter& b) {
        return Combine(Filter::Kind::kAnd, a, b);
      }, nb::is_operator())
      .def("__or__", [](const PyFilter& a, const PyFilter& b) {
        return Combine(Filter::Kind::kOr, a, b);
      }, nb::is_operator())
      .def("__repr__", [](const PyFilter& f) { return "shoal." + Repr(f.filter); })
      .def("__getstate__",
           [](const PyFilter& f) { return nb::make_tuple(kStateVersion, NodeState(f.filter)); })
      .def("__setstate__", [](PyFilter& self, nb::tuple state) {
        if (state.size() != 2 || !nb::isinstance<nb::int_>(state[0]) ||
            nb::cast<int>(state[0]) != kStateVersion) {
          BadState("not a version-1 state (pickled by another shoal version?)");
        }
        new (&self) PyFilter{NodeFromState(state[1], 1)};
      });

  m.def("any_label", [](nb::handle labels) { return Make(Filter::AnyLabel(Labels(labels))); },
        "labels"_a, "Records with at least one of `labels` (uint32 values).");
  m.def("all_labels", [](nb::handle labels) { return Make(Filter::AllLabels(Labels(labels))); },
        "labels"_a, "Records with every one of `labels`.");
  m.def("no_label", [](nb::handle labels) { return Make(Filter::NoLabel(Labels(labels))); },
        "labels"_a, "Records with none of `labels`.");
  m.def("range",
        [](std::string attribute, nb::handle lower, nb::handle upper) {
          return Make(Filter::Range(std::move(attribute), ToI64(lower, "lower"),
                                    ToI64(upper, "upper")));
        },
        "attribute"_a, "lower"_a, "upper"_a,
        "Records whose int64 `attribute` has a value v with lower <= v < upper (records "
        "without the attribute do not match).");
  m.def("at_least",
        [](std::string attribute, nb::handle lower) {
          return Make(Filter::AtLeast(std::move(attribute), ToI64(lower, "lower")));
        },
        "attribute"_a, "lower"_a, "Records whose `attribute` is >= lower.");
  m.def("below",
        [](std::string attribute, nb::handle upper) {
          return Make(Filter::Below(std::move(attribute), ToI64(upper, "upper")));
        },
        "attribute"_a, "upper"_a, "Records whose `attribute` is < upper.");
  m.def("ids",
        [](nb::handle allowed) {
          IdArray ids = ToIds(allowed, "ids");
          auto set = std::make_shared<absl::flat_hash_set<uint64_t>>(ids.data(),
                                                                     ids.data() + ids.shape(0));
          return Make(Filter::Ids(IdAllowList{std::move(set)}));
        },
        "allowed"_a,
        "Records whose id is in `allowed` (integers; copied into a hash set). The engine "
        "cannot count these before searching, so combine it with label or range conditions "
        "where you can: `shoal.any_label([t]) & shoal.ids(allowed)`.");
}

}  // namespace shoal::python

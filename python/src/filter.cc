// Copyright 2026 The shoal Authors.

#include "filter.h"

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
      .def("__repr__", [](const PyFilter& f) { return "shoal." + Repr(f.filter); });

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
          return Make(Filter::Ids([set](uint64_t id) { return set->contains(id); }));
        },
        "allowed"_a,
        "Records whose id is in `allowed` (integers; copied into a hash set). The engine "
        "cannot count these before searching, so combine it with label or range conditions "
        "where you can: `shoal.any_label([t]) & shoal.ids(allowed)`.");
}

}  // namespace shoal::python

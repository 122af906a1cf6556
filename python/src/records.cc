// Copyright 2026 The shoal Authors.

#include "records.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nanobind/stl/string.h"
#include "absl/strings/str_join.h"
#include "arrays.h"
#include "nanobind/ndarray.h"
#include "status.h"

namespace nb = nanobind;

namespace shoal::python {
namespace {

std::string Declared(const CollectionRef& c) {
  return c.options.attributes.empty()
             ? std::string("none")
             : absl::StrCat("'", absl::StrJoin(c.options.attributes, "', '"), "'");
}

uint32_t AttributeIndexOrThrow(const CollectionRef& c, nb::handle name, const std::string& where) {
  if (!nb::isinstance<nb::str>(name)) {
    throw nb::type_error(absl::StrCat(where, ": attribute names must be str").c_str());
  }
  const std::string attribute = nb::cast<std::string>(name);
  std::optional<uint32_t> index = c.AttributeIndex(attribute);
  if (!index) {
    ThrowInvalid(absl::StrCat(where, ": unknown attribute '", attribute, "' (collection '",
                              c.name, "' declares ", Declared(c), ")"));
  }
  return *index;
}

// The n items of a per-record argument (a sequence of exactly n).
nb::sequence Items(nb::handle h, size_t n, const std::string& what) {
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h) || nb::isinstance<nb::bytes>(h)) {
    throw nb::type_error(absl::StrCat(what, " must be a sequence of one item per record").c_str());
  }
  const size_t size = nb::len(h);
  if (size != n) ThrowInvalid(absl::StrCat(what, " has ", size, " items for ", n, " records"));
  return nb::borrow<nb::sequence>(h);
}

}  // namespace

RecordBatch::RecordBatch(const CollectionRef& c, std::span<const uint64_t> ids,
                         const float* rows, nb::handle labels, nb::handle attributes,
                         nb::handle payloads) {
  const size_t n = ids.size(), dim = c.options.dim;
  records_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    records_[i].id = ids[i];
    records_[i].vector = {rows + i * dim, dim};
  }
  if (!labels.is_none()) {
    labels_.resize(n);
    nb::sequence items = Items(labels, n, "labels");
    for (size_t i = 0; i < n; ++i) SetLabels(i, items[i]);
  }
  if (!attributes.is_none()) {
    attributes_.resize(n);
    if (nb::isinstance<nb::dict>(attributes)) {
      // name -> n values (None: absent from that record).
      for (auto [name, values] : nb::borrow<nb::dict>(attributes)) {
        const uint32_t index = AttributeIndexOrThrow(c, name, "attributes");
        nb::sequence items = Items(values, n, absl::StrCat("attributes['", nb::cast<std::string>(name), "']"));
        for (size_t i = 0; i < n; ++i) {
          nb::object v = items[i];
          if (v.is_none()) continue;
          attributes_[i].push_back({index, ToI64(v, absl::StrCat("attributes of record ", i))});
        }
      }
    } else {
      nb::sequence items = Items(attributes, n, "attributes");
      for (size_t i = 0; i < n; ++i) {
        nb::object d = items[i];
        if (d.is_none()) continue;
        if (!nb::isinstance<nb::dict>(d)) {
          throw nb::type_error(
              absl::StrCat("attributes of record ", i, " must be a dict of name -> int").c_str());
        }
        for (auto [name, value] : nb::borrow<nb::dict>(d)) {
          const std::string where = absl::StrCat("attributes of record ", i);
          attributes_[i].push_back(
              {AttributeIndexOrThrow(c, name, where), ToI64(value, where)});
        }
      }
    }
    for (size_t i = 0; i < n; ++i) records_[i].attributes = attributes_[i];
  }
  if (!payloads.is_none()) {
    nb::sequence items = Items(payloads, n, "payloads");
    keep_.reserve(n);
    for (size_t i = 0; i < n; ++i) SetPayload(i, items[i]);
  }
}

void RecordBatch::SetLabels(size_t i, nb::handle labels) {
  if (labels.is_none()) return;
  std::vector<uint32_t>& out = labels_[i];
  const std::string what = absl::StrCat("labels of record ", i);
  if (nb::isinstance<nb::str>(labels) || !PyIter_Check(nb::iter(labels).ptr())) {
    throw nb::type_error(absl::StrCat(what, " must be an iterable of ints").c_str());
  }
  for (nb::handle label : labels) out.push_back(ToU32(label, what));
  records_[i].labels = out;
}

void RecordBatch::SetPayload(size_t i, nb::handle payload) {
  if (payload.is_none()) return;
  char* data = nullptr;
  Py_ssize_t size = 0;
  nb::object held;
  if (PyBytes_Check(payload.ptr())) {
    held = nb::borrow(payload);
    PyBytes_AsStringAndSize(held.ptr(), &data, &size);
  } else if (PyUnicode_Check(payload.ptr())) {
    held = nb::borrow(payload);
    const char* utf8 = PyUnicode_AsUTF8AndSize(held.ptr(), &size);
    if (utf8 == nullptr) throw nb::python_error();
    data = const_cast<char*>(utf8);
  } else if (PyObject_CheckBuffer(payload.ptr())) {  // bytearray, memoryview: copied once
    held = nb::steal(PyBytes_FromObject(payload.ptr()));
    if (!held.is_valid()) throw nb::python_error();
    PyBytes_AsStringAndSize(held.ptr(), &data, &size);
  } else {
    throw nb::type_error(
        absl::StrCat("payload of record ", i, " must be bytes or str, got ",
                     nb::type_name(payload.type()).c_str())
            .c_str());
  }
  records_[i].payload = std::string_view(data, static_cast<size_t>(size));
  keep_.push_back(std::move(held));
}

nb::object RecordToPython(const CollectionRef& c, RecordData&& data, bool with_vector) {
  nb::dict attributes;
  for (const AttributeValue& a : data.attributes) {
    const std::string& name = a.attribute < c.options.attributes.size()
                                  ? c.options.attributes[a.attribute]
                                  : absl::StrCat("#", a.attribute);
    attributes[nb::str(name.c_str())] = a.value;
  }
  nb::list labels;
  for (uint32_t label : data.labels) labels.append(label);
  const size_t dim = data.vector.size();
  nb::object vector = with_vector ? NewArray(std::move(data.vector), dim, 0) : nb::none();
  nb::bytes payload(data.payload.data(), data.payload.size());
  nb::module_ shoal = nb::module_::import_("shoal");
  return shoal.attr("Record")(data.id, vector, labels, attributes, payload);
}

}  // namespace shoal::python

// Copyright 2026 The shoal Authors.
//
// shoal._shoal: the extension module. The Python package (python/shoal)
// re-exports it with the pure-Python parts (Record, SearchResults).

#include <cstdint>
#include <limits>

#include "filter.h"
#include "nanobind/nanobind.h"
#include "status.h"

namespace shoal::python {
void BindDb(nanobind::module_& m);
void BindSegmentWriter(nanobind::module_& m);
}  // namespace shoal::python

NB_MODULE(_shoal, m) {
  m.doc() = "shoal: a sharded, durable, embedded vector database (the C++ core).";
  m.attr("NO_ID") = std::numeric_limits<uint64_t>::max();
  shoal::python::RegisterErrors(m);
  shoal::python::BindFilter(m);
  shoal::python::BindDb(m);
  shoal::python::BindSegmentWriter(m);
}

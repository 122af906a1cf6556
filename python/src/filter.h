// Copyright 2026 The shoal Authors.
//
// shoal.Filter: the engine's Filter (shoal/filter.h) as a Python value,
// made by shoal.any_label(...), shoal.range(...) and the rest, combined with
// & and |. The id predicate is an allow-list of ids held in C++: a Python
// callable asked per id would take the GIL inside every search (the trap
// hnswlib's filter falls into), so there is none. A Filter pickles (its
// tree, an allow-list as its ids), so it crosses to other processes: Ray
// actors, multiprocessing.

#ifndef SHOAL_PYTHON_SRC_FILTER_H_
#define SHOAL_PYTHON_SRC_FILTER_H_

#include "nanobind/nanobind.h"
#include "shoal/filter.h"

namespace shoal::python {

struct PyFilter {
  Filter filter;
};

// Adds Filter and its makers to `m`.
void BindFilter(nanobind::module_& m);

// The filter argument of a search: None or a Filter.
const Filter* FilterArg(nanobind::handle h);

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_FILTER_H_

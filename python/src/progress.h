// Copyright 2026 The shoal Authors.
//
// The `progress` argument of long calls (bulk_load, compact) as the
// engine's ProgressFn: None or False (none), True (a line on stderr, as
// usearch's add shows), or a callable progress(done, total), called with
// the GIL held. The first exception the callable raises is kept in *error
// (the call goes on; the binding raises it once the call has returned).

#ifndef SHOAL_PYTHON_SRC_PROGRESS_H_
#define SHOAL_PYTHON_SRC_PROGRESS_H_

#include <exception>

#include "nanobind/nanobind.h"
#include "shoal/options.h"

namespace shoal::python {

ProgressFn ToProgress(nanobind::handle progress, const char* call, const char* units,
                      std::exception_ptr* error);

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_PROGRESS_H_

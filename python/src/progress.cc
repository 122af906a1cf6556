// Copyright 2026 The shoal Authors.

#include "progress.h"

#include <cstdio>

namespace nb = nanobind;

namespace shoal::python {

ProgressFn ToProgress(nb::handle progress, const char* call, const char* units,
                      std::exception_ptr* error) {
  if (progress.is_none() || progress.ptr() == Py_False) return {};
  if (progress.ptr() == Py_True) {
    return [call, units](uint64_t done, uint64_t total) {
      std::fprintf(stderr, "\rshoal: %s %5.1f%% (%llu of %llu %s)%s", call,
                   total == 0 ? 100.0 : 100.0 * static_cast<double>(done) / total,
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                   units, done == total ? "\n" : "");
      std::fflush(stderr);
    };
  }
  if (!PyCallable_Check(progress.ptr())) {
    throw nb::type_error("progress must be None, True or a callable progress(done, total)");
  }
  // The callable is the caller's argument, alive until the call returns.
  return [fn = progress.ptr(), error](uint64_t done, uint64_t total) {
    nb::gil_scoped_acquire acquire;
    if (*error) return;  // one error is enough
    try {
      nb::handle callable(fn);
      callable(done, total);
    } catch (...) {
      *error = std::current_exception();
    }
  };
}

}  // namespace shoal::python

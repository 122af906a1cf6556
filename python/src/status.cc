// Copyright 2026 The shoal Authors.

#include "status.h"

#include <exception>

namespace nb = nanobind;

namespace shoal::python {
namespace {

// The classes, made once when the module is imported and kept for the
// life of the interpreter (a module's exceptions are never unloaded).
struct ErrorClasses {
  PyObject* error = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* not_found = nullptr;
  PyObject* already_exists = nullptr;
  PyObject* failed_precondition = nullptr;
  PyObject* data_loss = nullptr;
  PyObject* resource_exhausted = nullptr;
  PyObject* permission_denied = nullptr;
  PyObject* storage = nullptr;
};
ErrorClasses classes;

PyObject* MakeClass(nb::module_& m, const char* name, PyObject* builtin, const char* doc) {
  PyObject* bases = builtin == nullptr ? PyTuple_Pack(1, classes.error)
                                       : PyTuple_Pack(2, classes.error, builtin);
  if (bases == nullptr) throw nb::python_error();
  const std::string qualified = std::string("shoal.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (cls == nullptr) throw nb::python_error();
  m.attr(name) = nb::borrow(cls);
  return cls;
}

PyObject* ClassFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return classes.invalid_argument;
    case absl::StatusCode::kNotFound:
      return classes.not_found;
    case absl::StatusCode::kAlreadyExists:
      return classes.already_exists;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return classes.failed_precondition;
    case absl::StatusCode::kDataLoss:
      return classes.data_loss;
    case absl::StatusCode::kResourceExhausted:
      return classes.resource_exhausted;
    case absl::StatusCode::kPermissionDenied:
      return classes.permission_denied;
    case absl::StatusCode::kUnimplemented:
      return PyExc_NotImplementedError;
    default:  // Internal, Unavailable, Unknown, ...: an I/O error or worse
      return classes.storage;
  }
}

}  // namespace

void RegisterErrors(nb::module_& m) {
  classes.error = PyErr_NewExceptionWithDoc(
      "shoal.Error", "Base class of every error shoal raises.", PyExc_Exception, nullptr);
  if (classes.error == nullptr) throw nb::python_error();
  m.attr("Error") = nb::borrow(classes.error);
  classes.invalid_argument = MakeClass(
      m, "InvalidArgumentError", PyExc_ValueError,
      "Bad input (a wrong shape, a NaN, an unknown attribute, ...): nothing was changed.");
  classes.not_found = MakeClass(m, "NotFoundError", PyExc_KeyError,
                                "An id, collection or database that does not exist.");
  classes.already_exists = MakeClass(m, "AlreadyExistsError", PyExc_ValueError,
                                     "A collection or database that exists already.");
  classes.failed_precondition = MakeClass(
      m, "FailedPreconditionError", nullptr,
      "The call cannot run in this state: a closed database, or one another process holds.");
  classes.data_loss = MakeClass(m, "DataLossError", nullptr,
                                "A damaged file; the message names the file and offset.");
  classes.resource_exhausted = MakeClass(m, "ResourceExhaustedError", PyExc_OSError,
                                         "A full disk, or memory or threads refused.");
  classes.permission_denied = MakeClass(m, "PermissionDeniedError", PyExc_PermissionError,
                                        "The operating system refused access to a file.");
  classes.storage = MakeClass(m, "StorageError", PyExc_OSError,
                              "An I/O error, or another failure of the storage.");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      PyErr_SetString(ClassFor(e.code()), e.what());
    }
  });
}

}  // namespace shoal::python

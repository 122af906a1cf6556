// Copyright 2026 The shoal Authors.
//
// The engine's absl::Status as Python exceptions. A binding call that gets a
// non-OK status throws StatusError; the translator registered by
// RegisterErrors turns it into the shoal exception for its code (the
// classes are made here, so that each can have a built-in base too:
// InvalidArgumentError is a ValueError, NotFoundError a KeyError, ...).

#ifndef SHOAL_PYTHON_SRC_STATUS_H_
#define SHOAL_PYTHON_SRC_STATUS_H_

#include <stdexcept>
#include <string>

#include "absl/status/status.h"
#include "nanobind/nanobind.h"

namespace shoal::python {

class StatusError : public std::runtime_error {
 public:
  explicit StatusError(const absl::Status& status)
      : std::runtime_error(std::string(status.message())), code_(status.code()) {}
  absl::StatusCode code() const { return code_; }

 private:
  absl::StatusCode code_;
};

// Throws StatusError unless `status` is OK.
inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw StatusError(status);
}
// Throws shoal.InvalidArgumentError (a ValueError) with `message`.
[[noreturn]] inline void ThrowInvalid(std::string message) {
  throw StatusError(absl::InvalidArgumentError(std::move(message)));
}

// Adds Error and its subclasses to `m` and registers the translator.
void RegisterErrors(nanobind::module_& m);

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_STATUS_H_

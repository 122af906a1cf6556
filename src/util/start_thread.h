// Copyright 2026 The shoal Authors.
//
// Starting a thread without an exception: std::thread's constructor throws
// std::system_error when the system refuses a thread (a process or user
// thread limit, no memory for its stack). The engine reports that as
// ResourceExhaustedError instead.

#ifndef SHOAL_SRC_UTIL_START_THREAD_H_
#define SHOAL_SRC_UTIL_START_THREAD_H_

#include <functional>
#include <system_error>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace shoal {

// Starts `body` on a new thread in *thread. ResourceExhaustedError (and
// *thread left empty) when the system refuses.
[[nodiscard]] inline absl::Status StartThread(std::thread* thread, std::function<void()> body) {
  try {
    *thread = std::thread(std::move(body));
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the system refused to start a thread: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_START_THREAD_H_

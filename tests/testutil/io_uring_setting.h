// Copyright 2026 The shoal Authors.
//
// IoUringSetting: sets whether ReadQueues may use io_uring
// (util/uring_read_queue.h) for the scope of a test, then restores it.

#ifndef SHOAL_TESTS_TESTUTIL_IO_URING_SETTING_H_
#define SHOAL_TESTS_TESTUTIL_IO_URING_SETTING_H_

#include "util/uring_read_queue.h"

namespace shoal::test {

class IoUringSetting {
 public:
  explicit IoUringSetting(bool enabled) : was_(IoUringEnabled()) { SetIoUringEnabled(enabled); }
  ~IoUringSetting() { SetIoUringEnabled(was_); }
  IoUringSetting(const IoUringSetting&) = delete;
  IoUringSetting& operator=(const IoUringSetting&) = delete;

 private:
  const bool was_;
};

}  // namespace shoal::test

#endif  // SHOAL_TESTS_TESTUTIL_IO_URING_SETTING_H_

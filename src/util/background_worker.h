// Copyright 2026 The shoal Authors.
//
// One background thread that runs scheduled closures in order. The write path
// uses it to fault in log space and arena memory ahead of the writers, so
// that the writers' stores rarely take a page fault (on machines where first
// touching memory is slow, this is most of the cost of a write).
//
// Thread-safe. The destructor runs what is queued, then joins.

#ifndef SHOAL_SRC_UTIL_BACKGROUND_WORKER_H_
#define SHOAL_SRC_UTIL_BACKGROUND_WORKER_H_

#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"

#include "util/mutex.h"

namespace shoal {

class BackgroundWorker {
 public:
  // ResourceExhaustedError when the system refuses the thread.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BackgroundWorker>> Create();
  // As Create, but aborts the process when the system refuses the thread.
  BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;
  ~BackgroundWorker();

  // Queues `task` to run on the background thread. Tasks must not block on
  // anything that waits for the caller.
  void Schedule(std::function<void()> task);

 private:
  struct NoThread {};
  explicit BackgroundWorker(NoThread) {}
  void Loop();

  Mutex mu_;
  CondVar ready_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_BACKGROUND_WORKER_H_

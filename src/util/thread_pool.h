// Copyright 2026 The shoal Authors.
//
// A fixed pool of worker threads for parallel work inside one call: batch
// writes split by shard, recovery of every shard, search fan-out.
// Thread-safe. The destructor finishes queued work and joins the threads.

#ifndef SHOAL_SRC_UTIL_THREAD_POOL_H_
#define SHOAL_SRC_UTIL_THREAD_POOL_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"

namespace shoal {

class ThreadPool {
 public:
  // `threads` workers; 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(size_t threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  size_t size() const { return workers_.size(); }

  // Runs fn(0) .. fn(n-1), spread over the workers and the calling thread;
  // returns when all have finished. fn must be safe to call concurrently.
  // Safe to call from inside a task (the caller helps instead of waiting idle).
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

 private:
  void WorkerLoop();
  // Runs one queued task if there is one. REQUIRES: mu_ not held.
  bool RunOne();

  Mutex mu_;
  CondVar work_ready_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_THREAD_POOL_H_

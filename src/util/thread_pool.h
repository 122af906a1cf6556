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
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/mutex.h"

namespace shoal {

class ThreadPool {
 public:
  // A pool of `threads` workers (0 means std::thread::hardware_concurrency()).
  // ResourceExhaustedError when the system refuses one of them.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ThreadPool>> Create(size_t threads);
  // As Create, but a pool the system refuses some threads keeps those it got
  // (with none, ParallelFor runs everything on the calling thread).
  explicit ThreadPool(size_t threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  size_t size() const { return workers_.size(); }

  // Runs fn(0) .. fn(n-1), spread over the workers and the calling thread;
  // returns when all have finished. fn must be safe to call concurrently.
  // Safe to call from inside a task (the caller helps instead of waiting idle).
  // When fn throws (std::bad_alloc), the indices not yet started are skipped
  // and the first exception is rethrown on the calling thread, once every
  // running call has returned.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);
  // As ParallelFor, except that while the last of its indices run on other
  // threads the caller only waits: it never runs other queued work, so its
  // latency does not depend on what else the pool holds (a graph build
  // queues chunks that run for seconds). For a short fn that never waits on
  // this pool itself (a search's shards); nested calls must use ParallelFor.
  void ParallelForWithoutHelping(size_t n, const std::function<void(size_t)>& fn);
  // Queues `task` to run on a worker and returns at once: work nobody waits
  // for (a segment's label graphs). Scheduled tasks run in the order
  // queued, each once a worker finds no ParallelFor work queued; a waiting
  // ParallelFor caller never runs one (it may take seconds, and the caller
  // may be a writer). The destructor runs those still queued. A pool
  // without workers runs `task` here, before returning.
  void Schedule(std::function<void()> task);

 private:
  ThreadPool() = default;
  // Starts `threads` workers; stops at the first the system refuses.
  absl::Status StartWorkers(size_t threads);
  void WorkerLoop();
  // Runs one queued task if there is one. REQUIRES: mu_ not held.
  bool RunOne();
  // ParallelFor and ParallelForWithoutHelping: `help` runs queued tasks
  // while waiting.
  void Run(size_t n, const std::function<void(size_t)>& fn, bool help);

  Mutex mu_;
  CondVar work_ready_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);      // ParallelFor's
  std::deque<std::function<void()>> scheduled_ ABSL_GUARDED_BY(mu_);  // Schedule's
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_THREAD_POOL_H_

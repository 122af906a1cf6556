// Copyright 2026 The shoal Authors.

#include "util/thread_pool.h"

#include <atomic>
#include <memory>

namespace shoal {

ThreadPool::ThreadPool(size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::WorkerLoop() {
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ThreadPool* p) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return p->stopping_ || !p->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, and nothing left to do
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

bool ThreadPool::RunOne() {
  std::function<void()> task;
  {
    absl::MutexLock lock(&mu_);
    if (queue_.empty()) return false;
    task = std::move(queue_.front());
    queue_.pop_front();
  }
  task();
  return true;
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (n == 1) {
    fn(0);
    return;
  }
  // Tasks claim indices from a shared counter, so a slow index never leaves
  // other threads idle; the caller claims indices too.
  struct State {
    std::atomic<size_t> next{0};
    absl::Mutex mu;
    size_t done = 0;  // guarded by mu
  };
  auto state = std::make_shared<State>();
  auto work = [state, n, &fn] {
    size_t finished = 0;
    for (size_t i; (i = state->next.fetch_add(1)) < n; ++finished) fn(i);
    if (finished > 0) {
      absl::MutexLock lock(&state->mu);
      state->done += finished;
    }
  };
  const size_t helpers = std::min(n - 1, workers_.size());
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < helpers; ++i) queue_.emplace_back(work);
  }
  work();
  // Help with other queued work (e.g. a nested ParallelFor) while waiting.
  struct Done {
    State* state;
    size_t n;
  } done{state.get(), n};
  const absl::Condition all_done(
      +[](Done* d) ABSL_NO_THREAD_SAFETY_ANALYSIS { return d->state->done == d->n; },
      &done);
  while (true) {
    {
      absl::MutexLock lock(&state->mu);
      if (state->done == n) return;
    }
    if (!RunOne()) {
      absl::MutexLock lock(&state->mu);
      state->mu.AwaitWithTimeout(all_done, absl::Milliseconds(1));
    }
  }
}

}  // namespace shoal

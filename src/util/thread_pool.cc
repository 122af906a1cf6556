// Copyright 2026 The shoal Authors.

#include "util/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

namespace shoal {

ThreadPool::ThreadPool(size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_ready_.SignalAll();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::WorkerLoop() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) work_ready_.Wait(&mu_);
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
    MutexLock lock(&mu_);
    if (queue_.empty()) return false;
    task = std::move(queue_.front());
    queue_.pop_front();
  }
  task();
  return true;
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (n == 1 || workers_.empty()) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Tasks claim indices from a shared counter, so a slow index never leaves
  // other threads idle; the caller claims indices too.
  struct State {
    std::atomic<size_t> next{0};
    Mutex mu;
    CondVar finished;
    size_t done ABSL_GUARDED_BY(mu) = 0;
  };
  auto state = std::make_shared<State>();
  // Helpers hold `state` (not the caller's frame) until they return; they only
  // touch `fn` for indices < n, all of which finish before ParallelFor does.
  auto work = [state, n, &fn] {
    size_t finished = 0;
    for (size_t i; (i = state->next.fetch_add(1)) < n; ++finished) fn(i);
    if (finished > 0) {
      MutexLock lock(&state->mu);
      state->done += finished;
      if (state->done == n) state->finished.SignalAll();
    }
  };
  const size_t helpers = std::min(n - 1, workers_.size());
  {
    MutexLock lock(&mu_);
    for (size_t i = 0; i < helpers; ++i) queue_.emplace_back(work);
  }
  work_ready_.SignalAll();
  work();
  // Help with other queued work (e.g. a nested ParallelFor) while waiting.
  while (true) {
    {
      MutexLock lock(&state->mu);
      if (state->done == n) return;
    }
    if (!RunOne()) {
      MutexLock lock(&state->mu);
      if (state->done != n) state->finished.WaitFor(&state->mu, std::chrono::milliseconds(1));
    }
  }
}

}  // namespace shoal

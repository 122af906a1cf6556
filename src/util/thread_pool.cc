// Copyright 2026 The shoal Authors.

#include "util/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>

#include "util/start_thread.h"
#include "util/status_macros.h"

namespace shoal {

absl::StatusOr<std::unique_ptr<ThreadPool>> ThreadPool::Create(size_t threads) {
  std::unique_ptr<ThreadPool> pool(new ThreadPool());
  absl::Status s = pool->StartWorkers(threads);
  if (!s.ok()) return s;  // the destructor joins those started
  return pool;
}

ThreadPool::ThreadPool(size_t threads) { (void)StartWorkers(threads); }

absl::Status ThreadPool::StartWorkers(size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    std::thread t;
    SHOAL_RETURN_IF_ERROR(StartThread(&t, [this] { WorkerLoop(); }));
    workers_.push_back(std::move(t));
  }
  return absl::OkStatus();
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
      while (!stopping_ && queue_.empty() && scheduled_.empty()) work_ready_.Wait(&mu_);
      // A call's work first: its caller is waiting for it.
      std::deque<std::function<void()>>& from = !queue_.empty() ? queue_ : scheduled_;
      if (from.empty()) return;  // stopping, and nothing left to do
      task = std::move(from.front());
      from.pop_front();
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

void ThreadPool::Schedule(std::function<void()> task) {
  if (workers_.empty()) {
    task();
    return;
  }
  {
    MutexLock lock(&mu_);
    scheduled_.push_back(std::move(task));
  }
  work_ready_.Signal();
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  Run(n, fn, /*help=*/true);
}

void ThreadPool::ParallelForWithoutHelping(size_t n, const std::function<void(size_t)>& fn) {
  Run(n, fn, /*help=*/false);
}

void ThreadPool::Run(size_t n, const std::function<void(size_t)>& fn, bool help) {
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
    std::exception_ptr error ABSL_GUARDED_BY(mu);  // the first fn threw
  };
  auto state = std::make_shared<State>();
  // Helpers hold `state` (not the caller's frame) until they return; they only
  // touch `fn` for indices < n, all of which finish before ParallelFor does.
  // An index whose fn threw counts as done, and so does every index not yet
  // claimed then (claimed here, to skip it).
  auto work = [state, n, &fn] {
    size_t finished = 0;
    std::exception_ptr error;
    for (size_t i; (i = state->next.fetch_add(1)) < n; ++finished) {
      try {
        fn(i);
      } catch (...) {
        error = std::current_exception();
        ++finished;
        finished += n - std::min(n, state->next.exchange(n));
        break;
      }
    }
    if (finished > 0) {
      MutexLock lock(&state->mu);
      if (error && !state->error) state->error = error;
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
  // With `help`, run other queued work (e.g. a nested ParallelFor) while
  // waiting.
  while (true) {
    {
      MutexLock lock(&state->mu);
      if (state->done == n) {
        if (state->error) std::rethrow_exception(state->error);
        return;
      }
    }
    if (!help || !RunOne()) {
      MutexLock lock(&state->mu);
      if (state->done != n) state->finished.WaitFor(&state->mu, std::chrono::milliseconds(1));
    }
  }
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.

#include "util/background_worker.h"

#include "util/start_thread.h"

namespace shoal {

absl::StatusOr<std::unique_ptr<BackgroundWorker>> BackgroundWorker::Create() {
  std::unique_ptr<BackgroundWorker> worker(new BackgroundWorker(NoThread{}));
  absl::Status s = StartThread(&worker->thread_, [w = worker.get()] { w->Loop(); });
  if (!s.ok()) return s;
  return worker;
}

BackgroundWorker::BackgroundWorker() : thread_([this] { Loop(); }) {}

BackgroundWorker::~BackgroundWorker() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  ready_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void BackgroundWorker::Schedule(std::function<void()> task) {
  {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(task));
  }
  ready_.Signal();
}

void BackgroundWorker::Loop() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) ready_.Wait(&mu_);
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace shoal

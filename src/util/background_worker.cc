// Copyright 2026 The shoal Authors.

#include "util/background_worker.h"

namespace shoal {

BackgroundWorker::BackgroundWorker() : thread_([this] { Loop(); }) {}

BackgroundWorker::~BackgroundWorker() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  ready_.SignalAll();
  thread_.join();
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

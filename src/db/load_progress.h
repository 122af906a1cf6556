// Copyright 2026 The shoal Authors.
//
// BulkLoadOptions::progress while a load runs: a thread of its own wakes
// every 200 ms and reports the nodes the graph builds have placed (a
// counter they add to) when it has grown; Finish reports the whole load
// once it has succeeded. The callback never runs twice at once, and never
// on a builder's thread (a slow callback does not slow the build).

#ifndef SHOAL_SRC_DB_LOAD_PROGRESS_H_
#define SHOAL_SRC_DB_LOAD_PROGRESS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

namespace shoal {

class LoadProgress {
 public:
  using Fn = std::function<void(uint64_t done, uint64_t total)>;

  // Starts reporting `*placed` of `total` (nothing when `fn` is empty).
  LoadProgress(const Fn& fn, const std::atomic<uint64_t>* placed, uint64_t total)
      : fn_(fn), placed_(placed), total_(total) {
    if (!fn_) return;
    try {
      thread_ = std::thread([this] { Run(); });
    } catch (const std::system_error&) {
      // No thread to spare: the load goes on, reporting only its end.
    }
  }
  LoadProgress(const LoadProgress&) = delete;
  LoadProgress& operator=(const LoadProgress&) = delete;
  ~LoadProgress() { Stop(); }

  // The load succeeded: stops the reports and gives the last, done == total.
  void Finish() {
    Stop();
    if (fn_) fn_(total_, total_);
  }

 private:
  void Run() {
    uint64_t reported = 0;
    std::unique_lock lock(mu_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(200));
      if (stop_) break;
      const uint64_t done = std::min(placed_->load(std::memory_order_relaxed), total_);
      if (done > reported && done < total_) {
        reported = done;
        fn_(done, total_);
      }
    }
  }
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  const Fn& fn_;
  const std::atomic<uint64_t>* const placed_;
  const uint64_t total_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_DB_LOAD_PROGRESS_H_

// Copyright 2026 The shoal Authors.
//
// A progress bar on stderr for work that may last more than a second.
//
// Nothing is drawn for the first second, so quick steps stay silent; after
// that a background thread redraws one line ("\r[label] [#####-----] 45%
// 3.1 s, ~3.8 s left") four times a second, until Done() erases it. The bar
// is drawn only when stderr is a terminal, so logs get the phase summaries
// alone. With total 0 (unknown) it shows the elapsed time only.
//
// Thread-safe: Add() may be called from any number of worker threads.

#ifndef SHOAL_BENCH_COMMON_PROGRESS_H_
#define SHOAL_BENCH_COMMON_PROGRESS_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace shoal_bench {

class Progress {
 public:
  // `total` units of work; 0 when unknown.
  Progress(std::string label, size_t total);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { Done(); }

  void Add(size_t units) { done_.fetch_add(units, std::memory_order_relaxed); }
  // Stops the redraws and erases the bar. Idempotent.
  void Done();

  // Off for the whole process (--progress=false).
  static void Disable();

 private:
  void Run();
  void Draw(double seconds) const;

  const std::string label_;
  const size_t total_;
  std::atomic<size_t> done_{0};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  bool drawn_ = false;  // written only by the drawing thread, read after join
  std::thread thread_;
};

// Prints `line` and a newline on stderr, first erasing any bar on the
// terminal line (the bar comes back at its next redraw).
void StatusLine(const std::string& line);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_PROGRESS_H_

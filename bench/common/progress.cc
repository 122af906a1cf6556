// Copyright 2026 The shoal Authors.

#include "common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr auto kQuietPeriod = std::chrono::seconds(1);
constexpr auto kRedrawPeriod = std::chrono::milliseconds(250);
constexpr int kBarWidth = 30;

std::atomic<bool> g_disabled{false};
// Serializes writes to the terminal; g_bar_shown says the cursor sits at the
// end of a drawn bar.
std::mutex g_term_mu;
bool g_bar_shown = false;

}  // namespace

void StatusLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_term_mu);
  fmt::print(stderr, "{}{}\n", g_bar_shown ? "\r\033[K" : "", line);
  g_bar_shown = false;
  std::fflush(stderr);
}

void Progress::Disable() { g_disabled = true; }

Progress::Progress(std::string label, size_t total) : label_(std::move(label)), total_(total) {
  if (g_disabled || !::isatty(STDERR_FILENO)) return;
  thread_ = std::thread([this] { Run(); });
}

void Progress::Done() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (!thread_.joinable()) return;
  thread_.join();
  if (drawn_) {
    std::lock_guard<std::mutex> term(g_term_mu);
    if (g_bar_shown) fmt::print(stderr, "\r\033[K");
    g_bar_shown = false;
    std::fflush(stderr);
  }
}

void Progress::Run() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_cv_.wait_for(lock, kQuietPeriod, [this] { return stop_; })) return;
  do {
    Draw(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    drawn_ = true;
  } while (!stop_cv_.wait_for(lock, kRedrawPeriod, [this] { return stop_; }));
}

void Progress::Draw(double seconds) const {
  std::lock_guard<std::mutex> term(g_term_mu);
  g_bar_shown = true;
  if (total_ == 0) {
    fmt::print(stderr, "\r\033[K[{}] {:.1f} s", label_, seconds);
  } else {
    const double frac = std::min(1.0, static_cast<double>(done_.load()) / total_);
    const int filled = static_cast<int>(frac * kBarWidth);
    const std::string bar = std::string(filled, '#') + std::string(kBarWidth - filled, '-');
    const std::string eta =
        frac > 0.02 ? fmt::format(", ~{:.0f} s left", seconds * (1 - frac) / frac) : "";
    fmt::print(stderr, "\r\033[K[{}] [{}] {:3.0f}% {:.1f} s{}", label_, bar, 100 * frac,
               seconds, eta);
  }
  std::fflush(stderr);
}

}  // namespace shoal_bench

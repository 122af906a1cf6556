// Copyright 2026 The shoal Authors.

#include "comprehensive/machine_limits.h"

#include <cstring>
#include <latch>
#include <memory>
#include <thread>

#include "common/bench_util.h"
#include "common/brute_force.h"
#include "common/ground_truth.h"
#include "common/progress.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

// Per thread: far larger than any cache, small enough for many threads.
constexpr size_t kCopyBytes = 128 << 20;
constexpr int kCopies = 4;

// `threads` threads each memcpy their own kCopyBytes kCopies times, all
// starting together; returns GB/s copied in total (bytes read = bytes written).
double CopyRate(uint32_t threads) {
  std::vector<std::unique_ptr<char[]>> src(threads), dst(threads);
  for (uint32_t t = 0; t < threads; ++t) {
    src[t].reset(new char[kCopyBytes]);
    dst[t].reset(new char[kCopyBytes]);
    std::memset(src[t].get(), 1 + t, kCopyBytes);  // fault every page in first
    std::memset(dst[t].get(), 0, kCopyBytes);
  }
  std::latch go(threads + 1);
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      go.arrive_and_wait();
      for (int i = 0; i < kCopies; ++i) std::memcpy(dst[t].get(), src[t].get(), kCopyBytes);
    });
  }
  go.arrive_and_wait();
  const Stopwatch sw;
  for (std::thread& th : pool) th.join();
  return static_cast<double>(kCopyBytes) * kCopies * threads / sw.Seconds() / 1e9;
}

}  // namespace

void MeasureMemcpy(uint32_t threads, LimitsFigures* figures) {
  figures->threads = ResolveThreads(threads);
  figures->memcpy_bytes = kCopyBytes;
  figures->memcpy_1_gbps = CopyRate(1);
  figures->memcpy_all_gbps = CopyRate(figures->threads);
  StatusLine(fmt::format("[limits] memcpy of {} MiB buffers: {:.1f} GB/s on 1 thread, "
                         "{:.1f} GB/s on {}", kCopyBytes >> 20, figures->memcpy_1_gbps,
                         figures->memcpy_all_gbps, figures->threads));
}

void MeasureBruteForce(const Dataset& data, shoal::Metric metric, uint32_t k,
                       uint32_t threads, const std::vector<std::vector<uint64_t>>& truth,
                       LimitsFigures* figures) {
  const MatrixView base{data.base.data(), data.size(), data.dim()};
  const MatrixView queries{data.queries.data(), data.num_queries(), data.dim()};
  std::vector<std::vector<Candidate>> found;
  {
    Progress progress("brute force", queries.rows);
    const Stopwatch sw;
    found = ExactKnnFloat(base, queries, metric, k, threads, &progress);
    figures->brute_force_seconds = sw.Seconds();
  }
  figures->brute_force_queries = queries.rows;
  std::vector<std::vector<uint64_t>> ids(found.size());
  for (size_t q = 0; q < found.size(); ++q) {
    for (const Candidate& c : found[q]) ids[q].push_back(data.ids[c.row]);
  }
  figures->brute_force_recall = RecallAtK(truth, ids, k);
  StatusLine(fmt::format("[limits] exact brute force ({}): {} queries in {:.3f} s, {:.0f} QPS "
                         "on {} threads, recall {:.4f}", BruteForceKernelName(),
                         queries.rows, figures->brute_force_seconds,
                         figures->BruteForceQps(), ResolveThreads(threads),
                         figures->brute_force_recall));
}

}  // namespace shoal_bench

// Copyright 2026 The shoal Authors.

#include "comprehensive/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/bench_util.h"
#include "common/ground_truth.h"
#include "common/progress.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr size_t kWarmupQueries = 20;
// Before an index's first sweep point: queries for this long (or every query
// once). 20 queries were not enough: right after a build the first point
// measured at half the QPS of the same list size measured later in the
// sweep (medium, shoal: list_size 20 12.4K first, 22.3K last), whichever
// list size came first.
constexpr double kFirstWarmupSeconds = 0.5;

// Nearest-rank percentile of sorted `v`.
double Percentile(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * v.size()));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

void MeasureSingle(AnnIndex& index, const Dataset& data,
                   const std::vector<std::vector<uint64_t>>& truth,
                   const SweepSettings& s, Progress& progress, SweepPoint& p) {
  std::vector<uint64_t> ids;
  for (size_t q = 0; q < std::min(kWarmupQueries, data.num_queries()); ++q) {
    CheckOk(index.Search(data.Query(q).data(), s.k, &ids), index.Name() + " Search (warm-up)");
  }
  std::vector<std::vector<uint64_t>> answers;
  std::vector<double> us;
  const int64_t distances_before = index.DistanceComputations();
  const Stopwatch sw;
  for (size_t q = 0; q < data.num_queries() && sw.Seconds() < s.budget_s; ++q) {
    const auto t0 = std::chrono::steady_clock::now();
    CheckOk(index.Search(data.Query(q).data(), s.k, &ids), index.Name() + " Search");
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - t0).count());
    answers.push_back(ids);
    progress.Add(1);
  }
  p.single_seconds = sw.Seconds();
  p.single_queries = answers.size();
  if (distances_before >= 0 && !answers.empty()) {
    p.distances_per_query =
        static_cast<double>(index.DistanceComputations() - distances_before) / answers.size();
  }
  p.single_recall = RecallAtK(truth, answers, s.k);
  p.latency = Latencies(std::move(us));
}

void MeasureBatch(AnnIndex& index, const Dataset& data,
                  const std::vector<std::vector<uint64_t>>& truth,
                  const SweepSettings& s, SweepPoint& p) {
  std::vector<std::vector<uint64_t>> answers;
  const Stopwatch sw;
  CheckOk(index.SearchBatch(data.queries, s.k, s.threads, &answers),
          index.Name() + " SearchBatch");
  p.batch_seconds = sw.Seconds();
  p.batch_queries = answers.size();
  if (answers.size() != data.num_queries()) {
    Die(index.Name() + " SearchBatch",
        absl::InternalError(fmt::format("{} answers for {} queries", answers.size(),
                                        data.num_queries())));
  }
  p.batch_recall = RecallAtK(truth, answers, s.k);
}

}  // namespace

LatencyFigures Latencies(std::vector<double> us) {
  LatencyFigures f;
  if (us.empty()) return f;
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double x : us) sum += x;
  f.mean = sum / us.size();
  f.p50 = Percentile(us, 0.50);
  f.p95 = Percentile(us, 0.95);
  f.p99 = Percentile(us, 0.99);
  f.p999 = Percentile(us, 0.999);
  return f;
}

std::vector<SweepPoint> RunSweep(AnnIndex& index, const Dataset& data,
                                 const std::vector<std::vector<uint64_t>>& truth,
                                 const SweepSettings& settings) {
  const std::vector<uint32_t> knobs =
      settings.knobs.empty() ? index.DefaultSweep() : settings.knobs;
  std::vector<SweepPoint> points;
  Progress progress(fmt::format("sweep {}", index.Name()), knobs.size() * data.num_queries());
  if (!knobs.empty()) {
    index.SetKnob(knobs.front());
    std::vector<uint64_t> ids;
    const Stopwatch sw;
    for (size_t q = 0; q < data.num_queries() && sw.Seconds() < kFirstWarmupSeconds; ++q) {
      CheckOk(index.Search(data.Query(q).data(), settings.k, &ids),
              index.Name() + " Search (warm-up)");
    }
  }
  for (const uint32_t knob : knobs) {
    index.SetKnob(knob);
    SweepPoint p;
    p.knob = knob;
    MeasureSingle(index, data, truth, settings, progress, p);
    MeasureBatch(index, data, truth, settings, p);
    progress.Add(data.num_queries() - p.single_queries);
    points.push_back(p);
    StatusLine(fmt::format(
               "[sweep]  {:<24} {}={:<4} recall {:.4f} {:>9.0f} QPS (p99 {:>7.0f} us) | "
               "batch recall {:.4f} {:>9.0f} QPS{}",
               index.Name(), index.KnobName(), knob, p.single_recall, p.SingleQps(),
               p.latency.p99, p.batch_recall, p.BatchQps(),
               p.distances_per_query >= 0
                   ? fmt::format(" | {:.0f} distances/query", p.distances_per_query)
                   : ""));
  }
  return points;
}

}  // namespace shoal_bench

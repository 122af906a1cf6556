// Copyright 2026 The shoal Authors.

#include "comprehensive/filter_sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/bench_util.h"
#include "common/progress.h"
#include "comprehensive/sweep.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr size_t kWarmupQueries = 20;
constexpr double kMaxWarmupSeconds = 30;
// A point's single-thread queries and its batches repeat until this long
// (within the budget): at low selectivity a pass over the queries can take
// well under a millisecond, less than one preemption on a shared machine.
constexpr double kMinSeconds = 0.2;

bool InBitmap(std::span<const uint8_t> bitmap, uint64_t id) {
  return id / 8 < bitmap.size() && ((bitmap[id / 8] >> (id % 8)) & 1) != 0;
}

// What the answers to the first answers.size() queries score.
struct Scored {
  double recall = 0;
  double short_share = 0;
  uint64_t violations = 0;
};

Scored Score(const FilterScenario& sc, const std::vector<std::vector<uint64_t>>& answers,
             uint32_t k) {
  Scored s;
  double recall_sum = 0;
  size_t scored = 0, with_k = 0, short_answers = 0;
  for (size_t q = 0; q < answers.size(); ++q) {
    const Predicate& p = sc.ForQuery(q);
    const std::vector<uint64_t>& want = sc.truth[q];
    const std::vector<uint64_t>& got = answers[q];
    for (const uint64_t id : got) s.violations += !InBitmap(p.bitmap, id);
    if (p.rows.size() >= k) {
      ++with_k;
      short_answers += got.size() < k;
    }
    if (want.empty()) continue;
    size_t hits = 0;
    for (size_t j = 0; j < std::min<size_t>(got.size(), k); ++j) {
      hits += std::find(want.begin(), want.end(), got[j]) != want.end();
    }
    recall_sum += static_cast<double>(hits) / static_cast<double>(want.size());
    ++scored;
  }
  s.recall = scored > 0 ? recall_sum / scored : 1.0;
  s.short_share = with_k > 0 ? static_cast<double>(short_answers) / with_k : 0;
  return s;
}

FilterPath PathOf(const shoal::SearchStats& st) {
  return {st.segments, st.filter_matches, st.filter_skipped,
          st.filter_scanned, st.filter_walked, st.filter_short_walks};
}

// The single-thread pass of one point; Unimplemented when the index cannot
// filter.
absl::Status MeasureSingle(AnnIndex& index, const Dataset& data, const FilterScenario& sc,
                           const std::vector<RowFilter>& filters, const FilterSweepSettings& s,
                           FilterPoint& p) {
  std::vector<uint64_t> ids;
  // Warm-up: for shoal, again until no walk waits for a label graph still
  // being built in the background (built once per label and segment, as a
  // peer's index is built before it is timed; at most kMaxWarmupSeconds).
  shoal::SearchStats warm;
  const Stopwatch warming;
  do {
    warm = shoal::SearchStats();
    if (s.set_stats) s.set_stats(&warm);
    for (size_t q = 0; q < std::min(kWarmupQueries, data.num_queries()); ++q) {
      absl::Status st = index.FilteredSearch(data.Query(q).data(), s.k, filters[q], &ids);
      if (!st.ok()) return st;
    }
  } while (s.set_stats && warm.filter_label_graph_pending > 0 &&
           warming.Seconds() < kMaxWarmupSeconds);
  shoal::SearchStats stats;
  if (s.set_stats) s.set_stats(&stats);
  // The first pass's answers are scored (and its stats kept); later passes
  // only time.
  std::vector<std::vector<uint64_t>> answers;
  std::vector<double> us;
  const double min_seconds = std::min(kMinSeconds, s.budget_s);
  const Stopwatch sw;
  for (size_t q = 0; sw.Seconds() < (q < data.num_queries() ? s.budget_s : min_seconds); ++q) {
    if (q == data.num_queries() && s.set_stats) s.set_stats(nullptr);
    const size_t row = q % data.num_queries();
    const auto t0 = std::chrono::steady_clock::now();
    CheckOk(index.FilteredSearch(data.Query(row).data(), s.k, filters[row], &ids),
            index.Name() + " FilteredSearch");
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - t0).count());
    if (q < data.num_queries()) answers.push_back(ids);
  }
  p.sweep.single_seconds = sw.Seconds();
  if (s.set_stats) s.set_stats(nullptr);
  p.sweep.single_queries = us.size();
  p.sweep.latency = Latencies(std::move(us));
  const Scored scored = Score(sc, answers, s.k);
  p.sweep.single_recall = scored.recall;
  p.short_share = scored.short_share;
  p.violations = scored.violations;
  p.path = PathOf(stats);
  return absl::OkStatus();
}

void MeasureBatch(AnnIndex& index, const Dataset& data, const FilterScenario& sc,
                  const std::vector<RowFilter>& filters, const FilterSweepSettings& s,
                  FilterPoint& p) {
  std::vector<std::vector<uint64_t>> answers, again;
  const Stopwatch sw;
  CheckOk(index.FilteredSearchBatch(data.queries, s.k, s.threads, filters, &answers),
          index.Name() + " FilteredSearchBatch");
  if (answers.size() != data.num_queries()) {
    Die(index.Name() + " FilteredSearchBatch",
        absl::InternalError(fmt::format("{} answers for {} queries", answers.size(),
                                        data.num_queries())));
  }
  p.sweep.batch_queries = answers.size();
  while (sw.Seconds() < std::min(kMinSeconds, s.budget_s)) {  // the first batch's answers count
    CheckOk(index.FilteredSearchBatch(data.queries, s.k, s.threads, filters, &again),
            index.Name() + " FilteredSearchBatch");
    p.sweep.batch_queries += again.size();
  }
  p.sweep.batch_seconds = sw.Seconds();
  const Scored scored = Score(sc, answers, s.k);
  p.sweep.batch_recall = scored.recall;
  p.violations += scored.violations;
}

}  // namespace

FilterRun RunFilterSweep(AnnIndex& index, const Dataset& data, const FilterScenario& sc,
                         const FilterSweepSettings& s) {
  FilterRun run;
  run.index = index.Name();
  run.knob = index.KnobName();
  std::vector<RowFilter> filters;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    const Predicate& p = sc.ForQuery(q);
    filters.push_back({&p.filter, p.bitmap, p.rows});
  }
  const std::vector<uint32_t> knobs = s.knobs.empty() ? index.DefaultSweep() : s.knobs;
  Progress progress(fmt::format("filter {} {}", sc.name, index.Name()), knobs.size());
  for (const uint32_t knob : knobs) {
    index.SetKnob(knob);
    FilterPoint p;
    p.sweep.knob = knob;
    absl::Status st = MeasureSingle(index, data, sc, filters, s, p);
    if (absl::IsUnimplemented(st)) {
      run.note = std::string(st.message());
      return run;
    }
    CheckOk(st, index.Name() + " FilteredSearch (warm-up)");
    MeasureBatch(index, data, sc, filters, s, p);
    progress.Add(1);
    StatusLine(fmt::format(
        "[filter] {:<14} {:<22} {}={:<4} recall {:.4f} {:>8.0f} QPS (p99 {:>6.0f} us) short "
        "{:.3f} | batch recall {:.4f} {:>8.0f} QPS{}",
        sc.name, index.Name(), run.knob, knob, p.sweep.single_recall, p.sweep.SingleQps(),
        p.sweep.latency.p99, p.short_share, p.sweep.batch_recall, p.sweep.BatchQps(),
        p.violations > 0 ? fmt::format(" | {} answers FAIL the filter", p.violations) : ""));
    run.points.push_back(p);
    if (p.sweep.single_recall >= s.stop_recall) break;
  }
  return run;
}

}  // namespace shoal_bench

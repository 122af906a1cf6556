// Copyright 2026 The shoal Authors.
//
// Tables and JSON for the filter phase (filter_phase.cc): per scenario, each
// index's sweep with recall, QPS, p99, short answers, answers failing the
// predicate and shoal's path mix; then the headline, QPS at the cheapest
// point reaching kFilterRecall, and shoal's ratios to hnswlib's and to
// faiss Flat's (the exact filtered search a faiss user runs).

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "common/json_writer.h"
#include "comprehensive/report/report.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The peer the headline ratio is against (the first hnswlib otherwise).
constexpr std::string_view kHeadlinePeer = "hnswlib M=16";
// The exact peer of the second ratio.
constexpr std::string_view kFlatPeer = "faiss Flat";
// Narrowest index-name column of the tables.
constexpr size_t kNameWidth = 22;

double Recall(const FilterPoint& p, bool batch) {
  return batch ? p.sweep.batch_recall : p.sweep.single_recall;
}
double Qps(const FilterPoint& p, bool batch) {
  return batch ? p.sweep.BatchQps() : p.sweep.SingleQps();
}
double BestQps(const FilterRun& run, bool batch) {
  const FilterPoint* p = BestFilterPoint(run, batch);
  return p != nullptr ? Qps(*p, batch) : kNaN;
}

const FilterRun* FindRun(const FilterScenarioFigures& s, std::string_view prefix) {
  for (const FilterRun& run : s.runs) {
    if (run.index.starts_with(prefix)) return &run;
  }
  return nullptr;
}

const FilterRun* HnswlibRun(const FilterScenarioFigures& s) {
  const FilterRun* run = FindRun(s, kHeadlinePeer);
  return run != nullptr && !run->points.empty() ? run : FindRun(s, "hnswlib");
}

// shoal's QPS at kFilterRecall / `peer`'s; NaN when either is missing or
// misses it.
double RatioTo(const FilterScenarioFigures& s, const FilterRun* peer, bool batch) {
  const FilterRun* shoal = FindRun(s, "shoal");
  if (shoal == nullptr || peer == nullptr) return kNaN;
  const double a = BestQps(*shoal, batch), b = BestQps(*peer, batch);
  return std::isfinite(a) && std::isfinite(b) && b > 0 ? a / b : kNaN;
}
double RatioToHnswlib(const FilterScenarioFigures& s, bool batch) {
  return RatioTo(s, HnswlibRun(s), batch);
}
double RatioToFlat(const FilterScenarioFigures& s, bool batch) {
  return RatioTo(s, FindRun(s, kFlatPeer), batch);
}

// "single / batch" ratios, "n/a" for either that is NaN.
std::string RatioCell(double single, double batch) {
  auto text = [](double r) { return std::isfinite(r) ? fmt::format("{:.2f}", r) : "n/a"; };
  return text(single) + " / " + text(batch);
}

size_t NameWidth(const FilterScenarioFigures& s) {
  size_t width = kNameWidth;
  for (const FilterRun& run : s.runs) width = std::max(width, run.index.size());
  return width;
}

std::string Share(uint64_t part, uint64_t whole) {
  return whole > 0 ? fmt::format("{:.0f}", 100.0 * part / whole) : "-";
}

// "skip/scan/walk % short%": shares of segment searches, and of walks that
// came back short; "-" when the engine counted nothing.
std::string PathText(const FilterPath& p) {
  if (p.Planned() == 0) return "-";
  return fmt::format("{}/{}/{} {}", Share(p.skipped, p.Planned()), Share(p.scanned, p.Planned()),
                     Share(p.walked, p.Planned()), Share(p.short_walks, p.walked));
}

std::string Cell(double qps) {
  return std::isfinite(qps) ? fmt::format("{:.0f}", qps) : "n/a";
}

void PrintScenario(const FilterScenarioFigures& s, uint32_t k) {
  fmt::print("Filter {}: selectivity {:.5f}{}, {} queries ({} match >= {} rows), {} "
             "predicate(s)\n", s.name, s.selectivity,
             s.target > 0 ? fmt::format(" (asked {:g})", s.target) : "", s.queries,
             s.queries_with_k, k, s.predicates);
  const size_t w = NameWidth(s);
  fmt::print("  {:<{}} {:>10} {:>8} {:>9} {:>8} {:>6} | {:>8} {:>9} | {:>5} {:<14}\n", "index",
             w, "knob", "recall", "QPS", "p99 us", "short", "b recall", "batch QPS", "fail",
             "path s/s/w sh");
  for (const FilterRun& run : s.runs) {
    if (run.points.empty()) {
      fmt::print("  {:<{}} {}\n", run.index, w, run.note.empty() ? "no points" : run.note);
      continue;
    }
    for (const FilterPoint& p : run.points) {
      fmt::print("  {:<{}} {:>10} {:>8.4f} {:>9.0f} {:>8.0f} {:>6.3f} | {:>8.4f} {:>9.0f} | "
                 "{:>5} {:<14}\n", run.index, w, fmt::format("{}={}", run.knob, p.sweep.knob),
                 p.sweep.single_recall, p.sweep.SingleQps(), p.sweep.latency.p99,
                 p.short_share, p.sweep.batch_recall, p.sweep.BatchQps(), p.violations,
                 PathText(p.path));
    }
  }
  fmt::print("\n");
}

void PrintHeadline(const FilterFigures& f) {
  if (f.scenarios.empty() || f.scenarios[0].runs.empty()) return;
  fmt::print("Filtered search: QPS at the cheapest point reaching recall@k >= {:.2f} "
             "(single / batch; n/a: never reached)\n", kFilterRecall);
  // Every scenario has the same runs, in the same order (filter_phase.cc).
  const std::vector<FilterRun>& columns = f.scenarios[0].runs;
  auto width = [](const FilterRun& run) { return std::max<size_t>(19, run.index.size()); };
  fmt::print("  {:<14} {:>9}", "scenario", "select.");
  for (const FilterRun& run : columns) fmt::print(" {:>{}}", run.index, width(run));
  fmt::print(" {:>13} {:>16}\n", "shoal/hnswlib", "shoal/faiss Flat");
  for (const FilterScenarioFigures& s : f.scenarios) {
    fmt::print("  {:<14} {:>9.5f}", s.name, s.selectivity);
    for (const FilterRun& run : s.runs) {
      fmt::print(" {:>{}}", Cell(BestQps(run, false)) + " / " + Cell(BestQps(run, true)),
                 width(run));
    }
    fmt::print(" {:>13} {:>16}\n", RatioCell(RatioToHnswlib(s, false), RatioToHnswlib(s, true)),
               RatioCell(RatioToFlat(s, false), RatioToFlat(s, true)));
  }
  fmt::print("  path s/s/w sh: shoal's segment searches skipped/scanned/walked (%), and the walks "
             "that came back short (%); fail: answers failing the predicate\n\n");
}

void PointToJson(const FilterPoint& p, JsonWriter& w) {
  w.BeginObject();
  w.Field("knob", p.sweep.knob);
  w.Field("single_queries", uint64_t{p.sweep.single_queries});
  w.Field("single_qps", p.sweep.SingleQps());
  w.Field("single_recall", p.sweep.single_recall);
  w.Field("p50_us", p.sweep.latency.p50);
  w.Field("p99_us", p.sweep.latency.p99);
  w.Field("batch_queries", uint64_t{p.sweep.batch_queries});
  w.Field("batch_qps", p.sweep.BatchQps());
  w.Field("batch_recall", p.sweep.batch_recall);
  w.Field("short_share", p.short_share);
  w.Field("violations", p.violations);
  w.Key("path");
  w.BeginObject();
  w.Field("segments", p.path.segments);
  w.Field("matches", p.path.matches);
  w.Field("skipped", p.path.skipped);
  w.Field("scanned", p.path.scanned);
  w.Field("walked", p.path.walked);
  w.Field("short_walks", p.path.short_walks);
  w.EndObject();
  w.EndObject();
}

void BestToJson(const FilterRun& run, bool batch, JsonWriter& w) {
  w.Key(batch ? "best_batch" : "best_single");
  const FilterPoint* p = BestFilterPoint(run, batch);
  if (p == nullptr) return w.Null();
  w.BeginObject();
  w.Field("knob", p->sweep.knob);
  w.Field("qps", Qps(*p, batch));
  w.Field("recall", Recall(*p, batch));
  w.EndObject();
}

void ScenarioToJson(const FilterScenarioFigures& s, JsonWriter& w) {
  w.BeginObject();
  w.Field("name", s.name);
  w.Field("family", s.family);
  w.Field("target_selectivity", s.target);
  w.Field("selectivity", s.selectivity);
  w.Field("queries", uint64_t{s.queries});
  w.Field("queries_with_k", uint64_t{s.queries_with_k});
  w.Field("predicates", uint64_t{s.predicates});
  w.Field("truth_seconds", s.truth_seconds);
  w.Field("shoal_vs_hnswlib_single", RatioToHnswlib(s, false));
  w.Field("shoal_vs_hnswlib_batch", RatioToHnswlib(s, true));
  w.Field("shoal_vs_faiss_flat_single", RatioToFlat(s, false));
  w.Field("shoal_vs_faiss_flat_batch", RatioToFlat(s, true));
  w.Key("runs");
  w.BeginArray();
  for (const FilterRun& run : s.runs) {
    w.BeginObject();
    w.Field("index", run.index);
    w.Field("knob", run.knob);
    w.Field("note", run.note);
    BestToJson(run, false, w);
    BestToJson(run, true, w);
    w.Key("points");
    w.BeginArray();
    for (const FilterPoint& p : run.points) PointToJson(p, w);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

const FilterPoint* BestFilterPoint(const FilterRun& run, bool batch) {
  const FilterPoint* best = nullptr;
  for (const FilterPoint& p : run.points) {
    if (Recall(p, batch) >= kFilterRecall && (best == nullptr || Qps(p, batch) > Qps(*best, batch))) {
      best = &p;
    }
  }
  return best;
}

void PrintFilter(const Report& r) {
  const FilterFigures& f = r.filter;
  if (!f.done) return;
  fmt::print("Filtered search (--phases filter; k={}; recall: of the exact k nearest matching "
             "rows; QPS: one search at a time on one thread; batch: all queries on {} threads; "
             "short: share of queries matching >= k rows answered with fewer)\n", r.config.k,
             f.builds.empty() ? 0 : f.builds[0].build.threads);
  for (const IndexRun& b : f.builds) {
    fmt::print("  built {:<24} {}: {} vectors in {:.2f} s\n", b.index, b.build.method,
               b.build.vectors, b.build.seconds);
  }
  for (const std::string& note : f.notes) fmt::print("  {}\n", note);
  fmt::print("  workload (tags, k-means, predicates, truth): {:.1f} s\n\n", f.workload_seconds);
  for (const FilterScenarioFigures& s : f.scenarios) PrintScenario(s, r.config.k);
  PrintHeadline(f);
}

void FilterToJson(const Report& r, JsonWriter& w) {
  const FilterFigures& f = r.filter;
  if (!f.done) return;
  w.Key("filter");
  w.BeginObject();
  w.Field("recall_level", kFilterRecall);
  w.Field("workload_seconds", f.workload_seconds);
  w.Key("builds");
  w.BeginArray();
  for (const IndexRun& b : f.builds) {
    w.BeginObject();
    w.Field("index", b.index);
    w.Field("params", b.params);
    w.Field("method", b.build.method);
    w.Field("seconds", b.build.seconds);
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.BeginArray();
  for (const std::string& note : f.notes) w.String(note);
  w.EndArray();
  w.Key("scenarios");
  w.BeginArray();
  for (const FilterScenarioFigures& s : f.scenarios) ScenarioToJson(s, w);
  w.EndArray();
  w.EndObject();
}

}  // namespace shoal_bench

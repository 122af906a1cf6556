// Copyright 2026 The shoal Authors.
//
// Tables and JSON for the segment figures: build, sweep, the peers and the
// machine's limits.

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/json_writer.h"
#include "comprehensive/report/report.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Num(double v, int decimals = 0) {
  if (!std::isfinite(v)) return "n/a";
  std::string digits = fmt::format("{:.{}f}", std::fabs(v), decimals);
  const size_t dot = std::min(digits.find('.'), digits.size());
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && i < dot && (dot - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string RatioText(double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : "n/a"; }

double Recall(const SweepPoint& p, bool batch) { return batch ? p.batch_recall : p.single_recall; }
double Qps(const SweepPoint& p, bool batch) { return batch ? p.BatchQps() : p.SingleQps(); }

// Points no other point beats on both recall and QPS, by ascending recall.
std::vector<const SweepPoint*> Frontier(const std::vector<SweepPoint>& points, bool batch) {
  std::vector<const SweepPoint*> sorted;
  for (const SweepPoint& p : points) {
    if ((batch ? p.batch_queries : p.single_queries) > 0) sorted.push_back(&p);
  }
  std::sort(sorted.begin(), sorted.end(), [&](const SweepPoint* a, const SweepPoint* b) {
    return Recall(*a, batch) != Recall(*b, batch) ? Recall(*a, batch) > Recall(*b, batch)
                                                  : Qps(*a, batch) > Qps(*b, batch);
  });
  std::vector<const SweepPoint*> frontier;  // built from the high-recall end
  double best_qps = -1;
  for (const SweepPoint* p : sorted) {
    if (Qps(*p, batch) > best_qps) {
      frontier.push_back(p);
      best_qps = Qps(*p, batch);
    }
  }
  std::reverse(frontier.begin(), frontier.end());
  return frontier;
}

const IndexRun* ShoalCurve(const Report& r) {
  return !r.graph.empty() && !r.graph[0].points.empty() ? &r.graph[0] : nullptr;
}

double BuildRate(const IndexRun& run) { return run.build.VectorsPerSecond(); }

void PrintBuildRow(const IndexRun& run) {
  const BuildFigures& b = run.build;
  const std::string ram = b.index_bytes < 0 || b.vectors == 0
                              ? "n/a"
                              : fmt::format("{:.0f}", static_cast<double>(b.index_bytes) /
                                                          static_cast<double>(b.vectors));
  fmt::print("{:<24} {:<30} {:>9} {:>9.2f} {:>11} {:>9} {}\n", run.index, b.method, b.vectors,
             b.seconds, Num(b.VectorsPerSecond()), ram,
             b.other_label.empty() ? "" : fmt::format("({} {:.2f} s)", b.other_label,
                                                      b.other_seconds));
}

void PrintBuildHeader() {
  fmt::print("{:<24} {:<30} {:>9} {:>9} {:>11} {:>9}\n", "index", "timed", "vectors", "seconds",
             "vectors/s", "RAM B/vec");
}

void PrintCurve(const IndexRun& run, uint32_t k, bool latency) {
  const std::string recall = fmt::format("recall@{}", k);
  fmt::print("{:>10} {:>10} {:>10}", run.knob, recall, "QPS");
  if (latency) {
    fmt::print(" {:>8} {:>8} {:>8} {:>8} {:>8}", "mean us", "p50", "p95", "p99", "p99.9");
  }
  fmt::print(" | {:>10} {:>10}\n", "batch " + recall.substr(0, 6), "batch QPS");
  for (const SweepPoint& p : run.points) {
    fmt::print("{:>10} {:>10.4f} {:>10}", p.knob, p.single_recall, Num(p.SingleQps()));
    if (latency) {
      const LatencyFigures& l = p.latency;
      fmt::print(" {:>8.0f} {:>8.0f} {:>8.0f} {:>8.0f} {:>8.0f}", l.mean, l.p50, l.p95, l.p99,
                 l.p999);
    }
    fmt::print(" | {:>10.4f} {:>10}\n", p.batch_recall, Num(p.BatchQps()));
  }
}

void PrintQpsAtRecall(const IndexRun& run, uint32_t k) {
  fmt::print("  QPS at recall@{} (interpolated):", k);
  for (const double level : kRecallLevels) {
    fmt::print("  {:.2f}: {} / {} batch", level, Num(QpsAtRecall(run.points, level, false)),
               Num(QpsAtRecall(run.points, level, true)));
  }
  fmt::print("\n");
}

void PointToJson(const SweepPoint& p, JsonWriter& w) {
  w.BeginObject();
  w.Field("knob", p.knob);
  w.Field("single_queries", uint64_t{p.single_queries});
  w.Field("single_seconds", p.single_seconds);
  w.Field("single_qps", p.SingleQps());
  w.Field("single_recall", p.single_recall);
  w.Key("latency_us");
  w.BeginObject();
  w.Field("mean", p.latency.mean);
  w.Field("p50", p.latency.p50);
  w.Field("p95", p.latency.p95);
  w.Field("p99", p.latency.p99);
  w.Field("p99.9", p.latency.p999);
  w.EndObject();
  if (p.distances_per_query >= 0) w.Field("distances_per_query", p.distances_per_query);
  w.Field("batch_queries", uint64_t{p.batch_queries});
  w.Field("batch_seconds", p.batch_seconds);
  w.Field("batch_qps", p.BatchQps());
  w.Field("batch_recall", p.batch_recall);
  w.EndObject();
}

void IndexRunToJson(const IndexRun& run, JsonWriter& w) {
  w.BeginObject();
  w.Field("index", run.index);
  w.Field("params", run.params);
  w.Field("knob", run.knob);
  w.Key("build");
  w.BeginObject();
  w.Field("method", run.build.method);
  w.Field("vectors", uint64_t{run.build.vectors});
  w.Field("threads", run.build.threads);
  w.Field("seconds", run.build.seconds);
  w.Field("vectors_per_s", run.build.VectorsPerSecond());
  w.Field("index_bytes", static_cast<double>(run.build.index_bytes));
  w.Field("other_label", run.build.other_label);
  w.Field("other_seconds", run.build.other_seconds);
  w.EndObject();
  w.Key("points");
  w.BeginArray();
  for (const SweepPoint& p : run.points) PointToJson(p, w);
  w.EndArray();
  w.Key("qps_at_recall");
  w.BeginArray();
  for (const double level : kRecallLevels) {
    w.BeginObject();
    w.Field("recall", level);
    w.Field("single_qps", QpsAtRecall(run.points, level, false));
    w.Field("batch_qps", QpsAtRecall(run.points, level, true));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

double Ratio(double a, double b) { return std::isfinite(a) && std::isfinite(b) && b > 0 ? a / b : kNaN; }

}  // namespace

double QpsAtRecall(const std::vector<SweepPoint>& points, double recall, bool batch) {
  const std::vector<const SweepPoint*> f = Frontier(points, batch);
  if (f.empty() || Recall(*f.back(), batch) < recall) return kNaN;
  size_t hi = 0;  // the first frontier point at or above `recall`
  while (Recall(*f[hi], batch) < recall) ++hi;
  if (hi == 0 || Recall(*f[hi], batch) == recall) return Qps(*f[hi], batch);
  const SweepPoint& a = *f[hi - 1];
  const SweepPoint& b = *f[hi];
  const double t = (recall - Recall(a, batch)) / (Recall(b, batch) - Recall(a, batch));
  return std::exp(std::log(Qps(a, batch)) + t * (std::log(Qps(b, batch)) - std::log(Qps(a, batch))));
}

std::vector<SweepPoint> PointsAroundRecall(const std::vector<SweepPoint>& points, double recall,
                                           bool batch) {
  const std::vector<const SweepPoint*> f = Frontier(points, batch);
  if (f.empty() || Recall(*f.back(), batch) < recall) return {};
  size_t hi = 0;
  while (Recall(*f[hi], batch) < recall) ++hi;
  if (hi == 0 || Recall(*f[hi], batch) == recall) return {*f[hi]};
  return {*f[hi - 1], *f[hi]};
}

void PrintGraph(const Report& r) {
  if (r.graph.empty()) return;
  const RunConfig& c = r.config;
  fmt::print("Segment build (graph R={} L={} alpha={}, code {}; shards {}, {} threads)\n",
             c.max_degree, c.build_list_size, c.alpha, c.code, c.shards == 0 ? "auto" : fmt::format("{}", c.shards),
             r.graph[0].build.threads);
  PrintBuildHeader();
  for (const IndexRun& run : r.graph) PrintBuildRow(run);
  fmt::print("\n");
  for (size_t i = 0; i < r.graph.size(); ++i) {
    const IndexRun& run = r.graph[i];
    if (run.points.empty()) continue;
    fmt::print("Search on segments after {} (k={}, beam_width={}; QPS: Search, one call at a "
               "time from one thread (shoal fans a call out over its shards); batch: one "
               "SearchBatch of all {} queries)\n", run.build.method, c.k, c.beam_width,
               c.num_queries);
    PrintCurve(run, c.k, true);
    if (run.points.size() > 1) PrintQpsAtRecall(run, c.k);
    fmt::print("\n");
  }
  const HeadToHead& h = r.stream_vs_bulk;
  if (!h.ratios.empty()) {
    fmt::print("Streamed vs BulkLoad, searched in turns at list_size {} ({} rounds of >= 1 s "
               "each): {} vs {} QPS (medians); ratio median {:.3f}, rounds", h.list_size,
               h.ratios.size(), Num(h.stream_qps), Num(h.bulk_qps), h.MedianRatio());
    for (double ratio : h.ratios) fmt::print(" {:.3f}", ratio);
    fmt::print("\n\n");
  }
}

void PrintCompare(const Report& r) {
  const IndexRun* shoal = ShoalCurve(r);
  if (r.peers.empty() && r.peer_notes.empty()) return;
  const RunConfig& c = r.config;
  fmt::print("Side by side on the same data ({} x {}, {}), {} threads for builds and batches\n",
             c.num_vectors, c.dim, c.metric, r.peers.empty() ? 0 : r.peers[0].build.threads);
  PrintBuildHeader();
  if (shoal != nullptr) PrintBuildRow(*shoal);
  for (const IndexRun& run : r.peers) PrintBuildRow(run);
  for (const std::string& note : r.peer_notes) fmt::print("  {}\n", note);
  fmt::print("\n");
  for (const IndexRun& run : r.peers) {
    fmt::print("{} ({})\n", run.index, run.params);
    PrintCurve(run, c.k, true);
    PrintQpsAtRecall(run, c.k);
    fmt::print("\n");
  }
  if (shoal == nullptr) return;
  fmt::print("shoal / peer (> 1: shoal is faster): build rate, and QPS at recall@{} "
             "(single = one call at a time, batch = all threads)\n", c.k);
  fmt::print("{:<24} {:>7}", "peer", "build");
  for (const char* mode : {"single", "batch"}) {
    for (const double level : kRecallLevels) fmt::print(" {:>12}", fmt::format("{} {:.2f}", mode, level));
  }
  fmt::print("\n");
  for (const IndexRun& run : r.peers) {
    fmt::print("{:<24} {:>7}", run.index, RatioText(Ratio(BuildRate(*shoal), BuildRate(run))));
    for (const bool batch : {false, true}) {
      for (const double level : kRecallLevels) {
        fmt::print(" {:>12}", RatioText(Ratio(QpsAtRecall(shoal->points, level, batch),
                                              QpsAtRecall(run.points, level, batch))));
      }
    }
    fmt::print("\n");
  }
  fmt::print("  n/a: a curve does not reach that recall\n\n");
  for (const QpsInTurns& t : r.qps_in_turns) {
    fmt::print("QPS at recall@{} {:.2f}, {}, searched in turns with {} ({} rounds): "
               "shoal {} / {} QPS (medians); ratio median {:.2f}, rounds", c.k, t.recall,
               t.batch ? "batch" : "single", t.peer, t.ratios.size(), Num(Median(t.shoal_qps)),
               Num(Median(t.peer_qps)), t.MedianRatio());
    for (double ratio : t.ratios) fmt::print(" {:.2f}", ratio);
    fmt::print("\n");
  }
  if (!r.qps_in_turns.empty()) fmt::print("\n");
}

void PrintLimits(const Report& r) {
  const LimitsFigures& l = r.limits;
  if (!l.done) return;
  fmt::print("Limits of this machine, same run\n");
  fmt::print("  memcpy ({} MiB buffers, already mapped): {:.1f} GB/s on 1 thread, {:.1f} GB/s "
             "on {} threads\n", l.memcpy_bytes >> 20, l.memcpy_1_gbps, l.memcpy_all_gbps,
             l.threads);
  fmt::print("  exact brute force ({} kernel, float): {} QPS on {} threads (recall@{} {:.4f})\n",
             r.config.brute_force_kernel, Num(l.BruteForceQps()), l.threads, r.config.k,
             l.brute_force_recall);
  fmt::print("  sequential write(): see the raw baseline table\n\n");
}

void GraphToJson(const Report& r, JsonWriter& w) {
  w.Key("segments");
  w.BeginArray();
  for (const IndexRun& run : r.graph) IndexRunToJson(run, w);
  w.EndArray();
  const HeadToHead& h = r.stream_vs_bulk;
  if (!h.ratios.empty()) {
    w.Key("stream_vs_bulk");
    w.BeginObject();
    w.Field("list_size", h.list_size);
    w.Field("bulk_qps", h.bulk_qps);
    w.Field("stream_qps", h.stream_qps);
    w.Field("median_ratio", h.MedianRatio());
    w.Field("ratios", h.ratios);
    w.EndObject();
  }
}

void CompareToJson(const Report& r, JsonWriter& w) {
  w.Key("peers");
  w.BeginArray();
  for (const IndexRun& run : r.peers) IndexRunToJson(run, w);
  w.EndArray();
  w.Key("peer_notes");
  w.BeginArray();
  for (const std::string& note : r.peer_notes) w.String(note);
  w.EndArray();
  w.Key("qps_in_turns");
  w.BeginArray();
  for (const QpsInTurns& t : r.qps_in_turns) {
    w.BeginObject();
    w.Field("peer", t.peer);
    w.Field("recall", t.recall);
    w.Field("mode", t.batch ? "batch" : "single");
    w.Field("median_ratio", t.MedianRatio());
    w.Field("ratios", t.ratios);
    w.Field("shoal_qps", t.shoal_qps);
    w.Field("peer_qps", t.peer_qps);
    w.EndObject();
  }
  w.EndArray();
  const IndexRun* shoal = ShoalCurve(r);
  w.Key("shoal_vs_peers");
  w.BeginArray();
  for (const IndexRun& run : r.peers) {
    if (shoal == nullptr) break;
    w.BeginObject();
    w.Field("peer", run.index);
    w.Field("build_rate_ratio", Ratio(BuildRate(*shoal), BuildRate(run)));
    for (const bool batch : {false, true}) {
      w.Key(batch ? "batch_qps_ratio_at_recall" : "single_qps_ratio_at_recall");
      w.BeginObject();
      for (const double level : kRecallLevels) {
        w.Field(fmt::format("{:.2f}", level), Ratio(QpsAtRecall(shoal->points, level, batch),
                                                   QpsAtRecall(run.points, level, batch)));
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
}

void LimitsToJson(const Report& r, JsonWriter& w) {
  const LimitsFigures& l = r.limits;
  w.Key("limits");
  if (!l.done) return w.Null();
  w.BeginObject();
  w.Field("threads", l.threads);
  w.Field("memcpy_buffer_bytes", uint64_t{l.memcpy_bytes});
  w.Field("memcpy_1_thread_gb_per_s", l.memcpy_1_gbps);
  w.Field("memcpy_all_threads_gb_per_s", l.memcpy_all_gbps);
  w.Field("brute_force_kernel", r.config.brute_force_kernel);
  w.Field("brute_force_queries", uint64_t{l.brute_force_queries});
  w.Field("brute_force_seconds", l.brute_force_seconds);
  w.Field("brute_force_qps", l.BruteForceQps());
  w.Field("brute_force_recall", l.brute_force_recall);
  w.EndObject();
}

}  // namespace shoal_bench

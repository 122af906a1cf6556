// Copyright 2026 The shoal Authors.

#include "comprehensive/report/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include "common/json_writer.h"
#include "fmt/core.h"

namespace shoal_bench {

double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double HeadToHead::MedianRatio() const { return Median(ratios); }
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A ratio the product owner set a goal for (or, with target NaN, one shown
// for information). value is NaN when a figure it needs was not measured.
struct Goal {
  std::string key;
  std::string text;
  double value;
  double target;
};

const IngestResult* FindIngest(const Report& r, std::string_view target,
                               std::string_view policy, size_t batch) {
  for (const IngestResult& x : r.ingest) {
    if (x.target == target && x.policy == policy && x.batch == batch) return &x;
  }
  return nullptr;
}

const RawWriteFigures* FindRaw(const Report& r, std::string_view target) {
  for (const RawWriteFigures& x : r.raw) {
    if (x.target == target) return &x;
  }
  return nullptr;
}

double Ratio(double num, double den) { return den > 0 ? num / den : kNaN; }

double BatchVsRaw(const Report& r, std::string_view target) {
  const IngestResult* batch = FindIngest(r, target, "never", 10000);
  const RawWriteFigures* raw = FindRaw(r, target);
  return batch && raw ? Ratio(batch->MBPerSecond(), raw->MBPerSecond()) : kNaN;
}

// Disk mode: goals on reads, RSS and against DiskANN, as ratios where >= 1
// (or 1.2) meets the goal.
void DiskGoals(const DiskFigures& d, std::vector<Goal>& goals) {
  const DiskPoint* few = FewestReadsAtRecall(d.sweep);
  const DiskPoint* fast = BestQpsAtRecall(d.sweep);
  goals.push_back({"disk_reads_goal_vs_fewest_reads_at_0.95",
                   fmt::format("Disk: {:.0f} / fewest reads/query at recall {:.2f} (<= {:.0f})",
                               kDiskReadsGoal, kDiskRecall, kDiskReadsGoal),
                   few != nullptr ? Ratio(kDiskReadsGoal, few->reads) : kNaN, 1.0});
  goals.push_back({"disk_rss_budget_vs_peak_rss",
                   "Disk: (10% of raw vectors + 64 MiB) / child's peak RSS",
                   Ratio(static_cast<double>(d.RssBudgetBytes()),
                         d.rss_after_search.hwm_kib * 1024),
                   1.0});
  const PeerDiskPoint* pfew = PeerFewestReadsAtRecall(d.peer);
  const PeerDiskPoint* pfast = PeerBestQpsAtRecall(d.peer);
  goals.push_back({"disk_diskann_reads_vs_shoal_reads_at_0.95",
                   fmt::format("Disk: DiskANN reads / shoal reads, recall {:.2f}", kDiskRecall),
                   few && pfew ? Ratio(pfew->reads, few->reads) : kNaN, 1.0});
  goals.push_back({"disk_shoal_qps_vs_diskann_qps_at_0.95",
                   fmt::format("Disk: shoal QPS / DiskANN QPS, 1 thread, recall {:.2f}",
                               kDiskRecall),
                   fast && pfast ? Ratio(fast->Qps(), pfast->qps) : kNaN, 1.2});
}

std::vector<Goal> Goals(const Report& r) {
  std::vector<Goal> goals;
  goals.push_back({"putbatch_never_10000_shm_vs_raw_write",
                   "PutBatch(never, 10000, shm) MB/s / raw write(shm) MB/s",
                   BatchVsRaw(r, "shm"), 0.6});
  const IngestResult* put = FindIngest(r, "shm", "never", 0);
  goals.push_back({"put_never_shm_vs_1m_per_s", "Put(never, shm), 1 thread, vec/s / 1,000,000",
                   put ? put->VectorsPerSecond() / 1e6 : kNaN, 1.2});
  double speedup = kNaN;
  if (!r.group_commit.speedups.empty()) {
    std::vector<double> sorted = r.group_commit.speedups;
    std::sort(sorted.begin(), sorted.end());
    speedup = sorted[sorted.size() / 2];
  }
  goals.push_back({"group_commit_speedup",
                   fmt::format("Group commit (always, {}): {} writers / 1 writer",
                               r.group_commit.target.empty() ? "disk" : r.group_commit.target,
                               r.config.writers),
                   speedup, 5.0});  // the median of the pairs' speedups
  goals.push_back({"putbatch_never_10000_disk_vs_raw_write",
                   "PutBatch(never, 10000, disk) MB/s / raw write(disk) MB/s",
                   BatchVsRaw(r, "disk"), kNaN});
  // On segments after BulkLoad: the default list_size, and the best of the sweep.
  double at_default = kNaN, best = kNaN;
  for (size_t i = r.graph.size(); i-- > 0;) {  // graph[0] (BulkLoad) decides when it has it
    for (const SweepPoint& p : r.graph[i].points) {
      if (p.knob == r.config.default_list_size) at_default = p.single_recall;
      if (i == 0) best = std::isnan(best) ? p.single_recall : std::max(best, p.single_recall);
    }
  }
  goals.push_back({"segment_recall_at_default_list_size",
                   fmt::format("recall@{} on segments, default list_size {}", r.config.k,
                               r.config.default_list_size),
                   at_default, 0.95});
  // Streamed ingest (graph[2]) against BulkLoad (graph[0]), at the default
  // list_size: search QPS, and the whole ingest's time (goal: <= 1.5x, so
  // BulkLoad's time / the stream's >= 1 / 1.5).
  // The QPS ratio is the head-to-head's median (the sweeps' single passes
  // over the queries are too short to compare).
  double stream_qps = kNaN, stream_time = kNaN;
  if (r.graph.size() >= 3) {
    if (!r.stream_vs_bulk.ratios.empty()) stream_qps = r.stream_vs_bulk.MedianRatio();
    stream_time = Ratio(r.graph[0].build.seconds, r.graph[2].build.seconds);
  }
  goals.push_back({"streamed_ingest_qps_vs_bulkload",
                   fmt::format("Streamed ingest / BulkLoad: Search QPS at list_size {} "
                               "(median of {} rounds in turns)",
                               r.config.default_list_size, r.stream_vs_bulk.ratios.size()),
                   stream_qps, 0.8});
  goals.push_back({"bulkload_time_vs_streamed_ingest_time",
                   "BulkLoad time / streamed ingest time (goal: stream <= 1.5x)", stream_time,
                   0.667});
  for (const ChurnRun& run : r.churn) {
    const std::string what = fmt::format("Churn ({} deletes, {} rounds)", run.deletes,
                                         run.rounds.size());
    goals.push_back({"churn_" + run.deletes + "_recall_minus_fresh",
                     what + ": recall@10 - fresh build's", run.final_recall - run.fresh_recall,
                     -0.01});
    goals.push_back({"churn_" + run.deletes + "_qps_vs_fresh",
                     what + ": QPS / fresh build's", run.MedianQpsRatio(), 0.8});
    goals.push_back({"churn_" + run.deletes + "_inverse_space_amplification",
                     what + ": 1 / space amplification (<= 1.5)",
                     1.0 / run.final_space_amplification, 0.667});
  }
  // The goal is against hnswlib M=16; the other peers' ratios are printed
  // for information.
  for (const BuildRounds& b : r.build_rounds) {
    std::string key = "build_rate_vs_";
    for (const char ch : b.peer) key += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    goals.push_back({key,
                     fmt::format("Build rate / {}'s, median of {} rounds in turns", b.peer,
                                 b.ratios.size()),
                     b.MedianRatio(), b.peer == "hnswlib M=16" ? 1.5 : kNaN});
  }
  for (const QpsInTurns& t : r.qps_in_turns) {
    std::string key = t.batch ? "batch_qps_in_turns_vs_" : "single_qps_in_turns_vs_";
    for (const char ch : t.peer) key += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    goals.push_back({key,
                     fmt::format("QPS at recall {:.2f} / {}'s, {}, median of {} rounds in turns",
                                 t.recall, t.peer, t.batch ? "batch" : "single", t.ratios.size()),
                     t.MedianRatio(), t.peer == "hnswlib M=16" ? 1.5 : kNaN});
  }
  if (r.disk.done) DiskGoals(r.disk, goals);
  goals.push_back({"segment_best_recall_of_sweep",
                   fmt::format("recall@{} on segments, best list_size of the sweep", r.config.k),
                   best, 0.98});
  return goals;
}

// 1234567.8 -> "1,234,568"
std::string Grouped(double v) {
  if (!std::isfinite(v)) return "n/a";
  std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string OrAuto(uint32_t v) { return v == 0 ? "auto" : fmt::format("{}", v); }

void PrintHeader(const RunConfig& c) {
  fmt::print("shoal comprehensive_bench\n");
  fmt::print("  dataset {}: {} x {} ({:.2f} MB){}, {} queries, {}, metric {}\n", c.dataset,
             c.num_vectors, c.dim, c.base_bytes / 1e6,
             c.num_clusters > 0 ? fmt::format(", {} clusters", c.num_clusters) : "",
             c.num_queries, c.source, c.metric);
  if (!c.ground_truth.empty()) fmt::print("  ground truth: {}\n", c.ground_truth);
  fmt::print("  {} hardware threads; shards {}, worker threads {}, memtable {:.0f} MiB/shard "
             "(no automatic flush), kInterval period {} us\n",
             c.hardware_threads, OrAuto(c.shards), OrAuto(c.threads),
             c.memtable_bytes / 1048576.0, c.sync_interval_us);
  fmt::print("  shm dir '{}', disk dir '{}' (write phases); search/build/sweep dir '{}'\n",
             c.shm_dir, c.disk_dir, c.graph_dir);
  fmt::print("  each write figure: median of >= {} runs on fresh databases (column 'runs'); "
             "a run stops after {:.1f} s\n", c.reps, c.time_budget_s);
  fmt::print("  MB = 10^6 bytes of vector payload (dim x 4 bytes per vector)\n\n");
}

void PrintIngest(const Report& r) {
  if (r.ingest.empty()) return;
  fmt::print("Ingestion (Open and Close not timed)\n");
  fmt::print("{:<5} {:<9} {:<15} {:>9} {:>9} {:>12} {:>9} {:>8} {:>4} {:>7} {:>7} {:>7}\n", "dir",
             "fsync", "method", "vectors", "seconds", "vec/s", "MB/s", "close s", "runs", "spread",
             "cpu s", "cpu spr");
  bool any_capped = false;
  for (const IngestResult& x : r.ingest) {
    any_capped |= x.capped;
    fmt::print(
        "{:<5} {:<9} {:<15} {:>9} {:>9.4f} {:>12} {:>9.1f} {:>8.3f} {:>4} {:>6.1f}% {:>7.3f} "
        "{:>6.1f}%{}\n",
        x.target, x.policy, x.Method(), x.vectors, x.seconds, Grouped(x.VectorsPerSecond()),
        x.MBPerSecond(), x.close_seconds, x.reps, 100 * x.spread, x.cpu_seconds,
        100 * x.cpu_spread, x.capped ? " *" : "");
  }
  fmt::print("  each run writes up to {} vectors (the base set over and over, fresh ids); "
             "the median run is shown, spread = (fastest - slowest) / median\n",
             Grouped(r.config.write_vectors));
  fmt::print("  cpu s: CPU time of the whole process (every thread) during the median run's writes; "
             "cpu spr: the spread of CPU time per vector over the runs (the work, without the "
             "machine's preemptions)\n");
  if (any_capped) fmt::print("  * stopped by the time budget; the rate is over what was written\n");
  fmt::print("\n");
}

void PrintRaw(const Report& r) {
  if (r.raw.empty()) return;
  fmt::print("Raw sequential write() baseline (same bytes, 1 MiB writes; fdatasync timed apart)\n");
  fmt::print("{:<5} {:>12} {:>9} {:>9} {:>12} {:>4} {:>7}\n", "dir", "bytes", "seconds", "MB/s",
             "fdatasync s", "runs", "spread");
  for (const RawWriteFigures& x : r.raw) {
    fmt::print("{:<5} {:>12} {:>9.4f} {:>9.1f} {:>12.4f} {:>4} {:>6.1f}%\n", x.target,
               Grouped(x.bytes), x.write_seconds, x.MBPerSecond(), x.fdatasync_seconds, x.reps,
               100 * x.spread);
  }
  fmt::print("\n");
}

void PrintGroupCommit(const Report& r) {
  if (r.group_commit.runs.empty()) return;
  fmt::print("Group commit (fsync always, {}, one Put per call, distinct ids, {} {})\n",
             r.group_commit.target, r.config.direct_io_log ? "direct-I/O" : "mapped",
             r.config.collection_commit_log ? "commit log per collection" : "log per shard");
  fmt::print("{:>7} {:>10} {:>9} {:>12} {:>14} {:>4} {:>7}\n", "writers", "puts", "seconds",
             "puts/s", "us/put/writer", "runs", "spread");
  for (const GroupCommitRun& x : r.group_commit.runs) {
    const double us = x.puts > 0 ? 1e6 * x.seconds * x.writers / x.puts : kNaN;
    fmt::print("{:>7} {:>10} {:>9.3f} {:>12} {:>14.1f} {:>4} {:>6.1f}%\n", x.writers, x.puts,
               x.seconds, Grouped(x.PutsPerSecond()), us, x.reps, 100 * x.spread);
  }
  if (!r.group_commit.speedups.empty()) {
    std::string pairs;
    for (double x : r.group_commit.speedups) pairs += fmt::format(" {:.2f}", x);
    fmt::print("  the median run of each is shown; speedup of each pair (1 then N writers, run back to "
               "back):{}\n", pairs);
  }
  fmt::print("\n");
}

void PrintSearch(const Report& r) {
  const SearchResult& s = r.search;
  if (!s.done) return;
  fmt::print("Exact search over memtables (k={}; base loaded by PutBatch in {:.3f} s)\n",
             s.k, s.load_seconds);
  fmt::print("{:<22} {:>8} {:>9} {:>10} {:>10}\n", "call", "queries", "seconds", "QPS",
             fmt::format("recall@{}", s.k));
  fmt::print("{:<22} {:>8} {:>9.3f} {:>10} {:>10.4f}\n", "Search (1 thread)", s.single_queries,
             s.single_seconds, Grouped(Ratio(s.single_queries, s.single_seconds)),
             s.recall_single);
  fmt::print("{:<22} {:>8} {:>9.3f} {:>10} {:>10.4f}\n", "SearchBatch", s.queries,
             s.batch_seconds, Grouped(Ratio(s.queries, s.batch_seconds)), s.recall_batch);
  fmt::print("\n");
}

void PrintGoals(const Report& r) {
  fmt::print("Goals\n");
  for (const Goal& g : Goals(r)) {
    std::string verdict = "(info)";
    if (!std::isnan(g.target)) {
      verdict = fmt::format("goal >= {:<4} {}", g.target,
                            std::isnan(g.value) ? "not measured"
                            : g.value >= g.target ? "met" : "MISSED");
    }
    fmt::print("  {:<58} {:>7}   {}\n", g.text,
               std::isnan(g.value) ? "n/a" : fmt::format("{:.3f}", g.value), verdict);
  }
}

void ConfigToJson(const RunConfig& c, JsonWriter& w) {
  w.Key("config");
  w.BeginObject();
  w.Field("dataset", c.dataset);
  w.Field("num_vectors", uint64_t{c.num_vectors});
  w.Field("dim", c.dim);
  w.Field("num_queries", uint64_t{c.num_queries});
  w.Field("num_clusters", c.num_clusters);
  w.Field("base_bytes", uint64_t{c.base_bytes});
  w.Field("metric", c.metric);
  w.Field("seed", c.seed);
  w.Field("worker_threads", c.threads);
  w.Field("shard_count", c.shards);
  w.Field("group_commit_writers", c.writers);
  w.Field("direct_io_log", c.direct_io_log);
  w.Field("collection_commit_log", c.collection_commit_log);
  w.Field("reps", c.reps);
  w.Field("write_vectors", uint64_t{c.write_vectors});
  w.Field("time_budget_s", c.time_budget_s);
  w.Field("search_budget_s", c.search_budget_s);
  w.Field("memtable_bytes", uint64_t{c.memtable_bytes});
  w.Field("sync_interval_us", c.sync_interval_us);
  w.Field("shm_dir", c.shm_dir);
  w.Field("disk_dir", c.disk_dir);
  w.Field("search_dir", c.graph_dir);
  w.Field("hardware_threads", uint32_t{c.hardware_threads});
  w.Field("source", c.source);
  w.Field("ground_truth", c.ground_truth);
  w.Field("k", c.k);
  w.Field("default_list_size", c.default_list_size);
  w.Field("beam_width", c.beam_width);
  w.Field("max_degree", c.max_degree);
  w.Field("code", c.code);
  w.Field("build_list_size", c.build_list_size);
  w.Field("alpha", double{c.alpha});
  w.EndObject();
}

void IngestToJson(const Report& r, JsonWriter& w) {
  w.Key("ingest");
  w.BeginArray();
  for (const IngestResult& x : r.ingest) {
    w.BeginObject();
    w.Field("dir", x.target);
    w.Field("fsync", x.policy);
    w.Field("method", x.batch == 0 ? "Put" : "PutBatch");
    w.Field("batch", uint64_t{x.batch});
    w.Field("vectors", uint64_t{x.vectors});
    w.Field("bytes", uint64_t{x.bytes});
    w.Field("seconds", x.seconds);
    w.Field("vectors_per_s", x.VectorsPerSecond());
    w.Field("mb_per_s", x.MBPerSecond());
    w.Field("close_seconds", x.close_seconds);
    w.Field("capped_by_time_budget", x.capped);
    w.Field("reps", x.reps);
    w.Field("spread", x.spread);
    w.Field("cpu_seconds", x.cpu_seconds);
    w.Field("cpu_spread", x.cpu_spread);
    w.EndObject();
  }
  w.EndArray();
}

void RawToJson(const Report& r, JsonWriter& w) {
  w.Key("raw_write");
  w.BeginArray();
  for (const RawWriteFigures& x : r.raw) {
    w.BeginObject();
    w.Field("dir", x.target);
    w.Field("bytes", uint64_t{x.bytes});
    w.Field("write_seconds", x.write_seconds);
    w.Field("mb_per_s", x.MBPerSecond());
    w.Field("fdatasync_seconds", x.fdatasync_seconds);
    w.Field("reps", x.reps);
    w.Field("spread", x.spread);
    w.EndObject();
  }
  w.EndArray();
}

void GroupCommitToJson(const Report& r, JsonWriter& w) {
  w.Key("group_commit");
  w.BeginObject();
  w.Field("dir", r.group_commit.target);
  w.Field("fsync", "always");
  w.Key("runs");
  w.BeginArray();
  for (const GroupCommitRun& x : r.group_commit.runs) {
    w.BeginObject();
    w.Field("writers", x.writers);
    w.Field("puts", uint64_t{x.puts});
    w.Field("seconds", x.seconds);
    w.Field("puts_per_s", x.PutsPerSecond());
    w.Field("runs", x.reps);
    w.Field("spread", x.spread);
    w.EndObject();
  }
  w.EndArray();
  w.Field("pair_speedups", r.group_commit.speedups);
  w.EndObject();
}

void SearchToJson(const Report& r, JsonWriter& w) {
  const SearchResult& s = r.search;
  w.Key("search");
  if (!s.done) return w.Null();
  w.BeginObject();
  w.Field("dir", s.target);
  w.Field("k", s.k);
  w.Field("list_size", s.list_size);
  w.Field("load_seconds", s.load_seconds);
  w.Field("ground_truth_seconds", s.ground_truth_seconds);
  w.Field("single_queries", uint64_t{s.single_queries});
  w.Field("single_seconds", s.single_seconds);
  w.Field("single_qps", Ratio(s.single_queries, s.single_seconds));
  w.Field("single_recall", s.recall_single);
  w.Field("batch_queries", uint64_t{s.queries});
  w.Field("batch_seconds", s.batch_seconds);
  w.Field("batch_qps", Ratio(s.queries, s.batch_seconds));
  w.Field("batch_recall", s.recall_batch);
  w.EndObject();
}

void GoalsToJson(const Report& r, JsonWriter& w) {
  w.Key("ratios");
  w.BeginObject();
  for (const Goal& g : Goals(r)) {
    w.Key(g.key);
    w.BeginObject();
    w.Field("value", g.value);
    w.Field("goal_min", g.target);  // null: informational
    w.Field("description", g.text);
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace

std::string IngestResult::Method() const {
  return batch == 0 ? "Put" : fmt::format("PutBatch({})", batch);
}

void PrintReport(const Report& report) {
  PrintHeader(report.config);
  PrintIngest(report);
  PrintRaw(report);
  PrintGroupCommit(report);
  PrintSearch(report);
  PrintLimits(report);
  PrintGraph(report);
  PrintChurn(report);
  PrintCompare(report);
  PrintBuildRounds(report);
  PrintDisk(report);
  PrintFilter(report);
  PrintGoals(report);
  fmt::print("\ntotal {:.1f} s\n", report.total_seconds);
  std::fflush(stdout);
}

std::string ReportToJson(const Report& report) {
  JsonWriter w;
  w.BeginObject();
  w.Field("bench", "comprehensive_bench");
  w.Field("format_version", 2);
  ConfigToJson(report.config, w);
  IngestToJson(report, w);
  RawToJson(report, w);
  GroupCommitToJson(report, w);
  SearchToJson(report, w);
  LimitsToJson(report, w);
  GraphToJson(report, w);
  ChurnToJson(report, w);
  CompareToJson(report, w);
  BuildRoundsToJson(report, w);
  DiskToJson(report, w);
  FilterToJson(report, w);
  GoalsToJson(report, w);
  w.Field("total_seconds", report.total_seconds);
  w.EndObject();
  return w.str();
}

}  // namespace shoal_bench

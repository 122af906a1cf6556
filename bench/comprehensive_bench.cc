// Copyright 2026 The shoal Authors.
//
// comprehensive_bench: ingestion, durability and exact-search figures for
// shoal on a seeded synthetic dataset, against the product goals:
//   - PutBatch(kNever, 10000 rows, /dev/shm) reaches >= 0.5 of the bandwidth
//     of a plain sequential write() of the same bytes to the same directory;
//   - a single thread Puts 1M vectors/s (kNever, /dev/shm);
//   - 8 kAlways writers on a real disk get >= 5x the Puts/s of 1 (group
//     commit shares each fdatasync);
//   - exact search over memtables has recall@10 == 1 against brute force.
//
// Every measurement uses a fresh database in a wiped directory and closes it
// afterwards. Tables go to stdout, progress to stderr, and --output writes
// the same figures as JSON. Usage: see docs/performance.md.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "bench_util.h"
#include "dataset.h"
#include "fmt/core.h"
#include "ground_truth.h"
#include "report.h"
#include "shoal/db.h"
#include "shoal/options.h"

ABSL_FLAG(std::string, dataset, "small", "small (10K x 128) or medium (100K x 256)");
ABSL_FLAG(uint64_t, seed, 42, "seed of the synthetic dataset");
ABSL_FLAG(std::string, metric, "l2", "l2, ip or cosine");
ABSL_FLAG(uint32_t, threads, 0,
          "Options::worker_threads and brute-force threads (0 = all cores)");
ABSL_FLAG(uint32_t, shards, 0, "shards of the collection (0 = one per core)");
ABSL_FLAG(uint32_t, writers, 8, "writer threads of the group-commit run");
ABSL_FLAG(size_t, queries, 0, "search queries (0 = the dataset's default)");
ABSL_FLAG(std::string, disk_dir, "./shoal-bench-tmp",
          "scratch directory on the working disk ('' = skip disk runs)");
ABSL_FLAG(std::string, shm_dir, "/dev/shm/shoal-bench",
          "scratch directory in memory ('' = skip /dev/shm runs)");
ABSL_FLAG(std::string, output, "", "also write the figures to this JSON file");
ABSL_FLAG(std::string, phases, "ingest,raw,group,search",
          "comma-separated subset of ingest,raw,group,search");
ABSL_FLAG(double, time_budget_s, 2.0,
          "a write run stops after this many seconds (and group-commit runs last this long)");
ABSL_FLAG(double, search_budget_s, 20.0, "single-thread Search stops after this many seconds");
ABSL_FLAG(int, reps, 3,
          "minimum runs (fresh databases) per write figure; the median is shown");
ABSL_FLAG(size_t, memtable_mb, 0,
          "Options::memtable_bytes in MiB (0 = room for everything the bench writes)");

namespace shoal_bench {
namespace {

constexpr size_t kRawChunkBytes = 1 << 20;
constexpr size_t kLoadBatch = 10000;
constexpr uint32_t kSearchK = 10;
// A figure is the median of at least --reps runs, and of more (up to
// kMaxRepsFactor times as many) while their timed total is under this.
constexpr double kMinMeasuredSeconds = 0.25;
constexpr size_t kMaxRepsFactor = 5;
constexpr size_t kIngestBatches[] = {0, 1, 100, 1000, 10000};  // 0 = Put
constexpr shoal::FsyncPolicy kPolicies[] = {
    shoal::FsyncPolicy::kNever, shoal::FsyncPolicy::kInterval, shoal::FsyncPolicy::kAlways};

struct Target {
  std::string name;  // "shm" or "disk"
  std::string dir;   // scratch directory; the bench only touches DbDir and the raw file
  std::string DbDir() const { return dir + "/db"; }
  std::string RawFile() const { return dir + "/raw-write.bin"; }
};

struct Config {
  RunConfig run;  // echoed in the report
  shoal::Metric metric = shoal::Metric::kL2;
  std::vector<Target> targets;
  std::vector<std::string> phases;
  std::string output;

  const Target* FindTarget(std::string_view name) const {
    for (const Target& t : targets) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  bool HasPhase(std::string_view name) const {
    return std::find(phases.begin(), phases.end(), name) != phases.end();
  }
};

const char* PolicyName(shoal::FsyncPolicy p) {
  switch (p) {
    case shoal::FsyncPolicy::kNever: return "never";
    case shoal::FsyncPolicy::kInterval: return "interval";
    case shoal::FsyncPolicy::kAlways: return "always";
  }
  return "?";
}

shoal::Metric ParseMetric(const std::string& name) {
  if (name == "l2") return shoal::Metric::kL2;
  if (name == "ip") return shoal::Metric::kInnerProduct;
  if (name == "cosine") return shoal::Metric::kCosine;
  Die("--metric", absl::InvalidArgumentError("want l2, ip or cosine, got '" + name + "'"));
}

std::vector<std::string> ParsePhases(const std::string& list) {
  std::vector<std::string> phases;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    std::string phase = list.substr(start, end - start);
    if (phase != "ingest" && phase != "raw" && phase != "group" && phase != "search") {
      Die("--phases", absl::InvalidArgumentError("unknown phase '" + phase + "'"));
    }
    phases.push_back(std::move(phase));
    start = end + 1;
  }
  return phases;
}

Config ConfigFromFlags(const DatasetSpec& spec) {
  Config c;
  RunConfig& r = c.run;
  r.dataset = spec.name;
  r.num_vectors = spec.num_vectors;
  r.dim = spec.dim;
  r.num_queries = spec.num_queries;
  r.num_clusters = spec.num_clusters;
  r.base_bytes = spec.num_vectors * spec.dim * sizeof(float);
  r.metric = absl::GetFlag(FLAGS_metric);
  c.metric = ParseMetric(r.metric);
  r.seed = absl::GetFlag(FLAGS_seed);
  r.threads = absl::GetFlag(FLAGS_threads);
  r.shards = absl::GetFlag(FLAGS_shards);
  r.writers = std::max(1u, absl::GetFlag(FLAGS_writers));
  r.reps = std::max(1, absl::GetFlag(FLAGS_reps));
  r.time_budget_s = absl::GetFlag(FLAGS_time_budget_s);
  r.search_budget_s = absl::GetFlag(FLAGS_search_budget_s);
  const size_t memtable_mb = absl::GetFlag(FLAGS_memtable_mb);
  // Every shard gets room for the whole base set and as much again for the
  // group-commit writes: a flush (segment build) must not land inside a
  // measurement, and search must see only memtables.
  r.memtable_bytes = memtable_mb > 0 ? memtable_mb << 20
                                     : std::max<size_t>(shoal::Options{}.memtable_bytes,
                                                        2 * r.base_bytes + (64 << 20));
  r.sync_interval_us = shoal::Options{}.sync_interval_us;
  r.shm_dir = absl::GetFlag(FLAGS_shm_dir);
  r.disk_dir = absl::GetFlag(FLAGS_disk_dir);
  r.hardware_threads = std::thread::hardware_concurrency();
  if (!r.shm_dir.empty()) c.targets.push_back({"shm", r.shm_dir});
  if (!r.disk_dir.empty()) c.targets.push_back({"disk", r.disk_dir});
  c.phases = ParsePhases(absl::GetFlag(FLAGS_phases));
  c.output = absl::GetFlag(FLAGS_output);
  return c;
}

// Wipes target's database directory and opens a new database there.
std::unique_ptr<shoal::DB> OpenFresh(const Config& c, const Target& t,
                                     shoal::FsyncPolicy policy) {
  CheckOk(MakeDirs(t.dir), "scratch directory");
  CheckOk(RemoveTree(t.DbDir()), "wipe");
  shoal::Options o;
  o.error_if_exists = true;  // the directory was just wiped
  o.fsync = policy;
  o.worker_threads = c.run.threads;
  o.memtable_bytes = c.run.memtable_bytes;
  o.default_collection.dim = c.run.dim;
  o.default_collection.metric = c.metric;
  o.default_collection.shard_count = c.run.shards;
  return ValueOrDie(shoal::DB::Open(o, t.DbDir()), "Open " + t.DbDir());
}

// Closes `db` (timing it) and removes its files.
double CloseAndWipe(std::unique_ptr<shoal::DB> db, const Target& t) {
  const Stopwatch sw;
  CheckOk(db->Close(), "Close " + t.DbDir());
  const double seconds = sw.Seconds();
  db.reset();
  CheckOk(RemoveTree(t.DbDir()), "wipe");
  return seconds;
}

bool NeedAnotherRep(const Config& c, size_t done, double measured_seconds) {
  const size_t reps = static_cast<size_t>(c.run.reps);
  return done < reps || (measured_seconds < kMinMeasuredSeconds && done < kMaxRepsFactor * reps);
}

// Writes data.base in order, one Put per vector (batch 0) or PutBatch of
// `batch` rows, until the data or the time budget runs out.
IngestResult IngestOnce(const Config& c, const Dataset& data, const Target& t,
                        shoal::FsyncPolicy policy, size_t batch) {
  std::unique_ptr<shoal::DB> db = OpenFresh(c, t, policy);
  const size_t n = data.size(), dim = data.dim();
  // kAlways pays a sync per call, so look at the clock after every call;
  // otherwise every 1024 vectors keeps the clock out of the figure.
  const size_t stride = policy == shoal::FsyncPolicy::kAlways ? 1 : 1024;
  size_t done = 0, next_check = stride;
  const Stopwatch sw;
  while (done < n) {
    const size_t m = batch == 0 ? 1 : std::min(batch, n - done);
    const absl::Status s =
        batch == 0 ? db->Put(data.ids[done], data.Row(done))
                   : db->PutBatch(std::span(data.ids).subspan(done, m),
                                  std::span(data.base).subspan(done * dim, m * dim));
    if (!s.ok()) Die(fmt::format("{} at row {} ({}, {})", batch == 0 ? "Put" : "PutBatch",
                                 done, t.name, PolicyName(policy)), s);
    done += m;
    if (done >= next_check) {
      next_check = done + stride;
      if (sw.Seconds() > c.run.time_budget_s) break;
    }
  }
  IngestResult r;
  r.seconds = sw.Seconds();
  r.target = t.name;
  r.policy = PolicyName(policy);
  r.batch = batch;
  r.vectors = done;
  r.bytes = done * dim * sizeof(float);
  r.capped = done < n;
  r.close_seconds = CloseAndWipe(std::move(db), t);
  return r;
}

// The median (by rate) of fresh runs: at least run.reps, and more while the
// timed total is under kMinMeasuredSeconds (a small dataset takes a few ms);
// a run stopped by the time budget is not repeated.
IngestResult Ingest(const Config& c, const Dataset& data, const Target& t,
                    shoal::FsyncPolicy policy, size_t batch) {
  std::vector<IngestResult> runs;
  double measured = 0;
  while (NeedAnotherRep(c, runs.size(), measured)) {
    runs.push_back(IngestOnce(c, data, t, policy, batch));
    measured += runs.back().seconds;
    if (runs.back().capped) break;
  }
  std::sort(runs.begin(), runs.end(), [](const IngestResult& a, const IngestResult& b) {
    return a.VectorsPerSecond() < b.VectorsPerSecond();
  });
  IngestResult median = runs[runs.size() / 2];
  median.reps = static_cast<int>(runs.size());
  fmt::print(stderr, "[ingest] {:<4} {:<8} {:<15} {:>9} vectors {:>8.3f} s {:>12.0f} vec/s{}\n",
             t.name, median.policy, median.Method(), median.vectors, median.seconds,
             median.VectorsPerSecond(), median.capped ? " (time budget)" : "");
  return median;
}

void IngestPhase(const Config& c, const Dataset& data, Report& report) {
  for (const Target& t : c.targets) {
    for (const shoal::FsyncPolicy policy : kPolicies) {
      for (const size_t batch : kIngestBatches) {
        report.ingest.push_back(Ingest(c, data, t, policy, batch));
      }
    }
  }
}

void RawPhase(const Config& c, const Dataset& data, Report& report) {
  const std::span<const std::byte> bytes = std::as_bytes(std::span(data.base));
  for (const Target& t : c.targets) {
    CheckOk(MakeDirs(t.dir), "scratch directory");
    std::vector<RawWriteResult> runs;
    double measured = 0;
    while (NeedAnotherRep(c, runs.size(), measured)) {
      runs.push_back(ValueOrDie(RawSequentialWrite(t.RawFile(), bytes, kRawChunkBytes),
                                "raw write"));
      measured += runs.back().write_seconds;
    }
    std::sort(runs.begin(), runs.end(), [](const RawWriteResult& a, const RawWriteResult& b) {
      return a.write_seconds < b.write_seconds;
    });
    const RawWriteResult& m = runs[runs.size() / 2];
    RawWriteFigures f{t.name, m.bytes, m.write_seconds, m.fdatasync_seconds,
                      static_cast<int>(runs.size())};
    fmt::print(stderr, "[raw]    {:<4} {} bytes in {:.4f} s ({:.1f} MB/s), fdatasync {:.4f} s\n",
               t.name, f.bytes, f.write_seconds, f.MBPerSecond(), f.fdatasync_seconds);
    report.raw.push_back(f);
  }
}

// `writers` threads Put one vector per call (writer w owns ids w << 40 ...)
// for time_budget_s on a kAlways database.
GroupCommitRun GroupCommitOnce(const Config& c, const Dataset& data, const Target& t,
                               uint32_t writers) {
  std::unique_ptr<shoal::DB> db = OpenFresh(c, t, shoal::FsyncPolicy::kAlways);
  std::vector<size_t> puts(writers, 0);
  std::vector<absl::Status> errors(writers);
  std::chrono::steady_clock::time_point deadline;
  std::latch go(1);
  std::vector<std::thread> pool;
  for (uint32_t w = 0; w < writers; ++w) {
    pool.emplace_back([&, w] {
      go.wait();  // also publishes `deadline`
      size_t i = 0;
      for (; std::chrono::steady_clock::now() < deadline; ++i) {
        const size_t row = (w * data.size() / writers + i) % data.size();
        errors[w] = db->Put((uint64_t{w} << 40) + i, data.Row(row));
        if (!errors[w].ok()) break;
      }
      puts[w] = i;
    });
  }
  const Stopwatch sw;
  deadline = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(c.run.time_budget_s));
  go.count_down();
  for (std::thread& th : pool) th.join();
  GroupCommitRun run{writers, 0, sw.Seconds()};
  for (uint32_t w = 0; w < writers; ++w) {
    CheckOk(errors[w], fmt::format("Put from writer {} of {} (always)", w, writers));
    run.puts += puts[w];
  }
  CloseAndWipe(std::move(db), t);
  fmt::print(stderr, "[group]  {:<4} {} writer(s): {} puts in {:.3f} s ({:.0f} puts/s)\n",
             t.name, writers, run.puts, run.seconds, run.PutsPerSecond());
  return run;
}

void GroupCommitPhase(const Config& c, const Dataset& data, Report& report) {
  const Target* t = c.FindTarget("disk");
  if (t == nullptr) {
    fmt::print(stderr, "[group]  skipped: no --disk_dir\n");
    return;
  }
  report.group_commit.target = t->name;
  report.group_commit.runs.push_back(GroupCommitOnce(c, data, *t, 1));
  report.group_commit.runs.push_back(GroupCommitOnce(c, data, *t, c.run.writers));
}

void LoadBase(shoal::DB& db, const Dataset& data) {
  const size_t n = data.size(), dim = data.dim();
  for (size_t start = 0; start < n; start += kLoadBatch) {
    const size_t m = std::min(kLoadBatch, n - start);
    CheckOk(db.PutBatch(std::span(data.ids).subspan(start, m),
                        std::span(data.base).subspan(start * dim, m * dim)),
            "PutBatch (search load)");
  }
}

// Single-thread Search over the queries until the search budget runs out.
std::vector<std::vector<shoal::Neighbor>> SearchEach(const Config& c, shoal::DB& db,
                                                     const Dataset& data,
                                                     const shoal::SearchOptions& opts,
                                                     double& seconds) {
  for (size_t q = 0; q < std::min<size_t>(10, data.num_queries()); ++q) {
    ValueOrDie(db.Search(data.Query(q), opts), "Search (warm-up)");
  }
  std::vector<std::vector<shoal::Neighbor>> results;
  const Stopwatch sw;
  for (size_t q = 0; q < data.num_queries() && sw.Seconds() < c.run.search_budget_s; ++q) {
    results.push_back(ValueOrDie(db.Search(data.Query(q), opts), fmt::format("Search {}", q)));
  }
  seconds = sw.Seconds();
  return results;
}

void SearchPhase(const Config& c, const Dataset& data, Report& report) {
  const Target* t = c.FindTarget("shm") ? c.FindTarget("shm") : c.FindTarget("disk");
  if (t == nullptr) return;
  SearchResult& s = report.search;
  s.target = t->name;
  s.queries = data.num_queries();
  shoal::SearchOptions opts;
  opts.k = kSearchK;
  s.k = opts.k;
  s.list_size = opts.list_size;
  Stopwatch sw;
  const auto truth = BruteForceKnn(data, c.metric, s.k, c.run.threads);
  s.ground_truth_seconds = sw.Seconds();
  fmt::print(stderr, "[search] ground truth for {} queries in {:.3f} s\n", s.queries,
             s.ground_truth_seconds);
  std::unique_ptr<shoal::DB> db = OpenFresh(c, *t, shoal::FsyncPolicy::kNever);
  sw = Stopwatch();
  LoadBase(*db, data);
  s.load_seconds = sw.Seconds();
  const auto single = SearchEach(c, *db, data, opts, s.single_seconds);
  s.single_queries = single.size();
  s.recall_single = RecallAtK(truth, single, s.k);
  sw = Stopwatch();
  const auto batch = ValueOrDie(db->SearchBatch(data.queries, opts), "SearchBatch");
  s.batch_seconds = sw.Seconds();
  if (batch.size() != s.queries) {
    Die("SearchBatch", absl::InternalError(fmt::format("{} results for {} queries",
                                                       batch.size(), s.queries)));
  }
  s.recall_batch = RecallAtK(truth, batch, s.k);
  CloseAndWipe(std::move(db), *t);
  s.done = true;
  fmt::print(stderr, "[search] Search {} q in {:.3f} s (recall {:.4f}); SearchBatch {:.3f} s "
             "(recall {:.4f})\n", s.single_queries, s.single_seconds, s.recall_single,
             s.batch_seconds, s.recall_batch);
}

// Writes FILE.tmp, then renames it over FILE, so a reader never sees half.
void WriteFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) Die("open " + tmp, absl::ErrnoToStatus(errno, tmp));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  if (std::fclose(f) != 0 || !wrote) {
    Die("write " + tmp, absl::ErrnoToStatus(wrote ? errno : write_errno, tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    Die("rename " + tmp, absl::ErrnoToStatus(errno, path));
  }
}

// Removes what the bench created; a scratch directory itself only if empty.
void CleanUp(const Config& c) {
  for (const Target& t : c.targets) {
    CheckOk(RemoveTree(t.DbDir()), "clean up");
    std::error_code ec;
    std::filesystem::remove(t.dir, ec);  // fails harmlessly when not empty
  }
}

int Main() {
  const Stopwatch total;
  DatasetSpec spec = ValueOrDie(DatasetSpecByName(absl::GetFlag(FLAGS_dataset)), "--dataset");
  if (absl::GetFlag(FLAGS_queries) > 0) spec.num_queries = absl::GetFlag(FLAGS_queries);
  const Config c = ConfigFromFlags(spec);
  fmt::print(stderr, "[data]   generating {}: {} x {}, {} queries, seed {}\n", spec.name,
             spec.num_vectors, spec.dim, spec.num_queries, c.run.seed);
  const Dataset data = GenerateDataset(spec, c.run.seed);
  Report report;
  report.config = c.run;
  if (c.HasPhase("ingest")) IngestPhase(c, data, report);
  if (c.HasPhase("raw")) RawPhase(c, data, report);
  if (c.HasPhase("group")) GroupCommitPhase(c, data, report);
  if (c.HasPhase("search")) SearchPhase(c, data, report);
  CleanUp(c);
  report.total_seconds = total.Seconds();
  PrintReport(report);
  if (!c.output.empty()) {
    WriteFile(c.output, ReportToJson(report));
    fmt::print(stderr, "[output] wrote {}\n", c.output);
  }
  return 0;
}

// Abseil flag names are identifiers (--disk_dir); accept the dashed
// spelling (--disk-dir) too by rewriting dashes in the name part of every
// "--name[=value]" argument before "--".
std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    std::string& a = args[i];
    if (a.size() < 3 || a[0] != '-' || a[1] != '-') continue;
    std::replace(a.begin() + 2, a.begin() + std::min(a.find('='), a.size()), '-', '_');
  }
  return args;
}

}  // namespace
}  // namespace shoal_bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "ingestion, durability and exact-search benchmark for shoal.\n"
      "  comprehensive_bench --dataset small [--output FILE.json]");
  std::vector<std::string> args = shoal_bench::NormalizeFlagNames(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  return shoal_bench::Main();
}

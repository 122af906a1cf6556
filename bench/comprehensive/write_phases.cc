// Copyright 2026 The shoal Authors.
//
// The write-path phases: ingest (Put and PutBatch under every FsyncPolicy),
// raw (a plain sequential write() of the same bytes) and group (group
// commit, kAlways, 1 writer against N).

#include <algorithm>
#include <chrono>
#include <iterator>
#include <latch>
#include <thread>

#include "common/bench_util.h"
#include "common/progress.h"
#include "comprehensive/phases.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

constexpr size_t kRawChunkBytes = 1 << 20;
// A figure is the median of at least --reps runs, and of more (up to
// kMaxRepsFactor times as many) while their timed total is under this.
constexpr double kMinMeasuredSeconds = 0.25;
// Each write run writes this many vectors (the base set again and again,
// with fresh ids each time round), unless the time budget stops it first:
// a figure over a 10K set (~13 ms) was not a figure (issue 19).
constexpr size_t kMaxRepsFactor = 5;
constexpr size_t kIngestBatches[] = {0, 1, 100, 1000, 10000};  // 0 = Put
constexpr shoal::FsyncPolicy kPolicies[] = {
    shoal::FsyncPolicy::kNever, shoal::FsyncPolicy::kInterval, shoal::FsyncPolicy::kAlways};

const char* PolicyName(shoal::FsyncPolicy p) {
  switch (p) {
    case shoal::FsyncPolicy::kNever: return "never";
    case shoal::FsyncPolicy::kInterval: return "interval";
    case shoal::FsyncPolicy::kAlways: return "always";
  }
  return "?";
}

}  // namespace

shoal::Options Config::DbOptions(shoal::FsyncPolicy policy) const {
  shoal::Options o;
  o.fsync = policy;
  o.worker_threads = run.threads;
  o.memtable_bytes = run.memtable_bytes;
  o.direct_io_log = run.direct_io_log;
  o.collection_commit_log = run.collection_commit_log;
  o.default_collection.dim = run.dim;
  o.default_collection.metric = metric;
  o.default_collection.shard_count = run.shards;
  o.default_collection.graph = graph;
  o.default_collection.code = code;
  return o;
}

std::unique_ptr<shoal::DB> OpenFresh(const Config& c, const Target& t,
                                     shoal::FsyncPolicy policy) {
  CheckOk(MakeDirs(t.dir), "scratch directory");
  CheckOk(RemoveTree(t.DbDir()), "wipe");
  shoal::Options o = c.DbOptions(policy);
  o.error_if_exists = true;  // the directory was just wiped
  return ValueOrDie(shoal::DB::Open(o, t.DbDir()), "Open " + t.DbDir());
}

double CloseAndWipe(std::unique_ptr<shoal::DB> db, const Target& t) {
  const Stopwatch sw;
  CheckOk(db->Close(), "Close " + t.DbDir());
  const double seconds = sw.Seconds();
  db.reset();
  CheckOk(RemoveTree(t.DbDir()), "wipe");
  return seconds;
}

namespace {

bool NeedAnotherRep(const Config& c, size_t done, double measured_seconds) {
  const size_t reps = static_cast<size_t>(c.run.reps);
  return done < reps || (measured_seconds < kMinMeasuredSeconds && done < kMaxRepsFactor * reps);
}

// Writes c.sustained_vectors vectors, one Put per vector (batch 0) or
// PutBatch of `batch` rows: data.base in order, over and over, round r
// with ids i + r * n (all fresh), until they are written or the time
// budget runs out.
IngestResult IngestOnce(const Config& c, const Dataset& data, const Target& t,
                        shoal::FsyncPolicy policy, size_t batch) {
  std::unique_ptr<shoal::DB> db = OpenFresh(c, t, policy);
  const size_t n = data.size(), dim = data.dim();
  const size_t total = std::max(n, c.sustained_vectors);
  // The ids of the round being written (round 0: data.ids).
  std::vector<uint64_t> ids(data.ids);
  size_t round = 0;
  // kAlways pays a sync per call, so look at the clock after every call;
  // otherwise every 1024 vectors keeps the clock out of the figure.
  const size_t stride = policy == shoal::FsyncPolicy::kAlways ? 1 : 1024;
  size_t done = 0, next_check = stride;
  const double cpu_before = ProcessCpuSeconds();
  const Stopwatch sw;
  while (done < total) {
    const size_t row = done % n;
    if (done / n != round) {
      round = done / n;
      for (size_t i = 0; i < n; ++i) ids[i] = data.ids[i] + round * n;
    }
    const size_t m = batch == 0 ? 1 : std::min({batch, n - row, total - done});
    const absl::Status s =
        batch == 0 ? db->Put(ids[row], data.Row(row))
                   : db->PutBatch(std::span(ids).subspan(row, m),
                                  std::span(data.base).subspan(row * dim, m * dim));
    if (!s.ok()) Die(fmt::format("{} at vector {} ({}, {})", batch == 0 ? "Put" : "PutBatch",
                                 done, t.name, PolicyName(policy)), s);
    done += m;
    if (done >= next_check) {
      next_check = done + stride;
      if (sw.Seconds() > c.run.time_budget_s) break;
    }
  }
  IngestResult r;
  r.seconds = sw.Seconds();
  r.cpu_seconds = ProcessCpuSeconds() - cpu_before;
  r.target = t.name;
  r.policy = PolicyName(policy);
  r.batch = batch;
  r.vectors = done;
  r.bytes = done * dim * sizeof(float);
  r.capped = done < total;
  r.close_seconds = CloseAndWipe(std::move(db), t);
  return r;
}

// The median (by rate) of fresh runs: at least run.reps, and more while the
// timed total is under kMinMeasuredSeconds (a small dataset takes a few ms).
// Runs stopped by the time budget count too (a slow device's figure is a
// median like any other), but bring no runs beyond run.reps.
IngestResult Ingest(const Config& c, const Dataset& data, const Target& t,
                    shoal::FsyncPolicy policy, size_t batch) {
  std::vector<IngestResult> runs;
  double measured = 0;
  while (NeedAnotherRep(c, runs.size(), measured)) {
    runs.push_back(IngestOnce(c, data, t, policy, batch));
    measured += runs.back().seconds;
    if (runs.back().capped && runs.size() >= static_cast<size_t>(c.run.reps)) break;
  }
  std::sort(runs.begin(), runs.end(), [](const IngestResult& a, const IngestResult& b) {
    return a.VectorsPerSecond() < b.VectorsPerSecond();
  });
  IngestResult median = runs[runs.size() / 2];
  median.reps = static_cast<int>(runs.size());
  median.spread = Spread(runs.front().VectorsPerSecond(), runs.back().VectorsPerSecond(),
                         median.VectorsPerSecond());
  // CPU per vector of each run (runs capped by the time budget wrote fewer).
  std::vector<double> cpu;
  for (const IngestResult& r : runs) cpu.push_back(r.cpu_seconds / std::max<size_t>(r.vectors, 1));
  std::sort(cpu.begin(), cpu.end());
  median.cpu_spread = Spread(cpu.front(), cpu.back(), cpu[cpu.size() / 2]);
  StatusLine(fmt::format("[ingest] {:<4} {:<8} {:<15} {:>9} vectors {:>8.3f} s {:>12.0f} vec/s "
                         "(spread {:.1f}% over {} runs){}",
                         t.name, median.policy, median.Method(), median.vectors,
                         median.seconds, median.VectorsPerSecond(), 100 * median.spread,
                         median.reps, median.capped ? " (time budget)" : ""));
  return median;
}

}  // namespace

void IngestPhase(const Config& c, const Dataset& data, Report& report) {
  Progress progress("ingest", c.targets.size() * std::size(kPolicies) * std::size(kIngestBatches));
  // One run first, not measured: in a virtual machine the first touch of
  // guest memory the host has not backed yet costs a host-side fault per
  // page, and the runs (and the raw write after them) then reuse that
  // memory. Without it the first rows measured 2-3x slower than the same
  // rows later (384-d: Put 0.32M/s first, 0.95M/s after; issue 19).
  for (const Target& t : c.targets) {
    (void)IngestOnce(c, data, t, shoal::FsyncPolicy::kNever, 10000);
  }
  for (const Target& t : c.targets) {
    for (const shoal::FsyncPolicy policy : kPolicies) {
      for (const size_t batch : kIngestBatches) {
        report.ingest.push_back(Ingest(c, data, t, policy, batch));
        progress.Add(1);
      }
    }
  }
}

void RawPhase(const Config& c, const Dataset& data, Report& report) {
  const std::span<const std::byte> bytes = std::as_bytes(std::span(data.base));
  // The bytes a write run writes: the base set again and again.
  const size_t total = std::max(data.size(), c.sustained_vectors) * data.dim() * sizeof(float);
  for (const Target& t : c.targets) {
    CheckOk(MakeDirs(t.dir), "scratch directory");
    std::vector<RawWriteResult> runs;
    double measured = 0;
    while (NeedAnotherRep(c, runs.size(), measured)) {
      runs.push_back(ValueOrDie(RawSequentialWrite(t.RawFile(), bytes, kRawChunkBytes, total),
                                "raw write"));
      measured += runs.back().write_seconds;
    }
    std::sort(runs.begin(), runs.end(), [](const RawWriteResult& a, const RawWriteResult& b) {
      return a.write_seconds < b.write_seconds;
    });
    const RawWriteResult& m = runs[runs.size() / 2];
    RawWriteFigures f{t.name, m.bytes, m.write_seconds, m.fdatasync_seconds,
                      static_cast<int>(runs.size()),
                      Spread(runs.front().write_seconds, runs.back().write_seconds,
                             m.write_seconds)};
    StatusLine(fmt::format("[raw]    {:<4} {} bytes in {:.4f} s ({:.1f} MB/s), fdatasync {:.4f} s",
                           t.name, f.bytes, f.write_seconds, f.MBPerSecond(),
                           f.fdatasync_seconds));
    report.raw.push_back(f);
  }
}

namespace {

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
  StatusLine(fmt::format("[group]  {:<4} {} writer(s): {} puts in {:.3f} s ({:.0f} puts/s)",
                         t.name, writers, run.puts, run.seconds, run.PutsPerSecond()));
  return run;
}

}  // namespace

void GroupCommitPhase(const Config& c, const Dataset& data, Report& report) {
  const Target* t = c.FindTarget("disk");
  if (t == nullptr) {
    StatusLine("[group]  skipped: no --disk_dir");
    return;
  }
  report.group_commit.target = t->name;
  // Pairs of runs, 1 writer then N, so that each speedup compares runs a
  // few seconds apart; the median run of each count is reported.
  const int reps = c.run.reps;
  Progress progress("group commit", 2 * reps);
  std::vector<GroupCommitRun> one, many;
  for (int rep = 0; rep < reps; ++rep) {
    one.push_back(GroupCommitOnce(c, data, *t, 1));
    progress.Add(1);
    many.push_back(GroupCommitOnce(c, data, *t, c.run.writers));
    progress.Add(1);
    report.group_commit.speedups.push_back(
        one.back().PutsPerSecond() > 0 ? many.back().PutsPerSecond() / one.back().PutsPerSecond()
                                       : 0);
  }
  for (std::vector<GroupCommitRun>* runs : {&one, &many}) {
    std::sort(runs->begin(), runs->end(), [](const GroupCommitRun& a, const GroupCommitRun& b) {
      return a.PutsPerSecond() < b.PutsPerSecond();
    });
    GroupCommitRun median = (*runs)[runs->size() / 2];
    median.reps = static_cast<int>(runs->size());
    median.spread = Spread(runs->front().PutsPerSecond(), runs->back().PutsPerSecond(),
                           median.PutsPerSecond());
    report.group_commit.runs.push_back(median);
  }
}

}  // namespace shoal_bench

// Copyright 2026 The shoal Authors.
//
// The read-side phases: search (exact, over memtables), build and sweep
// (shoal on segments), compare (the peers on the same data) and limits.

#include <algorithm>
#include <memory>
#include <optional>

#include "common/bench_util.h"
#include "common/ground_truth.h"
#include "common/progress.h"
#include "comprehensive/machine_limits.h"
#include "comprehensive/phases.h"
#include "comprehensive/shoal_index.h"
#include "comprehensive/sweep.h"
#include "fmt/core.h"
#include "peers/peers.h"

namespace shoal_bench {
namespace {

constexpr size_t kLoadBatch = 10000;

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
  Progress progress("exact Search", data.num_queries());
  const Stopwatch sw;
  for (size_t q = 0; q < data.num_queries() && sw.Seconds() < c.run.search_budget_s; ++q) {
    results.push_back(ValueOrDie(db.Search(data.Query(q), opts), fmt::format("Search {}", q)));
    progress.Add(1);
  }
  seconds = sw.Seconds();
  return results;
}

// Builds `index` and, unless `knobs` is {} with sweep false, sweeps it.
IndexRun BuildAndSweep(const Config& c, AnnIndex& index, const Dataset& data,
                       const Truth& truth, bool sweep, std::vector<uint32_t> knobs) {
  IndexRun run = BuildIndex(c, index, data);
  const BuildFigures& b = run.build;
  StatusLine(fmt::format("[build]  {:<24} {}: {} vectors in {:.3f} s ({:.0f} vectors/s){}",
                         run.index, b.method, b.vectors, b.seconds, b.VectorsPerSecond(),
                         b.other_label.empty()
                             ? ""
                             : fmt::format("; {} {:.3f} s", b.other_label, b.other_seconds)));
  if (sweep) {
    SweepSettings settings;
    settings.k = c.search.k;
    settings.threads = c.run.threads;
    settings.budget_s = c.sweep_budget_s;
    settings.knobs = std::move(knobs);
    run.points = RunSweep(index, data, truth, settings);
  }
  return run;
}

}  // namespace

IndexRun BuildIndex(const Config& c, AnnIndex& index, const Dataset& data) {
  IndexRun run;
  run.index = index.Name();
  run.params = index.Params();
  run.knob = index.KnobName();
  CheckOk(index.Build(data, c.run.threads, &run.build), run.index + " build");
  run.build.index_bytes = index.IndexBytes();
  return run;
}

void SearchPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report) {
  const Target t{"exact", c.search_dir + "/exact"};
  SearchResult& s = report.search;
  s.target = c.search_dir;
  s.queries = data.num_queries();
  shoal::SearchOptions opts = c.search;
  s.k = opts.k;
  s.list_size = opts.list_size;
  std::unique_ptr<shoal::DB> db = OpenFresh(c, t, shoal::FsyncPolicy::kNever);
  Stopwatch sw;
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
  CloseAndWipe(std::move(db), t);
  CheckOk(RemoveTree(t.dir), "clean up");
  s.done = true;
  StatusLine(fmt::format("[search] exact over memtables: Search {} q in {:.3f} s (recall {:.4f}); "
                         "SearchBatch {:.3f} s (recall {:.4f})", s.single_queries,
                         s.single_seconds, s.recall_single, s.batch_seconds, s.recall_batch));
}

// Queries through `index` at its current knob, repeated until `seconds`
// have passed; QPS.
double TimedQps(AnnIndex& index, const Dataset& data, uint32_t k, double seconds) {
  std::vector<uint64_t> ids;
  size_t done = 0;
  const Stopwatch sw;
  while (sw.Seconds() < seconds) {
    for (size_t q = 0; q < data.num_queries(); ++q, ++done) {
      CheckOk(index.Search(data.Query(q).data(), k, &ids), index.Name() + " Search");
    }
  }
  return done / sw.Seconds();
}

HeadToHead RunHeadToHead(const Config& c, AnnIndex& bulk, AnnIndex& stream,
                         const Dataset& data) {
  constexpr int kRounds = 5;
  constexpr double kSecondsEach = 1.0;
  HeadToHead h;
  h.list_size = c.search.list_size;
  bulk.SetKnob(h.list_size);
  stream.SetKnob(h.list_size);
  std::vector<double> bulk_qps, stream_qps;
  for (int round = 0; round < kRounds; ++round) {
    bulk_qps.push_back(TimedQps(bulk, data, c.search.k, kSecondsEach));
    stream_qps.push_back(TimedQps(stream, data, c.search.k, kSecondsEach));
    h.ratios.push_back(stream_qps.back() / bulk_qps.back());
  }
  std::sort(bulk_qps.begin(), bulk_qps.end());
  std::sort(stream_qps.begin(), stream_qps.end());
  h.bulk_qps = bulk_qps[kRounds / 2];
  h.stream_qps = stream_qps[kRounds / 2];
  StatusLine(fmt::format("[search] streamed vs BulkLoad at list_size {}: {:.0f} vs {:.0f} QPS, "
                         "ratio median {:.3f}", h.list_size, h.stream_qps, h.bulk_qps,
                         h.MedianRatio()));
  return h;
}

std::unique_ptr<AnnIndex> GraphPhase(const Config& c, const Dataset& data, const Truth& truth,
                                     Report& report) {
  const bool sweep = c.HasPhase("sweep") || c.compare;
  // The bulk-loaded database stays open for the head-to-head with the
  // streamed one, and for the peers' searches in turns.
  auto bulk_index = std::make_unique<ShoalIndex>(ShoalIndex::Load::kBulkLoad,
                                                 c.search_dir + "/bulkload",
                                                 c.DbOptions(shoal::FsyncPolicy::kNever), c.search);
  ShoalIndex& bulk = *bulk_index;
  report.graph.push_back(BuildAndSweep(c, bulk, data, truth, sweep, c.list_sizes));
  {
    ShoalIndex put_flush(ShoalIndex::Load::kPutFlush, c.search_dir + "/putflush",
                         c.DbOptions(shoal::FsyncPolicy::kNever), c.search);
    report.graph.push_back(
        BuildAndSweep(c, put_flush, data, truth, sweep, {c.search.list_size}));
  }
  shoal::Options streamed = c.DbOptions(shoal::FsyncPolicy::kNever);
  streamed.memtable_bytes = ShoalIndex::kStreamMemtableBytes;
  ShoalIndex stream(ShoalIndex::Load::kStream, c.search_dir + "/stream", streamed, c.search);
  report.graph.push_back(BuildAndSweep(c, stream, data, truth, sweep, {c.search.list_size}));
  if (sweep) report.stream_vs_bulk = RunHeadToHead(c, bulk, stream, data);
  if (!c.compare) return nullptr;
  return bulk_index;
}

// Every query in SearchBatch calls on `threads` threads, repeated until
// `seconds` have passed; QPS.
double TimedBatchQps(AnnIndex& index, const Dataset& data, uint32_t k, uint32_t threads,
                     double seconds) {
  std::vector<std::vector<uint64_t>> answers;
  size_t done = 0;
  const Stopwatch sw;
  while (sw.Seconds() < seconds) {
    CheckOk(index.SearchBatch(data.queries, k, threads, &answers), index.Name() + " SearchBatch");
    done += data.num_queries();
  }
  return done / sw.Seconds();
}

// QpsInTurns of shoal (swept: shoal_points) and a peer (peer_points), one
// query at a time or in batches, or nothing when either curve misses
// kInTurnsRecall.
std::optional<QpsInTurns> RunQpsInTurns(const Config& c, AnnIndex& shoal,
                                        const std::vector<SweepPoint>& shoal_points,
                                        AnnIndex& peer, const std::vector<SweepPoint>& peer_points,
                                        const Dataset& data, bool batch) {
  constexpr int kRounds = 5;
  constexpr double kSecondsEach = 0.5;
  std::vector<SweepPoint> ours = PointsAroundRecall(shoal_points, kInTurnsRecall, batch);
  std::vector<SweepPoint> theirs = PointsAroundRecall(peer_points, kInTurnsRecall, batch);
  if (ours.empty() || theirs.empty()) return std::nullopt;
  QpsInTurns t;
  t.peer = peer.Name();
  t.recall = kInTurnsRecall;
  t.batch = batch;
  // Each point's QPS replaces the sweep's (recalls stay the sweep's).
  auto measure = [&](AnnIndex& index, std::vector<SweepPoint>& points) {
    for (SweepPoint& p : points) {
      index.SetKnob(p.knob);
      if (batch) {
        p.batch_queries = 1000000;
        p.batch_seconds =
            1000000 / TimedBatchQps(index, data, c.search.k, c.run.threads, kSecondsEach);
      } else {
        p.single_queries = 1000000;
        p.single_seconds = 1000000 / TimedQps(index, data, c.search.k, kSecondsEach);
      }
    }
    return QpsAtRecall(points, kInTurnsRecall, batch);
  };
  // One untimed pass at each point first: the peer's build and sweep ran
  // since shoal last searched.
  for (auto [index, points] : {std::pair{&shoal, &ours}, std::pair{&peer, &theirs}}) {
    for (const SweepPoint& p : *points) {
      index->SetKnob(p.knob);
      TimedQps(*index, data, c.search.k, 0.1);  // at least one pass
    }
  }
  for (int round = 0; round < kRounds; ++round) {
    double shoal_qps, peer_qps;
    if (round % 2 == 0) {  // who goes first alternates
      shoal_qps = measure(shoal, ours);
      peer_qps = measure(peer, theirs);
    } else {
      peer_qps = measure(peer, theirs);
      shoal_qps = measure(shoal, ours);
    }
    t.shoal_qps.push_back(shoal_qps);
    t.peer_qps.push_back(peer_qps);
    t.ratios.push_back(shoal_qps / peer_qps);
  }
  StatusLine(fmt::format("[compare] QPS at recall {:.2f} ({}) in turns with {}: ratio median {:.2f}",
                         t.recall, batch ? "batch" : "single", t.peer, t.MedianRatio()));
  return t;
}

void ComparePhase(const Config& c, const Dataset& data, const Truth& truth, AnnIndex* shoal,
                  Report& report) {
  for (const PeerFactory& peer : AvailablePeers(data.size(), c.metric, &report.peer_notes)) {
    if (!c.WantPeer(peer.name)) continue;
    std::unique_ptr<AnnIndex> index = peer.make();
    report.peers.push_back(BuildAndSweep(c, *index, data, truth, true, {}));
    if (shoal == nullptr || report.graph.empty()) continue;
    for (const bool batch : {false, true}) {
      std::optional<QpsInTurns> turns = RunQpsInTurns(c, *shoal, report.graph[0].points, *index,
                                                      report.peers.back().points, data, batch);
      if (turns.has_value()) report.qps_in_turns.push_back(std::move(*turns));
    }
  }
  for (const std::string& note : report.peer_notes) StatusLine("[compare] " + note);
}

void LimitsPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report) {
  MeasureMemcpy(c.run.threads, &report.limits);
  MeasureBruteForce(data, c.metric, c.search.k, c.run.threads, truth, &report.limits);
  report.limits.done = true;
}

}  // namespace shoal_bench

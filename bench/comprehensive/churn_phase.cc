// Copyright 2026 The shoal Authors.
//
// The churn phase (--phases churn): a database bulk-loaded with N vectors,
// then R rounds of "delete a fraction of the live vectors, insert as many
// new ones" through Delete and PutBatch(1000) with 4 MiB memtables, so that
// flushes and background merges run as they would for a program. After
// every round: recall@k at the default list size against the live set's
// exact neighbours, single-thread QPS, segments per shard and space
// amplification (segment bytes per live vector against the bulk-loaded
// start's). At the end, Flush + WaitForCompact, and the same figures against
// a fresh BulkLoad of the live set, searched in turns. Two runs: deletes
// drawn uniformly, and deletes clustered (the live vectors nearest to a
// random live one), which hollow out one region of the graph at a time.

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/bench_util.h"
#include "common/ground_truth.h"
#include "common/progress.h"
#include "comprehensive/phases.h"
#include "fmt/core.h"
#include "shoal/db.h"

namespace shoal_bench {
namespace {

constexpr size_t kPutBatch = 1000;
constexpr size_t kMemtableBytes = size_t{4} << 20;

// The live set: ids and their rows, in no order.
struct LiveSet {
  uint32_t dim = 0;
  std::vector<uint64_t> ids;
  std::vector<float> rows;

  size_t size() const { return ids.size(); }
  const float* Row(size_t i) const { return rows.data() + i * dim; }
  void Add(uint64_t id, const float* v) {
    ids.push_back(id);
    rows.insert(rows.end(), v, v + dim);
  }
  // Removes the entries at `positions` (distinct), by swapping in the last.
  void Remove(std::vector<size_t> positions) {
    std::sort(positions.rbegin(), positions.rend());
    for (size_t p : positions) {
      const size_t last = ids.size() - 1;
      ids[p] = ids[last];
      std::copy(Row(last), Row(last) + dim, rows.begin() + p * dim);
      ids.pop_back();
      rows.resize(rows.size() - dim);
    }
  }
};

// Bytes of segment files under `dir`, and how many there are.
void SegmentFiles(const std::string& dir, uint64_t* bytes, size_t* count, size_t* shards) {
  *bytes = 0;
  *count = 0;
  *shards = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.starts_with("shard-")) ++*shards;
    if (name.ends_with(".vamana")) {
      ++*count;
      *bytes += entry.file_size(error);
    }
  }
}

std::unique_ptr<shoal::DB> OpenEmpty(const Config& c, const std::string& dir) {
  CheckOk(RemoveTree(dir), "wipe " + dir);
  shoal::Options o = c.DbOptions(shoal::FsyncPolicy::kNever);
  o.memtable_bytes = kMemtableBytes;
  o.error_if_exists = true;
  return ValueOrDie(shoal::DB::Open(o, dir), "Open " + dir);
}

// Recall@k of one pass over the queries, then single-thread QPS over at
// least `seconds` (repeating the queries).
void Measure(const Config& c, shoal::DB& db, const Dataset& data, const LiveSet& live,
             double seconds, double* recall, double* qps) {
  Dataset truth_data;
  truth_data.spec = data.spec;
  truth_data.ids = live.ids;
  truth_data.base = live.rows;
  truth_data.queries = data.queries;
  const auto truth = BruteForceKnn(truth_data, c.metric, c.search.k, c.run.threads);
  std::vector<std::vector<shoal::Neighbor>> got;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    got.push_back(ValueOrDie(db.Search(data.Query(q), c.search), "Search"));
  }
  *recall = RecallAtK(truth, got, c.search.k);
  size_t done = 0;
  const Stopwatch sw;
  while (sw.Seconds() < seconds) {
    for (size_t q = 0; q < data.num_queries(); ++q, ++done) {
      CheckOk(db.Search(data.Query(q), c.search).status(), "Search");
    }
  }
  *qps = done / sw.Seconds();
}

ChurnRun RunChurn(const Config& c, const Dataset& pool, size_t initial, bool clustered) {
  ChurnRun run;
  run.deletes = clustered ? "clustered" : "uniform";
  run.fraction = c.churn_fraction;
  const uint32_t dim = pool.dim();
  const size_t per_round = std::max<size_t>(1, static_cast<size_t>(initial * c.churn_fraction));
  const std::string dir = c.search_dir + "/churn";
  std::unique_ptr<shoal::DB> db = OpenEmpty(c, dir);
  LiveSet live;
  live.dim = dim;
  for (size_t i = 0; i < initial; ++i) live.Add(pool.ids[i], pool.Row(i).data());
  CheckOk(db->BulkLoad(live.ids, live.rows), "BulkLoad");
  uint64_t bytes;
  size_t files, shards;
  SegmentFiles(dir, &bytes, &files, &shards);
  const double fresh_bytes_per_vector = static_cast<double>(bytes) / initial;

  std::mt19937_64 rng(c.run.seed + (clustered ? 1 : 0));
  size_t next_row = initial;
  Progress progress(fmt::format("churn ({})", run.deletes), c.churn_rounds);
  const Stopwatch total;
  for (uint32_t round = 1; round <= c.churn_rounds; ++round) {
    std::vector<size_t> victims;
    if (clustered) {
      const size_t center = rng() % live.size();
      std::vector<std::pair<float, size_t>> by_distance(live.size());
      for (size_t i = 0; i < live.size(); ++i) {
        float d = 0;
        for (uint32_t j = 0; j < dim; ++j) {
          const float t = live.Row(i)[j] - live.Row(center)[j];
          d += t * t;
        }
        by_distance[i] = {d, i};
      }
      std::nth_element(by_distance.begin(), by_distance.begin() + per_round, by_distance.end());
      for (size_t i = 0; i < per_round; ++i) victims.push_back(by_distance[i].second);
    } else {
      std::vector<size_t> all(live.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
      for (size_t i = 0; i < per_round; ++i) {
        std::swap(all[i], all[i + rng() % (all.size() - i)]);
        victims.push_back(all[i]);
      }
    }
    for (size_t v : victims) CheckOk(db->Delete(live.ids[v]), "Delete");
    live.Remove(victims);
    for (size_t start = 0; start < per_round; start += kPutBatch) {
      const size_t m = std::min(kPutBatch, per_round - start);
      const size_t row = next_row + start;
      CheckOk(db->PutBatch(std::span(pool.ids).subspan(row, m),
                           std::span(pool.base).subspan(row * dim, m * dim)),
              "PutBatch");
      for (size_t i = 0; i < m; ++i) live.Add(pool.ids[row + i], pool.Row(row + i).data());
    }
    next_row += per_round;

    ChurnRound r;
    r.round = round;
    r.live = live.size();
    Measure(c, *db, pool, live, 0.3, &r.recall, &r.qps);
    SegmentFiles(dir, &bytes, &files, &shards);
    r.segments_per_shard = shards == 0 ? 0.0 : static_cast<double>(files) / shards;
    r.space_amplification = static_cast<double>(bytes) / live.size() / fresh_bytes_per_vector;
    run.rounds.push_back(r);
    progress.Add(1);
  }
  CheckOk(db->Flush(), "Flush");
  CheckOk(db->WaitForCompact(), "WaitForCompact");
  run.churn_seconds = total.Seconds();
  Measure(c, *db, pool, live, 1.0, &run.final_recall, &run.final_qps);
  SegmentFiles(dir, &bytes, &files, &shards);
  run.final_segments_per_shard = shards == 0 ? 0.0 : static_cast<double>(files) / shards;
  run.final_space_amplification =
      static_cast<double>(bytes) / live.size() / fresh_bytes_per_vector;

  // A fresh build of the live set, and both searched in turns.
  const std::string fresh_dir = c.search_dir + "/churn-fresh";
  std::unique_ptr<shoal::DB> fresh = OpenEmpty(c, fresh_dir);
  CheckOk(fresh->BulkLoad(live.ids, live.rows), "BulkLoad (fresh)");
  double fresh_qps;
  Measure(c, *fresh, pool, live, 1.0, &run.fresh_recall, &fresh_qps);
  for (int round = 0; round < 5; ++round) {
    double recall, churned_qps;
    Measure(c, *fresh, pool, live, 1.0, &recall, &fresh_qps);
    Measure(c, *db, pool, live, 1.0, &recall, &churned_qps);
    run.qps_ratios.push_back(churned_qps / fresh_qps);
  }
  CheckOk(fresh->Close(), "Close");
  CheckOk(db->Close(), "Close");
  CheckOk(RemoveTree(fresh_dir), "clean up");
  CheckOk(RemoveTree(dir), "clean up");
  StatusLine(fmt::format(
      "[churn]  {}: {} rounds of {:.0f}%: recall {:.4f} (fresh build {:.4f}), QPS ratio median "
      "{:.3f}, {:.1f} segments/shard, space amplification {:.2f}",
      run.deletes, c.churn_rounds, 100 * c.churn_fraction, run.final_recall, run.fresh_recall,
      run.MedianQpsRatio(), run.final_segments_per_shard, run.final_space_amplification));
  return run;
}

}  // namespace

void ChurnPhase(const Config& c, const Dataset& data, Report& report) {
  // The pool: the initial vectors, then every round's new ones.
  const double grow = 1.0 + c.churn_rounds * c.churn_fraction;
  Dataset pool;
  size_t initial;
  if (data.source.starts_with("synthetic")) {
    DatasetSpec spec = data.spec;
    spec.num_vectors = static_cast<size_t>(data.size() * grow) + 1;
    pool = GenerateDataset(spec, c.run.seed);
    pool.queries = data.queries;
    initial = data.size();
  } else {
    pool = data;
    initial = static_cast<size_t>(data.size() / grow);
  }
  report.churn.push_back(RunChurn(c, pool, initial, /*clustered=*/false));
  report.churn.push_back(RunChurn(c, pool, initial, /*clustered=*/true));
}

}  // namespace shoal_bench

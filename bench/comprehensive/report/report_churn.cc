// Copyright 2026 The shoal Authors.
//
// Tables and JSON for the churn phase (churn_phase.cc).

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/json_writer.h"
#include "comprehensive/report/report.h"
#include "fmt/core.h"

namespace shoal_bench {

double ChurnRun::MedianQpsRatio() const { return Median(qps_ratios); }

namespace {

// Mean recall of rounds [begin, end) (1-based rounds, clamped).
double MeanRecall(const ChurnRun& run, size_t begin, size_t end) {
  end = std::min(end, run.rounds.size());
  if (begin >= end) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += run.rounds[i].recall;
  return sum / static_cast<double>(end - begin);
}

}  // namespace

void PrintChurn(const Report& r) {
  for (const ChurnRun& run : r.churn) {
    fmt::print("Churn, {} deletes: each round deletes {:.0f}% of the initial size and inserts as "
               "many new vectors (Delete, PutBatch(1000), 4 MiB memtables); recall@{} at "
               "list_size {}, single-thread QPS\n",
               run.deletes, 100 * run.fraction, r.config.k, r.config.default_list_size);
    fmt::print("  {:>5} {:>8} {:>9} {:>9} {:>14} {:>10}\n", "round", "live", "recall", "QPS",
               "segments/shard", "space amp");
    for (const ChurnRound& x : run.rounds) {
      // Every round while short, else every fifth and the last.
      if (run.rounds.size() > 12 && x.round % 5 != 0 && x.round != run.rounds.size()) continue;
      fmt::print("  {:>5} {:>8} {:>9.4f} {:>9.0f} {:>14.1f} {:>10.2f}\n", x.round, x.live,
                 x.recall, x.qps, x.segments_per_shard, x.space_amplification);
    }
    const size_t n = run.rounds.size();
    fmt::print("  drift: mean recall of the first 10 rounds {:.4f}, of the last 10 {:.4f}\n",
               MeanRecall(run, 0, 10), MeanRecall(run, n >= 10 ? n - 10 : 0, n));
    fmt::print("  after Flush + WaitForCompact ({:.1f} s in all): recall {:.4f} (a fresh BulkLoad "
               "of the live set: {:.4f}), {:.1f} segments/shard, space amplification {:.2f}, "
               "QPS {:.0f}; QPS / fresh build's, searched in turns: median {:.3f}, rounds",
               run.churn_seconds, run.final_recall, run.fresh_recall,
               run.final_segments_per_shard, run.final_space_amplification, run.final_qps,
               run.MedianQpsRatio());
    for (double ratio : run.qps_ratios) fmt::print(" {:.3f}", ratio);
    fmt::print("\n\n");
  }
}

void ChurnToJson(const Report& r, JsonWriter& w) {
  if (r.churn.empty()) return;
  w.Key("churn");
  w.BeginArray();
  for (const ChurnRun& run : r.churn) {
    w.BeginObject();
    w.Field("deletes", run.deletes);
    w.Field("fraction", run.fraction);
    w.Key("rounds");
    w.BeginArray();
    for (const ChurnRound& x : run.rounds) {
      w.BeginObject();
      w.Field("round", x.round);
      w.Field("live", static_cast<uint64_t>(x.live));
      w.Field("recall", x.recall);
      w.Field("qps", x.qps);
      w.Field("segments_per_shard", x.segments_per_shard);
      w.Field("space_amplification", x.space_amplification);
      w.EndObject();
    }
    w.EndArray();
    w.Field("churn_seconds", run.churn_seconds);
    w.Field("final_recall", run.final_recall);
    w.Field("final_qps", run.final_qps);
    w.Field("final_segments_per_shard", run.final_segments_per_shard);
    w.Field("final_space_amplification", run.final_space_amplification);
    w.Field("fresh_recall", run.fresh_recall);
    w.Field("median_qps_ratio", run.MedianQpsRatio());
    w.Field("qps_ratios", run.qps_ratios);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace shoal_bench

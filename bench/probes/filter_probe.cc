// Copyright 2026 The shoal Authors.
//
// Where a filtered search's two paths cross (issue 44): one database of a
// dataset's vectors as records with labels at several selectivities, a
// label per cluster and a timestamp attribute, searched with each kind of
// filter at several lists, with the planner free (--plan auto) or forced to
// scan (scan) or to walk (walk) every segment that has matches. Prints per
// scenario and list: recall@k against the exact answer among the matching
// vectors, QPS on one thread, the share of short answers, and the paths the
// segments took (SearchStats), and how long the scenario's first query took
// (first_ms: what is built on first use, such as a label's graph).
//
//   ./build/bench/filter_probe --dataset embed --queries 300 --plan auto,scan,walk
//
// Figures: docs/performance.md ("Filtered search").

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "common/brute_force.h"
#include "common/dataset.h"
#include "shard/filter_plan.h"
#include "shoal/db.h"
#include "shoal/filter.h"

ABSL_FLAG(std::string, dataset, "embed", "small, medium, large or embed");
ABSL_FLAG(std::string, dir, "/dev/shm/shoal-filter-probe", "scratch directory");
ABSL_FLAG(size_t, queries, 300, "queries a scenario");
ABSL_FLAG(uint32_t, shards, 2, "shards");
ABSL_FLAG(std::string, lists, "10,20,40,80,160", "list sizes");
ABSL_FLAG(std::string, plan, "auto", "comma-separated: auto, scan, walk");
ABSL_FLAG(std::string, scenarios, "", "scenarios to run ('' = all)");
ABSL_FLAG(bool, reuse, false, "reuse the database in --dir when there");

namespace {

using shoal::Filter;
using shoal_bench::Candidate;
using shoal_bench::MatrixView;

constexpr double kSelectivities[] = {0.5, 0.1, 0.03, 0.01, 0.001, 0.0001};
constexpr uint32_t kClusters = 100;
constexpr uint32_t kClusterLabel = 1000;  // + the cluster
constexpr int64_t kTimeRange = 1000000;

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

float L2(const float* a, const float* b, uint32_t dim) {
  float s = 0;
  for (uint32_t d = 0; d < dim; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
  return s;
}

struct Scenario {
  std::string name;
  std::vector<Filter> filters;                  // one a query; none: unfiltered
  std::vector<std::vector<uint64_t>> truth;     // ids, k a query (fewer when fewer match)
  double matching = 0;                          // mean share of the data that matches
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<shoal_bench::DatasetSpec> spec =
      shoal_bench::DatasetSpecByName(absl::GetFlag(FLAGS_dataset));
  Check(spec.status(), "dataset");
  spec->num_queries = absl::GetFlag(FLAGS_queries);
  const shoal_bench::Dataset data = shoal_bench::GenerateDataset(*spec, 42);
  const size_t n = data.size(), nq = data.num_queries();
  const uint32_t dim = data.dim(), k = 10;
  const shoal::Metric metric =
      spec->metric == "cosine" ? shoal::Metric::kCosine : shoal::Metric::kL2;

  // Labels: selectivity i's label is i + 1, drawn independently per vector;
  // the cluster's label (nearest of kClusters sampled rows); a timestamp.
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint32_t>> labels(n);
  std::vector<uint32_t> cluster(n);
  std::vector<shoal::AttributeValue> ts(n);
  std::vector<uint32_t> centres(kClusters);
  for (uint32_t& c : centres) c = static_cast<uint32_t>(rng() % n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t s = 0; s < std::size(kSelectivities); ++s) {
      if (std::uniform_real_distribution<double>()(rng) < kSelectivities[s]) {
        labels[i].push_back(static_cast<uint32_t>(s + 1));
      }
    }
    float best = 1e30f;
    for (uint32_t c = 0; c < kClusters; ++c) {
      const float d = L2(data.Row(i).data(), data.Row(centres[c]).data(), dim);
      if (d < best) best = d, cluster[i] = c;
    }
    labels[i].push_back(kClusterLabel + cluster[i]);
    ts[i] = {0, static_cast<int64_t>(rng() % kTimeRange)};
  }

  const std::string dir = absl::GetFlag(FLAGS_dir);
  shoal::Options o;
  o.default_collection.dim = dim;
  o.default_collection.metric = metric;
  o.default_collection.shard_count = absl::GetFlag(FLAGS_shards);
  o.default_collection.attributes = {"ts"};
  o.compaction.automatic = false;
  if (!absl::GetFlag(FLAGS_reuse) || !std::filesystem::exists(dir)) {
    std::filesystem::remove_all(dir);
    absl::StatusOr<std::unique_ptr<shoal::DB>> db = shoal::DB::Open(o, dir);
    Check(db.status(), "create");
    std::vector<shoal::Record> records(n);
    for (size_t i = 0; i < n; ++i) {
      records[i] = shoal::Record{data.ids[i], data.Row(i), labels[i], {&ts[i], 1}, {}};
    }
    const auto start = std::chrono::steady_clock::now();
    Check((*db)->BulkLoad(records), "bulk load");
    std::printf("bulk load of %zu records: %.1f s\n", n,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    Check((*db)->Close(), "close");
  }
  absl::StatusOr<std::unique_ptr<shoal::DB>> opened = shoal::DB::Open(o, dir);
  Check(opened.status(), "open");
  shoal::DB& db = **opened;

  // Scenarios and their exact answers (brute force over the matching rows).
  std::vector<Scenario> scenarios;
  auto add = [&](const std::string& name, auto&& filter_of, auto&& matches) {
    const std::string only = absl::GetFlag(FLAGS_scenarios);
    if (!only.empty() && only.find(name) == std::string::npos) return;
    Scenario sc{name, {}, {}, 0};
    for (size_t q = 0; q < nq; ++q) {
      sc.filters.push_back(filter_of(q));
      std::vector<float> rows;
      std::vector<uint64_t> ids;
      for (size_t i = 0; i < n; ++i) {
        if (!matches(q, i)) continue;
        rows.insert(rows.end(), data.Row(i).begin(), data.Row(i).end());
        ids.push_back(data.ids[i]);
      }
      sc.matching += static_cast<double>(ids.size()) / n / nq;
      std::vector<uint64_t> truth;
      if (!ids.empty()) {
        const auto knn = shoal_bench::ExactKnnFloat(MatrixView{rows.data(), ids.size(), dim},
                                                    MatrixView{data.Query(q).data(), 1, dim},
                                                    metric, k, 0, nullptr);
        for (const Candidate& c : knn[0]) truth.push_back(ids[c.row]);
      }
      sc.truth.push_back(std::move(truth));
    }
    scenarios.push_back(std::move(sc));
  };
  {  // Unfiltered, for reference.
    const std::string only = absl::GetFlag(FLAGS_scenarios);
    if (only.empty() || only.find("none") != std::string::npos) {
      Scenario sc{"none", {}, {}, 1};
      const auto knn = shoal_bench::ExactKnnFloat(
          MatrixView{data.base.data(), n, dim}, MatrixView{data.queries.data(), nq, dim}, metric,
          k, 0, nullptr);
      for (const auto& row : knn) {
        std::vector<uint64_t> truth;
        for (const Candidate& c : row) truth.push_back(data.ids[c.row]);
        sc.truth.push_back(std::move(truth));
      }
      scenarios.push_back(std::move(sc));
    }
  }
  auto has = [&](size_t i, uint32_t label) {
    return std::find(labels[i].begin(), labels[i].end(), label) != labels[i].end();
  };
  for (size_t s = 0; s < std::size(kSelectivities); ++s) {
    const uint32_t label = static_cast<uint32_t>(s + 1);
    char name[32];
    std::snprintf(name, sizeof(name), "uniform-%g%%", 100 * kSelectivities[s]);
    add(name, [&](size_t) { return Filter::AnyLabel({label}); },
        [&](size_t, size_t i) { return has(i, label); });
  }
  // The query's nearest and farthest centre.
  std::vector<uint32_t> near(nq), far(nq);
  for (size_t q = 0; q < nq; ++q) {
    float best = 1e30f, worst = -1;
    for (uint32_t c = 0; c < kClusters; ++c) {
      const float d = L2(data.Query(q).data(), data.Row(centres[c]).data(), dim);
      if (d < best) best = d, near[q] = c;
      if (d > worst) worst = d, far[q] = c;
    }
  }
  add("cluster-own", [&](size_t q) { return Filter::AnyLabel({kClusterLabel + near[q]}); },
      [&](size_t q, size_t i) { return cluster[i] == near[q]; });
  add("cluster-far", [&](size_t q) { return Filter::AnyLabel({kClusterLabel + far[q]}); },
      [&](size_t q, size_t i) { return cluster[i] == far[q]; });
  add("range-5%", [&](size_t) { return Filter::Range("ts", 0, kTimeRange / 20); },
      [&](size_t, size_t i) { return ts[i].value < kTimeRange / 20; });
  add("and-50%x10%",
      [&](size_t) { return Filter::And({Filter::AnyLabel({1}), Filter::AnyLabel({2})}); },
      [&](size_t, size_t i) { return has(i, 1) && has(i, 2); });
  // A label nobody has: every segment skipped, the answer empty. Its QPS
  // is a filtered search's fixed cost (checks, planning, shards, merge).
  add("absent", [&](size_t) { return Filter::AnyLabel({kClusterLabel - 1}); },
      [&](size_t, size_t) { return false; });

  std::printf("%s: %zu x %u, %u shards, %zu queries, k %u, one thread\n",
              spec->name.c_str(), n, dim, absl::GetFlag(FLAGS_shards), nq, k);
  std::printf("%-14s %-5s %5s %7s %9s %6s %10s %8s %8s %8s %6s %9s\n", "scenario", "plan", "L",
              "match", "recall", "short", "QPS", "scanned", "walked", "short_w", "skip",
              "first_ms");
  const std::vector<std::string> plans = absl::StrSplit(absl::GetFlag(FLAGS_plan), ',');
  const std::vector<std::string> lists = absl::StrSplit(absl::GetFlag(FLAGS_lists), ',');
  for (const std::string& plan : plans) {
    shoal::FilterScanCost() = plan == "scan"   ? ~uint64_t{0} / (1 << 20)
                              : plan == "walk" ? 0
                                               : shoal::kDefaultFilterScanCost;
    for (const Scenario& sc : scenarios) {
      for (const std::string& l : lists) {
        shoal::SearchOptions so;
        so.k = k;
        so.list_size = static_cast<uint32_t>(std::stoul(l));
        shoal::SearchStats stats;
        so.stats = &stats;
        double hits = 0, wanted = 0;
        size_t shorts = 0;
        // The first query of a scenario in this process: what a search
        // that builds something on first use (a label's graph) costs.
        // Warm: pages, scratch, orders by value, and label graphs (again
        // until no walk waits for one still being built, at most 30 s).
        double first_ms = 0;
        const auto warming = std::chrono::steady_clock::now();
        do {
          stats = shoal::SearchStats();
          for (size_t q = 0; q < nq; ++q) {
            so.filter = sc.filters.empty() ? nullptr : &sc.filters[q];
            const auto at = std::chrono::steady_clock::now();
            Check(db.Search(data.Query(q), so).status(), "search");
            if (first_ms == 0) {
              first_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - at).count();
            }
          }
        } while (stats.filter_label_graph_pending > 0 &&
                 std::chrono::steady_clock::now() - warming < std::chrono::seconds(30));
        stats = shoal::SearchStats();
        const auto start = std::chrono::steady_clock::now();
        for (size_t q = 0; q < nq; ++q) {
          so.filter = sc.filters.empty() ? nullptr : &sc.filters[q];
          absl::StatusOr<std::vector<shoal::Neighbor>> r = db.Search(data.Query(q), so);
          Check(r.status(), "search");
          const std::vector<uint64_t>& truth = sc.truth[q];
          if (r->size() < truth.size()) ++shorts;
          for (const shoal::Neighbor& nb : *r) {
            hits += std::find(truth.begin(), truth.end(), nb.id) != truth.end();
          }
          wanted += static_cast<double>(truth.size());
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double segs = static_cast<double>(std::max<uint64_t>(
            1, stats.filter_scanned + stats.filter_walked - stats.filter_short_walks +
                   stats.filter_skipped));
        std::printf("%-14s %-5s %5s %6.3f%% %9.4f %6zu %10.0f %8.2f %8.2f %8.2f %6.2f %9.2f\n",
                    sc.name.c_str(), plan.c_str(), l.c_str(), 100 * sc.matching,
                    wanted == 0 ? 1.0 : hits / wanted, shorts, nq / seconds,
                    stats.filter_scanned / segs, stats.filter_walked / segs,
                    stats.filter_short_walks / segs, stats.filter_skipped / segs, first_ms);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

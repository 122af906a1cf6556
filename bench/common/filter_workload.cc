// Copyright 2026 The shoal Authors.

#include "common/filter_workload.h"

#include <algorithm>
#include <map>
#include <random>

#include "absl/status/status.h"
#include "common/bench_util.h"
#include "common/brute_force.h"
#include "common/kmeans.h"
#include "common/progress.h"
#include "fmt/core.h"

namespace shoal_bench {
namespace {

bool HasLabel(std::span<const uint32_t> labels, uint32_t label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// Labels and ts of every row (the file comment's draws), and each row's
// cluster in `cluster` when clusters > 0.
void TagRows(const Dataset& data, const FilterWorkloadSettings& s,
             const std::vector<uint32_t>& cluster, FilterWorkload& w) {
  std::mt19937_64 rng(s.seed ^ 0x9e3779b97f4a7c15ull);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int64_t> ts(0, kTsRange - 1);
  w.label_begin.reserve(data.size() + 1);
  w.ts.reserve(data.size());
  for (size_t r = 0; r < data.size(); ++r) {
    w.label_begin.push_back(w.labels.size());
    for (size_t i = 0; i < s.selectivities.size(); ++i) {
      if (unit(rng) < s.selectivities[i]) w.labels.push_back(kUniformLabel + uint32_t(i));
    }
    if (!cluster.empty()) w.labels.push_back(kClusterLabel + cluster[r]);
    if (unit(rng) < s.and_fraction) w.labels.push_back(kAndLabelA);
    if (unit(rng) < s.and_fraction) w.labels.push_back(kAndLabelB);
    w.ts.push_back({0, ts(rng)});
  }
  w.label_begin.push_back(w.labels.size());
}

Predicate MakePredicate(shoal::Filter filter, const Dataset& data, const FilterWorkload& w) {
  Predicate p;
  p.bitmap.assign((data.size() + 7) / 8, 0);
  for (size_t r = 0; r < data.size(); ++r) {
    if (MatchesFilter(filter, w.Labels(r), w.ts[r].value, data.ids[r])) {
      p.bitmap[r / 8] |= uint8_t(1u << (r % 8));
      p.rows.push_back(static_cast<uint32_t>(r));
    }
  }
  p.filter = std::move(filter);
  return p;
}

FilterScenario NewScenario(std::string name, std::string family, double target) {
  FilterScenario sc;
  sc.name = std::move(name);
  sc.family = std::move(family);
  sc.target = target;
  return sc;
}

// A scenario whose every query has the one predicate `filter`.
FilterScenario OnePredicate(std::string name, std::string family, double target,
                            shoal::Filter filter, const Dataset& data, const FilterWorkload& w) {
  FilterScenario sc = NewScenario(std::move(name), std::move(family), target);
  sc.predicates.push_back(MakePredicate(std::move(filter), data, w));
  sc.query_predicate.assign(data.num_queries(), 0);
  return sc;
}

// "50%", "0.1%", "0.01%".
std::string Percent(double fraction) { return fmt::format("{:g}%", 100 * fraction); }

// The two cluster scenarios: every query's nearest centre, and its farthest
// centre among clusters of at least k rows.
void AddClusterScenarios(const Dataset& data, shoal::Metric metric, const KMeansResult& km,
                         const FilterWorkloadSettings& s, FilterWorkload& w) {
  const uint32_t k = static_cast<uint32_t>(km.centroids.size() / data.dim());
  std::vector<size_t> sizes(k, 0);
  for (const uint32_t c : km.assignment) ++sizes[c];
  std::vector<float> normalized;
  MatrixView queries{data.queries.data(), data.num_queries(), data.dim()};
  if (metric != shoal::Metric::kL2) {
    normalized = NormalizedRows(queries);
    queries.data = normalized.data();
  }
  const auto ranked = ExactKnnFloat({km.centroids.data(), k, data.dim()}, queries,
                                    shoal::Metric::kL2, k, s.threads, nullptr);
  for (const bool near : {true, false}) {
    FilterScenario sc = NewScenario(near ? "cluster near" : "cluster far", "cluster", 0);
    std::map<uint32_t, uint32_t> predicate_of;  // cluster -> index in sc.predicates
    for (size_t q = 0; q < data.num_queries(); ++q) {
      uint32_t cluster = ranked[q].front().row;
      if (!near) {
        for (const Candidate& c : ranked[q]) {
          if (sizes[c.row] >= s.k) cluster = c.row;  // the last big enough one
        }
      }
      auto [it, added] = predicate_of.emplace(cluster, uint32_t(sc.predicates.size()));
      if (added) {
        sc.predicates.push_back(
            MakePredicate(shoal::Filter::AnyLabel({kClusterLabel + cluster}), data, w));
      }
      sc.query_predicate.push_back(it->second);
    }
    w.scenarios.push_back(std::move(sc));
  }
}

void AddRangeScenario(const Dataset& data, const FilterWorkloadSettings& s, FilterWorkload& w) {
  const int64_t width = std::max<int64_t>(1, int64_t(s.range_fraction * kTsRange));
  FilterScenario sc = NewScenario("range " + Percent(s.range_fraction), "range", s.range_fraction);
  std::mt19937_64 rng(s.seed ^ 0x2545f4914f6cdd1dull);
  std::uniform_int_distribution<int64_t> lo(0, std::max<int64_t>(0, kTsRange - width));
  for (uint32_t i = 0; i < std::max(1u, s.range_windows); ++i) {
    const int64_t a = lo(rng);
    sc.predicates.push_back(MakePredicate(shoal::Filter::Range(kTsAttribute, a, a + width), data, w));
  }
  for (size_t q = 0; q < data.num_queries(); ++q) {
    sc.query_predicate.push_back(static_cast<uint32_t>(q % sc.predicates.size()));
  }
  w.scenarios.push_back(std::move(sc));
}

void ComputeTruth(const Dataset& data, const ExactScan& scan, uint32_t k, uint32_t threads,
                  FilterScenario& sc) {
  const Stopwatch sw;
  Progress progress("filtered truth " + sc.name, data.num_queries());
  sc.truth.assign(data.num_queries(), {});
  ParallelChunks(data.num_queries(), threads, 4, [&](size_t begin, size_t end) {
    for (size_t q = begin; q < end; ++q) {
      for (const Candidate& c : scan.Search(data.Query(q).data(), k, sc.ForQuery(q).rows)) {
        sc.truth[q].push_back(data.ids[c.row]);
      }
    }
    progress.Add(end - begin);
  });
  sc.truth_seconds = sw.Seconds();
}

bool Wants(const FilterWorkloadSettings& s, const char* family) {
  return std::find(s.families.begin(), s.families.end(), family) != s.families.end();
}

}  // namespace

double FilterScenario::Selectivity(size_t num_rows) const {
  if (query_predicate.empty() || num_rows == 0) return 0;
  double sum = 0;
  for (const uint32_t p : query_predicate) sum += predicates[p].rows.size();
  return sum / query_predicate.size() / num_rows;
}

size_t FilterScenario::QueriesWithK(uint32_t k) const {
  size_t n = 0;
  for (const uint32_t p : query_predicate) n += predicates[p].rows.size() >= k;
  return n;
}

std::vector<shoal::Record> FilterWorkload::Records(const Dataset& data) const {
  std::vector<shoal::Record> out(data.size());
  for (size_t r = 0; r < data.size(); ++r) {
    out[r].id = data.ids[r];
    out[r].vector = data.Row(r);
    out[r].labels = Labels(r);
    out[r].attributes = {&ts[r], 1};
  }
  return out;
}

bool MatchesFilter(const shoal::Filter& f, std::span<const uint32_t> labels, int64_t ts,
                   uint64_t id) {
  using Kind = shoal::Filter::Kind;
  switch (f.kind) {
    case Kind::kAnyLabel:
      return std::any_of(f.labels.begin(), f.labels.end(),
                         [&](uint32_t l) { return HasLabel(labels, l); });
    case Kind::kAllLabels:
      return std::all_of(f.labels.begin(), f.labels.end(),
                         [&](uint32_t l) { return HasLabel(labels, l); });
    case Kind::kNoLabel:
      return std::none_of(f.labels.begin(), f.labels.end(),
                          [&](uint32_t l) { return HasLabel(labels, l); });
    case Kind::kRange:
      return f.attribute == kTsAttribute && ts >= f.lower && (!f.upper_bounded || ts < f.upper);
    case Kind::kIds:
      return f.ids(id);
    case Kind::kAnd:
      return std::all_of(f.children.begin(), f.children.end(), [&](const shoal::Filter& c) {
        return MatchesFilter(c, labels, ts, id);
      });
    case Kind::kOr:
      return std::any_of(f.children.begin(), f.children.end(), [&](const shoal::Filter& c) {
        return MatchesFilter(c, labels, ts, id);
      });
  }
  return false;
}

FilterWorkload MakeFilterWorkload(const Dataset& data, shoal::Metric metric,
                                  const FilterWorkloadSettings& s) {
  for (const std::string& f : s.families) {
    if (f != "uniform" && f != "cluster" && f != "range" && f != "and") {
      Die("--filter_scenarios", absl::InvalidArgumentError(fmt::format(
                                    "unknown family '{}' (uniform, cluster, range, and)", f)));
    }
  }
  for (const double sel : s.selectivities) {
    if (!(sel > 0 && sel <= 1)) {
      Die("--filter_selectivities",
          absl::InvalidArgumentError(fmt::format("{} is not in (0, 1]", sel)));
    }
  }
  FilterWorkload w;
  KMeansResult km;
  if (Wants(s, "cluster")) {
    Progress progress(fmt::format("k-means, {} clusters", s.clusters), 0);
    KMeansSettings ks;
    ks.clusters = s.clusters;
    ks.normalize = metric != shoal::Metric::kL2;
    ks.seed = s.seed;
    ks.threads = s.threads;
    km = KMeans({data.base.data(), data.size(), data.dim()}, ks);
  }
  TagRows(data, s, km.assignment, w);
  if (Wants(s, "uniform")) {
    for (size_t i = 0; i < s.selectivities.size(); ++i) {
      w.scenarios.push_back(OnePredicate(
          "uniform " + Percent(s.selectivities[i]), "uniform", s.selectivities[i],
          shoal::Filter::AnyLabel({kUniformLabel + uint32_t(i)}), data, w));
    }
  }
  if (Wants(s, "cluster")) AddClusterScenarios(data, metric, km, s, w);
  if (Wants(s, "range")) AddRangeScenario(data, s, w);
  if (Wants(s, "and")) {
    w.scenarios.push_back(OnePredicate(
        fmt::format("and {}x{}", Percent(s.and_fraction), Percent(s.and_fraction)), "and",
        s.and_fraction * s.and_fraction,
        shoal::Filter::And({shoal::Filter::AnyLabel({kAndLabelA}),
                            shoal::Filter::AnyLabel({kAndLabelB})}),
        data, w));
  }
  const ExactScan scan({data.base.data(), data.size(), data.dim()}, metric);
  for (FilterScenario& sc : w.scenarios) ComputeTruth(data, scan, s.k, s.threads, sc);
  return w;
}

}  // namespace shoal_bench

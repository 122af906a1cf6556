// Copyright 2026 The shoal Authors.
//
// --phases filter (issue 44): filtered search on the labels and attribute
// of the filter workload (common/filter_workload.h). shoal bulk-loads the
// records (CollectionOptions::attributes = {"ts"}); the peers (those of
// --compare that can filter: hnswlib with its filter functor, faiss HNSW
// and IVF with an IDSelectorBitmap) and two exact searches (faiss Flat with
// the same selector, checked on every row; the exact scan of the matching
// rows, which is handed their list) are built on the same vectors. Then, scenario after scenario, each index
// is swept over its knob (filter_sweep.h); the report reads QPS at the
// cheapest point reaching recall kFilterRecall (report_filter.cc).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/bench_util.h"
#include "common/filter_workload.h"
#include "common/progress.h"
#include "comprehensive/filter_sweep.h"
#include "comprehensive/phases.h"
#include "comprehensive/shoal_index.h"
#include "fmt/core.h"
#include "peers/peers.h"

namespace shoal_bench {
namespace {

struct Indexed {
  std::unique_ptr<AnnIndex> index;
  ShoalIndex* shoal = nullptr;  // index, when it is shoal
};

IndexRun BuildOne(const Config& c, AnnIndex& index, const Dataset& data) {
  IndexRun run = BuildIndex(c, index, data);
  StatusLine(fmt::format("[filter] built {:<24} {}: {} vectors in {:.3f} s", run.index,
                         run.build.method, run.build.vectors, run.build.seconds));
  return run;
}

// shoal and the peers --peers names (the exact ones last), each built.
std::vector<Indexed> BuildAll(const Config& c, const Dataset& data,
                              std::span<const shoal::Record> records, FilterFigures& f) {
  std::vector<Indexed> out;
  shoal::Options options = c.DbOptions(shoal::FsyncPolicy::kNever);
  options.default_collection.attributes = {kTsAttribute};
  auto shoal = std::make_unique<ShoalIndex>(ShoalIndex::Load::kBulkLoad,
                                            c.search_dir + "/filter", options, c.search);
  shoal->SetRecords(records);
  ShoalIndex* shoal_ptr = shoal.get();
  out.push_back({std::move(shoal), shoal_ptr});
  std::vector<PeerFactory> peers = AvailablePeers(data.size(), c.metric, &f.notes);
  for (PeerFactory& peer : FilterOnlyPeers(c.metric)) peers.push_back(std::move(peer));
  for (const PeerFactory& peer : peers) {
    if (c.WantPeer(peer.name)) out.push_back({peer.make(), nullptr});
  }
  for (Indexed& x : out) f.builds.push_back(BuildOne(c, *x.index, data));
  return out;
}

FilterScenarioFigures Describe(const FilterScenario& sc, const Dataset& data, uint32_t k) {
  FilterScenarioFigures s;
  s.name = sc.name;
  s.family = sc.family;
  s.target = sc.target;
  s.selectivity = sc.Selectivity(data.size());
  s.queries = data.num_queries();
  s.queries_with_k = sc.QueriesWithK(k);
  s.predicates = sc.predicates.size();
  s.truth_seconds = sc.truth_seconds;
  return s;
}

}  // namespace

void FilterPhase(const Config& c, const Dataset& data, Report& report) {
  FilterFigures& f = report.filter;
  const Stopwatch sw;
  FilterWorkloadSettings ws;
  ws.families = c.filter.families;
  ws.selectivities = c.filter.selectivities;
  ws.clusters = c.filter.clusters;
  ws.k = c.search.k;
  ws.seed = c.run.seed;
  ws.threads = c.run.threads;
  const FilterWorkload workload = MakeFilterWorkload(data, c.metric, ws);
  f.workload_seconds = sw.Seconds();
  for (const FilterScenario& sc : workload.scenarios) {
    f.scenarios.push_back(Describe(sc, data, c.search.k));
    const FilterScenarioFigures& s = f.scenarios.back();
    StatusLine(fmt::format("[filter] scenario {:<14} selectivity {:.5f} ({} predicates, {} of "
                           "{} queries match >= {} rows)", s.name, s.selectivity, s.predicates,
                           s.queries_with_k, s.queries, c.search.k));
  }
  const std::vector<shoal::Record> records = workload.Records(data);
  std::vector<Indexed> indexes = BuildAll(c, data, records, f);
  for (size_t i = 0; i < workload.scenarios.size(); ++i) {
    for (Indexed& x : indexes) {
      FilterSweepSettings s;
      s.k = c.search.k;
      s.threads = c.run.threads;
      s.budget_s = c.filter.budget_s;
      if (x.shoal != nullptr) {
        s.knobs = c.filter.list_sizes;
        s.set_stats = [shoal = x.shoal](shoal::SearchStats* st) { shoal->SetStats(st); };
      }
      f.scenarios[i].runs.push_back(RunFilterSweep(*x.index, data, workload.scenarios[i], s));
      if (!f.scenarios[i].runs.back().note.empty()) {
        StatusLine(fmt::format("[filter] {}: {}", x.index->Name(),
                               f.scenarios[i].runs.back().note));
      }
    }
  }
  f.done = true;
}

}  // namespace shoal_bench

// Copyright 2026 The shoal Authors.
//
// What one run of comprehensive_bench is configured to do, and its phases.
// Each phase appends its figures to the Report and prints one-line progress
// reports on stderr.
//   write_phases.cc   ingest, raw, group: the write path and its baselines
//   search_phases.cc  search (exact, memtables), build, sweep, compare, limits
//                     (machine_limits.cc)

#ifndef SHOAL_BENCH_PHASES_H_
#define SHOAL_BENCH_PHASES_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dataset.h"
#include "report.h"
#include "shoal/db.h"
#include "shoal/options.h"

namespace shoal_bench {

struct Target {
  std::string name;  // "shm" or "disk"
  std::string dir;   // scratch directory; the bench only touches DbDir and the raw file
  std::string DbDir() const { return dir + "/db"; }
  std::string RawFile() const { return dir + "/raw-write.bin"; }
};

struct Config {
  RunConfig run;  // echoed in the report
  shoal::Metric metric = shoal::Metric::kL2;
  std::vector<Target> targets;   // of the write phases
  size_t sustained_vectors = 0;  // a write run's vectors (--write_vectors; at least the base set)
  std::string search_dir;        // databases of search, build and sweep (--dir)
  std::vector<std::string> phases;
  std::string output;
  shoal::GraphOptions graph;     // of the collection built for build/sweep
  shoal::VectorCode code = shoal::CollectionOptions{}.code;
  shoal::SearchOptions search;   // k, the default list_size, beam_width
  std::vector<uint32_t> list_sizes;  // the sweep
  double sweep_budget_s = 0;     // single-thread queries per sweep point
  bool compare = false;          // build and sweep the peers too
  uint32_t churn_rounds = 50;    // --phases churn: rounds, and the fraction of the
  double churn_fraction = 0.05;  // initial size deleted and inserted each round
  std::vector<std::string> peers;  // run a peer whose name contains one (empty: all)

  bool HasPhase(std::string_view name) const {
    return std::find(phases.begin(), phases.end(), name) != phases.end();
  }
  bool WantPeer(std::string_view name) const {
    if (peers.empty()) return true;
    for (const std::string& p : peers) {
      if (name.find(p) != std::string_view::npos) return true;
    }
    return false;
  }
  const Target* FindTarget(std::string_view name) const {
    for (const Target& t : targets) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  // Options for a fresh database: this run's collection shape and memtable size.
  shoal::Options DbOptions(shoal::FsyncPolicy policy) const;
};

// Wipes target's database directory and opens a new database there.
std::unique_ptr<shoal::DB> OpenFresh(const Config& c, const Target& t, shoal::FsyncPolicy policy);
// Closes `db` (timing it) and removes its files.
double CloseAndWipe(std::unique_ptr<shoal::DB> db, const Target& t);

void IngestPhase(const Config& c, const Dataset& data, Report& report);
void RawPhase(const Config& c, const Dataset& data, Report& report);
void GroupCommitPhase(const Config& c, const Dataset& data, Report& report);

// `truth`: the exact k nearest ids of every query.
using Truth = std::vector<std::vector<uint64_t>>;
void SearchPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report);
// build (BulkLoad and Put+Flush timed) and sweep (recall/QPS over list_size).
void GraphPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report);
// Every peer compiled in, built and swept on the same data.
void ComparePhase(const Config& c, const Dataset& data, const Truth& truth, Report& report);
void LimitsPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report);
// Rounds of deletes and inserts on a living database (churn_phase.cc).
void ChurnPhase(const Config& c, const Dataset& data, Report& report);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_PHASES_H_

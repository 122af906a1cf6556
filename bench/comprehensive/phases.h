// Copyright 2026 The shoal Authors.
//
// What one run of comprehensive_bench is configured to do, and its phases.
// Each phase appends its figures to the Report and prints one-line progress
// reports on stderr.
//   write_phases.cc   ingest, raw, group: the write path and its baselines
//   search_phases.cc  search (exact, memtables), build, sweep, compare, limits
//                     (machine_limits.cc)
//   disk_phase.cc     disk: SegmentStorage::kDisk, searched in a child process
//                     (disk_child.cc)
//   filter_phase.cc   filter: filtered search, shoal and the peers side by side

#ifndef SHOAL_BENCH_COMPREHENSIVE_PHASES_H_
#define SHOAL_BENCH_COMPREHENSIVE_PHASES_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/dataset.h"
#include "comprehensive/report/report.h"
#include "peers/ann_index.h"
#include "shoal/db.h"
#include "shoal/options.h"

namespace shoal_bench {

struct Target {
  std::string name;  // "shm" or "disk"
  std::string dir;   // scratch directory; the bench only touches DbDir and the raw file
  std::string DbDir() const { return dir + "/db"; }
  std::string RawFile() const { return dir + "/raw-write.bin"; }
};

// --phases disk: where its database lives and what the child sweeps.
struct DiskSettings {
  std::string dir;        // the database and the files shared with the child; kept
  bool rebuild = false;   // build even when the marker says the database is this data's
  std::vector<std::string> kinds;       // SearchVariants to run by name (empty: all)
  std::vector<uint32_t> list_sizes;     // L of the sweep (>= k)
  std::vector<uint32_t> beam_widths;    // W of the sweep
  std::vector<uint32_t> threads;        // of the thread sweep
  double min_seconds = 1.0;             // per point, after every query once
  size_t node_cache_bytes = 0;          // Options::node_cache_bytes
  size_t memory_budget_bytes = 0;       // Options::memory_budget_bytes (0: none)
  std::string diskann_results;          // bench/peers/diskann_disk_peer.py --output file
  std::vector<std::string> child_args;  // this process's arguments, handed to the child
};

// --phases filter: what its workload holds and how it sweeps
// (filter_workload.h for the families).
struct FilterSettings {
  std::vector<std::string> families;   // of FilterWorkloadSettings
  std::vector<double> selectivities;   // of the uniform family
  uint32_t clusters = 100;             // k-means clusters of the cluster family
  std::vector<uint32_t> list_sizes;    // shoal's sweep (the peers sweep their defaults)
  double budget_s = 1.0;               // single-thread pass of a point
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
  uint32_t build_rounds = 5;     // --phases builds: rounds of builds in turns
  DiskSettings disk;
  FilterSettings filter;

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
// Builds `index` over every row of `data` on c.run.threads threads: its
// IndexRun with the names, the build figures and the index's bytes (search
// phases, filter phase). Dies on a build error.
IndexRun BuildIndex(const Config& c, AnnIndex& index, const Dataset& data);
// Closes `db` (timing it) and removes its files.
double CloseAndWipe(std::unique_ptr<shoal::DB> db, const Target& t);

void IngestPhase(const Config& c, const Dataset& data, Report& report);
void RawPhase(const Config& c, const Dataset& data, Report& report);
void GroupCommitPhase(const Config& c, const Dataset& data, Report& report);

// `truth`: the exact k nearest ids of every query.
using Truth = std::vector<std::vector<uint64_t>>;
void SearchPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report);
// build (BulkLoad and Put+Flush timed) and sweep (recall/QPS over list_size).
// Returns the bulk-loaded index, still open, for ComparePhase's searches in
// turns when c.compare (null otherwise).
std::unique_ptr<AnnIndex> GraphPhase(const Config& c, const Dataset& data, const Truth& truth,
                                     Report& report);
// Every peer compiled in, built and swept on the same data; with `shoal`
// (GraphPhase's bulk-loaded index, swept: report.graph[0]), each peer's and
// shoal's QPS at kInTurnsRecall are then measured in turns (QpsInTurns).
void ComparePhase(const Config& c, const Dataset& data, const Truth& truth, AnnIndex* shoal,
                  Report& report);
// shoal's BulkLoad and each peer's build, from scratch, in turns
// (build_rounds.cc).
void BuildRoundsPhase(const Config& c, const Dataset& data, Report& report);
void LimitsPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report);
// Rounds of deletes and inserts on a living database (churn_phase.cc).
void ChurnPhase(const Config& c, const Dataset& data, Report& report);
// Disk-resident search (disk_phase.cc): builds (or reuses) the database in
// c.disk.dir, then runs this binary again with --disk_child to search it.
void DiskPhase(const Config& c, const Dataset& data, const Truth& truth, Report& report);
// The child's side (disk_child.cc): opens the database in c.disk.dir with
// SegmentStorage::kDisk, reads the queries the parent wrote there, sweeps,
// and writes its DiskFigures there as JSON (DiskChildResultPath). `k` and
// `worker_threads` as the parent's. Returns the exit status; dies on errors.
int DiskChildMain(const DiskSettings& s, uint32_t k, uint32_t worker_threads);
std::string DiskChildResultPath(const std::string& dir);
// Filtered search (filter_phase.cc): the filter workload's records
// bulk-loaded into shoal, the peers built on the same vectors, and every
// index swept over every scenario.
void FilterPhase(const Config& c, const Dataset& data, Report& report);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMPREHENSIVE_PHASES_H_

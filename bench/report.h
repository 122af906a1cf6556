// Copyright 2026 The shoal Authors.
//
// The figures comprehensive_bench measures, and how they are shown: a table
// on stdout and a JSON document with the same numbers.
//
// Units: MB = 10^6 bytes of vector payload (dim * 4 bytes per vector; ids and
// log framing are not counted), rates are per wall-clock second.

#ifndef SHOAL_BENCH_REPORT_H_
#define SHOAL_BENCH_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shoal_bench {

struct RunConfig {
  std::string dataset;
  size_t num_vectors = 0;
  uint32_t dim = 0;
  size_t num_queries = 0;
  uint32_t num_clusters = 0;
  size_t base_bytes = 0;
  std::string metric;
  uint64_t seed = 0;
  uint32_t threads = 0;  // Options::worker_threads (0 = all cores)
  uint32_t shards = 0;   // CollectionOptions::shard_count (0 = one per core)
  uint32_t writers = 0;  // group-commit writer threads
  int reps = 1;
  double time_budget_s = 0;
  double search_budget_s = 0;
  size_t memtable_bytes = 0;
  uint32_t sync_interval_us = 0;
  std::string shm_dir;
  std::string disk_dir;
  unsigned hardware_threads = 0;
};

struct IngestResult {
  std::string target;  // "shm" or "disk"
  std::string policy;  // "never", "interval" or "always"
  size_t batch = 0;    // 0: one Put per vector; else PutBatch of `batch` rows
  size_t vectors = 0;  // written before the end of data or of the budget
  size_t bytes = 0;
  double seconds = 0;        // the writes only; Open and Close excluded
  double close_seconds = 0;  // Close(), which syncs every log
  bool capped = false;       // stopped by the time budget
  int reps = 1;              // fresh databases measured; this is the median

  std::string Method() const;
  double VectorsPerSecond() const { return seconds > 0 ? vectors / seconds : 0; }
  double MBPerSecond() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
};

struct RawWriteFigures {
  std::string target;
  size_t bytes = 0;
  double write_seconds = 0;      // median of reps
  double fdatasync_seconds = 0;  // of the same rep; not in the bandwidth
  int reps = 1;
  double MBPerSecond() const { return write_seconds > 0 ? bytes / write_seconds / 1e6 : 0; }
};

struct GroupCommitRun {
  uint32_t writers = 0;
  size_t puts = 0;
  double seconds = 0;
  double PutsPerSecond() const { return seconds > 0 ? puts / seconds : 0; }
};

struct GroupCommitResult {
  std::string target;
  std::vector<GroupCommitRun> runs;  // 1 writer first, then N
};

struct SearchResult {
  bool done = false;
  std::string target;
  size_t queries = 0;
  uint32_t k = 0;
  uint32_t list_size = 0;
  double load_seconds = 0;          // PutBatch of the base set
  double ground_truth_seconds = 0;  // brute force in the bench
  size_t single_queries = 0;        // Search calls made within the budget
  double single_seconds = 0;
  double batch_seconds = 0;         // one SearchBatch of all queries
  double recall_single = 0;
  double recall_batch = 0;
};

struct Report {
  RunConfig config;
  std::vector<IngestResult> ingest;
  std::vector<RawWriteFigures> raw;
  GroupCommitResult group_commit;
  SearchResult search;
  double total_seconds = 0;
};

// The human-readable tables, on stdout.
void PrintReport(const Report& report);
// The same figures as a JSON document.
std::string ReportToJson(const Report& report);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_REPORT_H_

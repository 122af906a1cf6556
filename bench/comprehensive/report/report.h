// Copyright 2026 The shoal Authors.
//
// The figures comprehensive_bench measures, and how they are shown: a table
// on stdout and a JSON document with the same numbers.
//
// Units: MB = 10^6 bytes of vector payload (dim * 4 bytes per vector; ids and
// log framing are not counted), rates are per wall-clock second.

#ifndef SHOAL_BENCH_COMPREHENSIVE_REPORT_REPORT_H_
#define SHOAL_BENCH_COMPREHENSIVE_REPORT_REPORT_H_

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
  bool direct_io_log = true;  // Options::direct_io_log
  bool collection_commit_log = true;  // Options::collection_commit_log
  int reps = 1;
  size_t write_vectors = 0;  // a write run's vectors (--write_vectors)
  double time_budget_s = 0;
  double search_budget_s = 0;
  size_t memtable_bytes = 0;
  uint32_t sync_interval_us = 0;
  std::string shm_dir;
  std::string disk_dir;
  std::string graph_dir;  // where the segment-backed databases of build/sweep live
  unsigned hardware_threads = 0;
  std::string source;     // "synthetic, seed 42" or the files read
  std::string ground_truth;  // where the exact neighbours came from
  // Segment graphs (CollectionOptions::graph) and the default search options.
  uint32_t max_degree = 0;
  uint32_t build_list_size = 0;
  float alpha = 0;
  std::string code;  // CollectionOptions::code: "sq8" or "none"
  uint32_t default_list_size = 0;
  uint32_t beam_width = 0;
  uint32_t k = 0;
  std::string brute_force_kernel;
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
  double spread = 0;         // (fastest - slowest) / median rate of those runs
  // CPU time of the process (every thread: the writer, the pool, the
  // background workers) during the timed writes of this run, and the spread
  // of that figure over the runs: on a machine whose cores the writes keep
  // busy, the wall clock also counts preemptions, the CPU time only the work.
  double cpu_seconds = 0;
  double cpu_spread = 0;

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
  double spread = 0;  // (slowest - fastest) / median write time of the reps
  double MBPerSecond() const { return write_seconds > 0 ? bytes / write_seconds / 1e6 : 0; }
};

struct GroupCommitRun {
  uint32_t writers = 0;
  size_t puts = 0;
  double seconds = 0;
  int reps = 1;        // runs of this many writers; this one is their median
  double spread = 0;   // (fastest - slowest) / median rate of those runs
  double PutsPerSecond() const { return seconds > 0 ? puts / seconds : 0; }
};

struct GroupCommitResult {
  std::string target;
  std::vector<GroupCommitRun> runs;  // 1 writer first, then N
  // N writers / 1 writer of each pair of runs made one after the other (the
  // disk's pace drifts over a minute): the goal is judged on their median.
  std::vector<double> speedups;
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

// Latency of single-thread calls, microseconds.
struct LatencyFigures {
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, p999 = 0;
};

// One setting of an index's search knob (list_size, ef, efSearch, nprobe).
struct SweepPoint {
  uint32_t knob = 0;
  size_t single_queries = 0;  // one call at a time from one thread
  double single_seconds = 0;
  double single_recall = 0;
  LatencyFigures latency;
  double distances_per_query = -1;  // of single-thread Search, when the index counts (hnswlib)
  size_t batch_queries = 0;   // every query in one batch on all threads
  double batch_seconds = 0;
  double batch_recall = 0;
  double SingleQps() const { return single_seconds > 0 ? single_queries / single_seconds : 0; }
  double BatchQps() const { return batch_seconds > 0 ? batch_queries / batch_seconds : 0; }
};

// How long an index took to build.
struct BuildFigures {
  std::string method;        // what `seconds` times, e.g. "BulkLoad", "Flush after Put"
  size_t vectors = 0;
  uint32_t threads = 0;
  double seconds = 0;
  std::string other_label;   // a figure that is not in `seconds` (or part of it), if any
  double other_seconds = 0;
  int64_t index_bytes = -1;  // AnnIndex::IndexBytes after the build
  double VectorsPerSecond() const { return seconds > 0 ? vectors / seconds : 0; }
};

// One index under test, built and swept.
struct IndexRun {
  std::string index;  // "shoal", "hnswlib M=16", "faiss IVFFlat nlist=1264", ...
  std::string params; // build parameters, for the record
  std::string knob;   // the search knob swept
  BuildFigures build;
  std::vector<SweepPoint> points;
};

// What the machine itself can do, measured in the same run.
struct LimitsFigures {
  bool done = false;
  size_t memcpy_bytes = 0;        // buffer size of each copy
  double memcpy_1_gbps = 0;       // one thread, GB/s copied (read + write = twice that traffic)
  double memcpy_all_gbps = 0;     // all threads, each copying its own buffers
  uint32_t threads = 0;
  size_t brute_force_queries = 0; // exact float scan of the base set, all threads
  double brute_force_seconds = 0;
  double brute_force_recall = 0;  // against the ground truth: 1 unless float rounding bites
  double BruteForceQps() const {
    return brute_force_seconds > 0 ? brute_force_queries / brute_force_seconds : 0;
  }
};

// The median of `values` (the upper one of an even count); NaN when empty.
double Median(std::vector<double> values);

// Two shoal databases searched in turns at one list size (the streamed one
// against the bulk-loaded one): each round runs the queries through each for
// at least a second, so the machine's drift hits both alike.
struct HeadToHead {
  uint32_t list_size = 0;
  std::vector<double> ratios;  // streamed QPS / bulk-loaded QPS, one per round
  double bulk_qps = 0, stream_qps = 0;  // medians
  double MedianRatio() const;
};

// --compare: QPS at one recall level of shoal (after BulkLoad) and a peer,
// single-thread Search or SearchBatch on all threads, measured in turns (search_phases.cc). The sweeps, each run
// once and minutes apart, compare two moments of a shared machine as much as
// two indexes (the same command gave 1.00x, 1.31x and 1.89x hnswlib's QPS at
// 0.95 on small in three runs); here the points of each curve around the
// level (PointsAroundRecall) are searched again for a fixed time each, shoal
// and the peer alternating, round after round, and each round's QPS at the
// level is read off them as QpsAtRecall does, with the sweep's recalls.
struct QpsInTurns {
  std::string peer;
  double recall = 0;
  bool batch = false;  // SearchBatch of every query on all threads, not one Search at a time
  std::vector<double> shoal_qps, peer_qps, ratios;  // one per round
  double MedianRatio() const { return Median(ratios); }
};

// --phases builds (build_rounds.cc): shoal's BulkLoad and a peer's build,
// each from scratch, in turns (the order swapped every round), so that the
// machine's drift hits both alike.
struct BuildRounds {
  std::string peer;            // "hnswlib M=16", ...
  size_t vectors = 0;
  std::vector<double> shoal_seconds, peer_seconds;  // one per round
  // shoal's build rate / the peer's, one per round (peer seconds / shoal's).
  std::vector<double> ratios;
  double MedianRatio() const { return Median(ratios); }
};

// The churn phase (churn_phase.cc): one run of rounds of deletes and inserts.
struct ChurnRound {
  uint32_t round = 0;
  size_t live = 0;
  double recall = 0;              // at the default list size, against the live set
  double qps = 0;                 // single thread
  double segments_per_shard = 0;
  double space_amplification = 0; // segment bytes per live vector / the bulk-loaded start's
};
struct ChurnRun {
  std::string deletes;  // "uniform" or "clustered"
  double fraction = 0;  // deleted and inserted each round, of the initial size
  std::vector<ChurnRound> rounds;
  double churn_seconds = 0;  // the rounds, the final Flush and WaitForCompact
  // After Flush + WaitForCompact, and a fresh BulkLoad of the live set:
  double final_recall = 0, final_qps = 0, final_segments_per_shard = 0;
  double final_space_amplification = 0;
  double fresh_recall = 0;
  std::vector<double> qps_ratios;  // churned / fresh, searched in turns
  double MedianQpsRatio() const;
};

// The disk phase (disk_phase.cc, disk_child.cc): shoal with
// SegmentStorage::kDisk, searched in a child process so that its RSS is the
// database's. Per-query figures are means over every search of a point.
struct DiskPoint {
  std::string kind;          // the SearchOptions variant (disk_child.cc, SearchVariants)
  uint32_t list_size = 0;
  uint32_t beam_width = 0;
  uint32_t threads = 1;
  size_t queries = 0;        // searches timed: every query, repeated to fill the time
  double seconds = 0;
  double recall = 0;         // recall@k of the first pass over the queries
  LatencyFigures latency;    // microseconds
  double reads = 0;          // SearchStats::reads per query (node blocks)
  double kernel_reads = 0;   // /proc/self/io read_bytes / 4096 per query
  double cache_hits = 0;     // SearchStats::cache_hits per query
  double hops = 0;
  double io_wait_share = 0;  // io_wait_ns / (io_wait_ns + compute_ns)
  double Qps() const { return seconds > 0 ? queries / seconds : 0; }
};

// /proc/self/status of the child, KiB.
struct RssFigures {
  double rss_kib = 0;  // VmRSS
  double hwm_kib = 0;  // VmHWM (peak)
};

// A DiskANN single-thread row of bench/peers/diskann_disk_peer.py's results.
struct PeerDiskPoint {
  uint32_t list_size = 0, beam_width = 0, cache_nodes = 0;
  double recall = 0, reads = 0, qps = 0, mean_us = 0;
};

struct DiskFigures {
  bool done = false;
  std::string dir;               // the database (kept for the next run)
  std::string fs_type;           // of dir, from /proc/mounts
  bool reused = false;           // the database of an earlier run (its marker matched)
  double build_seconds = 0;      // BulkLoad (of the run that built it)
  uint64_t db_bytes = 0;         // files of the database
  uint64_t raw_vector_bytes = 0; // num_vectors * dim * 4
  uint32_t shards = 0;
  uint64_t node_cache_bytes = 0; // Options::node_cache_bytes (per segment)
  uint64_t memory_budget_bytes = 0; // Options::memory_budget_bytes (0: none)
  bool direct_io = false;        // every segment file opened with O_DIRECT
  uint32_t segments = 0;
  double page_cache_before_mib = 0;  // the database's pages cached before the drop
  double page_cache_after_mib = 0;   // and after posix_fadvise(DONTNEED)
  double open_seconds = 0;
  RssFigures rss_before_open, rss_after_open, rss_after_search;
  std::vector<DiskPoint> sweep;      // one thread, every kind x beam_width x list_size
  std::vector<DiskPoint> threads;    // at the cheapest point reaching kDiskRecall
  // The DiskANN peer, when its results file exists for this data set.
  std::string peer_file;
  std::string peer_note;             // why it is absent or skipped
  std::vector<PeerDiskPoint> peer;
  uint64_t RssBudgetBytes() const { return raw_vector_bytes / 10 + (uint64_t{64} << 20); }
};

// The recall@k at which the disk phase reads its figures off.
inline constexpr double kDiskRecall = 0.95;
// Goal: mean node reads per query at kDiskRecall.
inline constexpr double kDiskReadsGoal = 12;

// --phases filter (filter_phase.cc, report_filter.cc). How shoal searched
// its segments over a pass of queries: SearchStats' filter counters, summed.
struct FilterPath {
  uint64_t segments = 0, matches = 0, skipped = 0, scanned = 0, walked = 0, short_walks = 0;
  uint64_t Planned() const { return skipped + scanned + walked; }  // 0: not counted
};

// One knob value of an index over one scenario. Recalls in `sweep`: per
// query, its answers among the exact k nearest matching rows / min(k,
// rows matching), averaged over queries with at least one matching row.
struct FilterPoint {
  SweepPoint sweep;
  // Of the queries whose predicate matches >= k rows, the share answered
  // with fewer than k (single-thread pass).
  double short_share = 0;
  uint64_t violations = 0;  // answers failing the predicate, single and batch passes
  FilterPath path;          // shoal, single-thread pass
};

struct FilterRun {
  std::string index;
  std::string knob;
  std::vector<FilterPoint> points;
  std::string note;  // why there are no points (e.g. the index cannot filter)
};

struct FilterScenarioFigures {
  std::string name;    // "uniform 1%", "cluster near", ...
  std::string family;  // "uniform", "cluster", "range", "and"
  double target = 0;       // the selectivity asked for (0: none)
  double selectivity = 0;  // mean over queries of the share of rows matching
  size_t queries = 0;
  size_t queries_with_k = 0;  // whose predicate matches >= k rows
  size_t predicates = 0;      // distinct predicates among the queries
  double truth_seconds = 0;
  std::vector<FilterRun> runs;
};

struct FilterFigures {
  bool done = false;
  double workload_seconds = 0;  // tags, k-means, predicates and truth
  std::vector<IndexRun> builds;  // builds only, no points
  std::vector<FilterScenarioFigures> scenarios;
  std::vector<std::string> notes;
};

// The recall the filter phase's headline reads QPS at.
inline constexpr double kFilterRecall = 0.95;
// The point of `run` with the most QPS among those reaching kFilterRecall
// (batch: SearchBatch figures); null when none reaches it.
const FilterPoint* BestFilterPoint(const FilterRun& run, bool batch);

struct Report {
  RunConfig config;
  std::vector<IngestResult> ingest;
  std::vector<RawWriteFigures> raw;
  GroupCommitResult group_commit;
  SearchResult search;
  // shoal on segments: graph[0] after BulkLoad (the full sweep), graph[1]
  // after Put + Flush, graph[2] after a streamed ingest (ShoalIndex::kStream;
  // both at the default list_size only).
  std::vector<IndexRun> graph;
  HeadToHead stream_vs_bulk;           // rounds empty when not measured
  std::vector<BuildRounds> build_rounds;  // --phases builds: one per peer
  std::vector<ChurnRun> churn;         // --phases churn: uniform, then clustered deletes
  std::vector<IndexRun> peers;        // --compare
  std::vector<QpsInTurns> qps_in_turns;  // --compare: single, batch for each peer reaching the level
  std::vector<std::string> peer_notes; // peers skipped, and why
  LimitsFigures limits;
  DiskFigures disk;                    // --phases disk
  FilterFigures filter;                // --phases filter
  double total_seconds = 0;
};

// Recall@k levels at which QPS is read off the curves.
inline constexpr double kRecallLevels[] = {0.90, 0.95, 0.99};

// The QPS a curve reaches at `recall`, interpolated (log QPS linear in
// recall) between the two points of its Pareto frontier that bracket it;
// when every point is above `recall`, the best QPS among them. NaN when no
// point reaches `recall`. `batch` picks SearchBatch figures over single ones.
double QpsAtRecall(const std::vector<SweepPoint>& points, double recall, bool batch);
// The points QpsAtRecall(points, recall, batch) reads: the two frontier
// points that bracket `recall`, or the one it returns; empty when no point
// reaches `recall`.
std::vector<SweepPoint> PointsAroundRecall(const std::vector<SweepPoint>& points, double recall,
                                           bool batch);
// The recall level the in-turns comparison reads (QpsInTurns).
inline constexpr double kInTurnsRecall = 0.95;

// The human-readable tables, on stdout.
void PrintReport(const Report& report);
// The same figures as a JSON document.
std::string ReportToJson(const Report& report);

// Pieces of the two above for the segment figures (report_graph.cc).
class JsonWriter;
void PrintGraph(const Report& report);
void PrintCompare(const Report& report);
void PrintLimits(const Report& report);
void GraphToJson(const Report& report, JsonWriter& w);
void CompareToJson(const Report& report, JsonWriter& w);
void LimitsToJson(const Report& report, JsonWriter& w);
// The builds in turns (build_rounds.cc).
void PrintBuildRounds(const Report& report);
void BuildRoundsToJson(const Report& report, JsonWriter& w);
// The churn figures (report_churn.cc).
void PrintChurn(const Report& report);
void ChurnToJson(const Report& report, JsonWriter& w);
// The disk figures (report_disk.cc). DiskToJson writes the "disk" member;
// DiskFiguresToJson / DiskFiguresFromJson carry them from the child process.
void PrintDisk(const Report& report);
void DiskToJson(const Report& report, JsonWriter& w);
std::string DiskFiguresToJson(const DiskFigures& d);
class JsonValue;
void DiskFiguresFromJson(const JsonValue& v, DiskFigures& d);
// Of a sweep: the point reaching kDiskRecall with the fewest reads, and
// the one with the most QPS; null when none reaches it.
const DiskPoint* FewestReadsAtRecall(const std::vector<DiskPoint>& points);
const DiskPoint* BestQpsAtRecall(const std::vector<DiskPoint>& points);
const PeerDiskPoint* PeerFewestReadsAtRecall(const std::vector<PeerDiskPoint>& points);
const PeerDiskPoint* PeerBestQpsAtRecall(const std::vector<PeerDiskPoint>& points);

// The filter figures (report_filter.cc).
void PrintFilter(const Report& report);
void FilterToJson(const Report& report, JsonWriter& w);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMPREHENSIVE_REPORT_REPORT_H_

// Copyright 2026 The shoal Authors.
//
// comprehensive_bench: ingestion, durability and search figures for shoal on
// a seeded synthetic data set (or one read from files), against the product
// goals:
//   - PutBatch(kNever, 10000 rows, /dev/shm) reaches >= 0.5 of the bandwidth
//     of a plain sequential write() of the same bytes to the same directory;
//   - a single thread Puts 1M vectors/s (kNever, /dev/shm);
//   - 8 kAlways writers on a real disk get >= 5x the Puts/s of 1 (group
//     commit shares each fdatasync);
//   - exact search over memtables has recall@10 == 1 against brute force;
//   - on segments (after BulkLoad), the default SearchOptions reach
//     recall@10 >= 0.95, and some list_size of the sweep >= 0.98;
// and, with --compare, side by side with hnswlib and faiss on the same data
// and threads: build rate and QPS at recall@10 = 0.90 / 0.95 / 0.99;
// and, with --phases disk (SegmentStorage::kDisk, disk_phase.cc), at
// recall@10 >= 0.95 at most 12 node reads per query, a searching process of
// at most 10% of the raw vector bytes + 64 MiB, and against DiskANN's disk
// index (when its results exist): fewer reads and >= 1.2x its QPS;
// and, with --phases filter (filter_phase.cc), filtered search: recall@10
// >= 0.95 and no short answers at every selectivity and correlation, and
// QPS against hnswlib's filter functor, faiss's IDSelectorBitmap (HNSW,
// IVF and the exact Flat) and an exact scan of the matching rows.
//
// Every measurement uses a fresh database in a wiped directory and closes it
// afterwards, except the disk phase's, which is kept for the next run. Tables go to stdout, progress to stderr, and --output writes
// the same figures as JSON. Usage: see docs/performance.md.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "common/bench_util.h"
#include "common/brute_force.h"
#include "common/dataset.h"
#include "common/dataset_files.h"
#include "common/export_dataset.h"
#include "common/progress.h"
#include "comprehensive/phases.h"
#include "comprehensive/report/report.h"
#include "fmt/core.h"
#include "shoal/options.h"

ABSL_FLAG(std::string, dataset, "small",
          "small (10K x 128), medium (100K x 256), large (1M x 128) or embed (100K x 384, "
          "cosine); ignored with --base");
ABSL_FLAG(std::string, base, "", "base vectors file (.fvecs .bvecs .fbin .u8bin .npy)");
ABSL_FLAG(std::string, query, "", "query vectors file (with --base)");
ABSL_FLAG(std::string, groundtruth, "",
          "exact neighbour ids of the queries (.ivecs .ibin .npy); computed and cached "
          "next to --query when absent");
ABSL_FLAG(size_t, max_base_rows, 0, "read at most this many base rows (0 = all)");
ABSL_FLAG(uint32_t, dim, 0,
          "dimensions of the synthetic --dataset (0 = its own; e.g. --dataset embed --dim 768 "
          "for larger text embeddings)");
ABSL_FLAG(size_t, vectors, 0, "base vectors of the synthetic --dataset (0 = its own)");
ABSL_FLAG(uint64_t, seed, 42, "seed of the synthetic dataset");
ABSL_FLAG(std::string, metric, "",
          "l2, ip or cosine ('' = the dataset's: cosine for embed, else l2)");
ABSL_FLAG(uint32_t, threads, 0,
          "threads for everything parallel: Options::worker_threads, the peers' builds "
          "and batch searches, brute force (0 = all cores)");
ABSL_FLAG(uint32_t, shards, 0, "shards of the collection (0 = one per core)");
ABSL_FLAG(uint32_t, writers, 8, "writer threads of the group-commit run");
ABSL_FLAG(bool, direct_io_log, true,
          "Options::direct_io_log: kAlways logs on a disk written with direct I/O "
          "(false: through a shared mapping)");
ABSL_FLAG(bool, collection_commit_log, true,
          "Options::collection_commit_log: kAlways writes synced through one commit log "
          "per collection (false: each shard syncs its own log)");
ABSL_FLAG(size_t, queries, 0, "search queries (0 = the dataset's default)");
ABSL_FLAG(std::string, disk_dir, "./shoal-bench-tmp",
          "scratch directory of the write phases on the working disk ('' = skip disk runs)");
ABSL_FLAG(std::string, shm_dir, "/dev/shm/shoal-bench",
          "scratch directory of the write phases in memory ('' = skip /dev/shm runs)");
ABSL_FLAG(std::string, dir, "",
          "directory of the search, build and sweep databases ('' = /dev/shm/shoal-bench "
          "when /dev/shm exists, else ./shoal-bench-tmp)");
ABSL_FLAG(std::string, output, "", "also write the figures to this JSON file");
ABSL_FLAG(std::string, export_dir, "",
          "write the data set, its exact top-k ids and dataset.json to this directory "
          "(export_dataset.h), then exit without running phases");
ABSL_FLAG(std::string, phases, "ingest,raw,group,search,build,sweep,limits",
          "comma-separated subset of ingest,raw,group,search,build,sweep,compare,limits,churn,"
          "disk,builds,filter (churn: not in the default run; --churn_rounds rounds of deletes and "
          "inserts; disk: not in the default run; SegmentStorage::kDisk, see --disk_mode_dir; "
          "builds: not in the default run; --build_rounds builds of shoal and the peers in "
          "turns; filter: not in the default run; filtered search, see --filter_*)");
ABSL_FLAG(uint32_t, build_rounds, 5,
          "--phases builds: rounds of shoal's BulkLoad and each peer's build (--peers), "
          "from scratch, in turns; the ratio of their build rates is the median of the "
          "rounds'");
ABSL_FLAG(bool, compare, false,
          "also build and sweep hnswlib and faiss (those found at build time) on the same "
          "data: same as adding 'compare' to --phases");
ABSL_FLAG(std::string, peers, "",
          "with --compare: comma-separated parts of peer names to run, e.g. 'hnswlib,IVF' "
          "('' = all); --phases filter also has 'faiss Flat' and 'exact scan'");
ABSL_FLAG(double, time_budget_s, 2.0,
          "a write run stops after this many seconds (and group-commit runs last this long)");
ABSL_FLAG(double, search_budget_s, 20.0,
          "single-thread exact Search (memtables) stops after this many seconds");
ABSL_FLAG(double, sweep_budget_s, 3.0,
          "single-thread queries of one sweep point stop after this many seconds");
ABSL_FLAG(std::string, list_sizes, "2,3,5,10,15,20,30,40,60,80,100,150,200,300",
          "SearchOptions::list_size values of the sweep (below k: shorter walks, still k "
          "answers)");
ABSL_FLAG(uint32_t, k, 10, "neighbours per query (recall@k)");
ABSL_FLAG(uint32_t, churn_rounds, 50, "rounds of the churn phase");
ABSL_FLAG(double, churn_fraction, 0.05,
          "fraction of the initial size deleted and inserted each churn round");
ABSL_FLAG(uint32_t, list_size, shoal::SearchOptions{}.list_size,
          "default SearchOptions::list_size (the Put+Flush point and the goal)");
ABSL_FLAG(uint32_t, beam_width, shoal::SearchOptions{}.beam_width,
          "SearchOptions::beam_width");
ABSL_FLAG(uint32_t, max_degree, shoal::GraphOptions{}.max_degree, "GraphOptions::max_degree (R)");
ABSL_FLAG(uint32_t, build_list_size, shoal::GraphOptions{}.build_list_size,
          "GraphOptions::build_list_size (L)");
ABSL_FLAG(float, alpha, shoal::GraphOptions{}.alpha, "GraphOptions::alpha");
ABSL_FLAG(std::string, code, "sq8", "CollectionOptions::code: sq8 or none");
ABSL_FLAG(int, reps, 5,
          "minimum runs (fresh databases) per write figure; the median is shown");
ABSL_FLAG(size_t, write_vectors, 1000000,
          "vectors each write run writes (the base set again and again, fresh ids each "
          "round) unless --time_budget_s stops it first; at least the base set");
ABSL_FLAG(size_t, memtable_mb, 0,
          "Options::memtable_bytes in MiB (0 = room for everything the bench writes)");
ABSL_FLAG(std::string, disk_mode_dir, "",
          "--phases disk: directory of its database, on a real disk, kept and reused while its "
          "marker file names the same data ('' = /var/tmp/shoal-bench-disk/<dataset>)");
ABSL_FLAG(bool, disk_rebuild, false, "--phases disk: build the database even if reusable");
ABSL_FLAG(std::string, disk_kinds, "",
          "--phases disk: search kinds to sweep, comma-separated ('' = all; now: beam)");
ABSL_FLAG(std::string, disk_list_sizes, "",
          "--phases disk: SearchOptions::list_size values ('' = 10,15,20,30,40,60,80,100,150,200; "
          "10,20 on --dataset small, a quick check)");
ABSL_FLAG(std::string, disk_beam_widths, "",
          "--phases disk: SearchOptions::beam_width values ('' = 1,2,4,8; 1,4 on small)");
ABSL_FLAG(std::string, disk_threads, "",
          "--phases disk: thread counts at the cheapest point reaching recall 0.95 "
          "('' = 1,2,4,8; 1,2 on small)");
ABSL_FLAG(double, disk_min_seconds, 1.0,
          "--phases disk: each point searches every query once, and again until this long");
ABSL_FLAG(size_t, node_cache_bytes, shoal::Options{}.node_cache_bytes,
          "--phases disk: Options::node_cache_bytes (per segment)");
ABSL_FLAG(size_t, memory_budget_bytes, 0,
          "--phases disk: Options::memory_budget_bytes (codes and node caches of all "
          "segments; 0 = no limit; SQ8 codes that do not fit become 4-bit codes)");
ABSL_FLAG(std::string, diskann_results, "",
          "--phases disk: results of bench/peers/diskann_disk_peer.py to compare with ('' = "
          "/var/tmp/shoal-diskann/<dataset>-diskann.json; skipped when absent)");
ABSL_FLAG(std::string, disk_child, "",
          "internal: run as the disk phase's child process on this directory");
ABSL_FLAG(std::string, filter_scenarios, "uniform,cluster,range,and",
          "--phases filter: scenario families to run, comma-separated (uniform: labels at "
          "--filter_selectivities; cluster: labels = k-means cluster, queries aimed at their "
          "own and at a distant one; range: Range(\"ts\") of 5%; and: two labels of 10%)");
ABSL_FLAG(std::string, filter_selectivities, "0.5,0.1,0.01,0.001,0.0001",
          "--phases filter: selectivities of the uniform labels, comma-separated fractions");
ABSL_FLAG(uint32_t, filter_clusters, 100, "--phases filter: k-means clusters of 'cluster'");
ABSL_FLAG(std::string, filter_list_sizes, "10,15,20,30,40,60,80,120,200,300",
          "--phases filter: shoal's SearchOptions::list_size values (the peers sweep their "
          "own defaults); a sweep stops once its recall reaches 0.9995");
ABSL_FLAG(double, filter_budget_s, 1.0,
          "--phases filter: single-thread queries of one point stop after this many seconds");
ABSL_FLAG(bool, progress, true, "draw progress bars on stderr (when it is a terminal)");

namespace shoal_bench {
namespace {

constexpr const char* kPhaseNames[] = {"ingest",  "raw",    "group", "search", "build",
                                       "sweep",   "compare", "limits", "churn", "disk",
                                       "builds",  "filter"};

shoal::Metric ParseMetric(const std::string& name) {
  if (name == "l2") return shoal::Metric::kL2;
  if (name == "ip") return shoal::Metric::kInnerProduct;
  if (name == "cosine") return shoal::Metric::kCosine;
  Die("--metric", absl::InvalidArgumentError("want l2, ip or cosine, got '" + name + "'"));
}

std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> ParsePhases(const std::string& list) {
  std::vector<std::string> phases = SplitCommas(list);
  for (const std::string& phase : phases) {
    if (std::find_if(std::begin(kPhaseNames), std::end(kPhaseNames),
                     [&](const char* p) { return phase == p; }) == std::end(kPhaseNames)) {
      Die("--phases", absl::InvalidArgumentError("unknown phase '" + phase + "'"));
    }
  }
  return phases;
}

// Values in [least, 2^20]: mapped searches take any list_size >= 1 (below k
// their walks stop sooner); disk-resident ones search with max(L, k), so the
// disk sweep takes L >= k only.
std::vector<uint32_t> ParseListSizes(const std::string& list, uint32_t least) {
  std::vector<uint32_t> out;
  for (const std::string& item : SplitCommas(list)) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || v < least || v > (1u << 20)) {
      Die("--list_sizes", absl::InvalidArgumentError(fmt::format(
                              "'{}' is not a list_size in [{}, 2^20]", item, least)));
    }
    out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

// Positive integers, e.g. --disk_beam_widths.
std::vector<uint32_t> ParseCounts(const std::string& list, const char* flag) {
  std::vector<uint32_t> out;
  for (const std::string& item : SplitCommas(list)) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || v < 1 || v > 4096) {
      Die(flag, absl::InvalidArgumentError(fmt::format("'{}' is not a count in 1..4096", item)));
    }
    out.push_back(static_cast<uint32_t>(v));
  }
  if (out.empty()) Die(flag, absl::InvalidArgumentError("empty"));
  return out;
}

// Fractions in (0, 1], e.g. --filter_selectivities.
std::vector<double> ParseFractions(const std::string& list, const char* flag) {
  std::vector<double> out;
  for (const std::string& item : SplitCommas(list)) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0' || !(v > 0 && v <= 1)) {
      Die(flag, absl::InvalidArgumentError(fmt::format("'{}' is not a fraction in (0, 1]", item)));
    }
    out.push_back(v);
  }
  return out;
}

FilterSettings FilterSettingsFromFlags() {
  FilterSettings f;
  f.families = SplitCommas(absl::GetFlag(FLAGS_filter_scenarios));
  f.selectivities =
      ParseFractions(absl::GetFlag(FLAGS_filter_selectivities), "--filter_selectivities");
  f.clusters = std::max(1u, absl::GetFlag(FLAGS_filter_clusters));
  f.list_sizes = ParseListSizes(absl::GetFlag(FLAGS_filter_list_sizes), 1);
  if (f.list_sizes.empty()) Die("--filter_list_sizes", absl::InvalidArgumentError("empty"));
  f.budget_s = absl::GetFlag(FLAGS_filter_budget_s);
  return f;
}

// `flag`'s value, or when it is empty `full`, or `quick` with `quick_run`.
std::string OrDefault(const std::string& flag, const char* full, const char* quick,
                      bool quick_run) {
  return !flag.empty() ? flag : quick_run ? quick : full;
}

// The disk phase's settings; `dir` names its directory, `quick` asks for
// the short default sweep (--dataset small: node reads take ~0.1 ms on a
// virtual disk, and the full sweep would take minutes even there). `args`:
// this process's arguments.
DiskSettings DiskSettingsFromFlags(std::string dir, uint32_t k, bool quick,
                                   const std::vector<std::string>& args) {
  DiskSettings s;
  s.dir = std::move(dir);
  s.rebuild = absl::GetFlag(FLAGS_disk_rebuild);
  s.kinds = SplitCommas(absl::GetFlag(FLAGS_disk_kinds));
  s.list_sizes = ParseListSizes(OrDefault(absl::GetFlag(FLAGS_disk_list_sizes),
                                          "10,15,20,30,40,60,80,100,150,200", "10,20", quick),
                                k);
  if (s.list_sizes.empty()) Die("--disk_list_sizes", absl::InvalidArgumentError("empty"));
  s.beam_widths = ParseCounts(
      OrDefault(absl::GetFlag(FLAGS_disk_beam_widths), "1,2,4,8", "1,4", quick),
      "--disk_beam_widths");
  s.threads = ParseCounts(OrDefault(absl::GetFlag(FLAGS_disk_threads), "1,2,4,8", "1,2", quick),
                          "--disk_threads");
  s.min_seconds = absl::GetFlag(FLAGS_disk_min_seconds);
  s.node_cache_bytes = absl::GetFlag(FLAGS_node_cache_bytes);
  s.memory_budget_bytes = absl::GetFlag(FLAGS_memory_budget_bytes);
  s.diskann_results = absl::GetFlag(FLAGS_diskann_results);
  s.child_args = args;
  return s;
}

std::string DefaultSearchDir() {
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm/shoal-bench"
                                                       : "./shoal-bench-tmp";
}

void FillRunConfig(const Dataset& data, Config& c) {
  RunConfig& r = c.run;
  r.dataset = data.spec.name;
  r.num_vectors = data.size();
  r.dim = data.dim();
  r.num_queries = data.num_queries();
  r.num_clusters = data.spec.num_clusters;
  r.base_bytes = data.BaseBytes();
  r.source = data.source;
  r.metric = absl::GetFlag(FLAGS_metric).empty() ? data.spec.metric : absl::GetFlag(FLAGS_metric);
  c.metric = ParseMetric(r.metric);
  r.seed = absl::GetFlag(FLAGS_seed);
  r.threads = absl::GetFlag(FLAGS_threads);
  r.shards = absl::GetFlag(FLAGS_shards);
  r.writers = std::max(1u, absl::GetFlag(FLAGS_writers));
  r.direct_io_log = absl::GetFlag(FLAGS_direct_io_log);
  r.collection_commit_log = absl::GetFlag(FLAGS_collection_commit_log);
  r.reps = std::max(1, absl::GetFlag(FLAGS_reps));
  c.sustained_vectors = r.write_vectors = std::max(data.size(), absl::GetFlag(FLAGS_write_vectors));
  r.time_budget_s = absl::GetFlag(FLAGS_time_budget_s);
  r.search_budget_s = absl::GetFlag(FLAGS_search_budget_s);
  const size_t memtable_mb = absl::GetFlag(FLAGS_memtable_mb);
  // Every shard gets room for a whole write run (or the base set) and as
  // much again for the group-commit writes: a flush (segment build) must not
  // land inside a write measurement, and Put+Flush must build its segments
  // in Flush alone. Arena memory is only taken as it is written.
  const size_t run_bytes = std::max(r.base_bytes, r.write_vectors * data.dim() * sizeof(float));
  r.memtable_bytes = memtable_mb > 0 ? memtable_mb << 20
                                     : std::max<size_t>(shoal::Options{}.memtable_bytes,
                                                        2 * run_bytes + (64 << 20));
  r.sync_interval_us = shoal::Options{}.sync_interval_us;
  r.shm_dir = absl::GetFlag(FLAGS_shm_dir);
  r.disk_dir = absl::GetFlag(FLAGS_disk_dir);
  r.hardware_threads = std::thread::hardware_concurrency();
  r.brute_force_kernel = BruteForceKernelName();
}

Config ConfigFromFlags(const Dataset& data, const std::vector<std::string>& args) {
  Config c;
  FillRunConfig(data, c);
  RunConfig& r = c.run;
  if (!r.shm_dir.empty()) c.targets.push_back({"shm", r.shm_dir});
  if (!r.disk_dir.empty()) c.targets.push_back({"disk", r.disk_dir});
  c.search_dir = absl::GetFlag(FLAGS_dir).empty() ? DefaultSearchDir() : absl::GetFlag(FLAGS_dir);
  r.graph_dir = c.search_dir;
  c.phases = ParsePhases(absl::GetFlag(FLAGS_phases));
  c.compare = absl::GetFlag(FLAGS_compare) || c.HasPhase("compare");
  c.peers = SplitCommas(absl::GetFlag(FLAGS_peers));
  c.build_rounds = std::max<uint32_t>(1, absl::GetFlag(FLAGS_build_rounds));
  c.churn_rounds = std::max<uint32_t>(1, absl::GetFlag(FLAGS_churn_rounds));
  c.churn_fraction = absl::GetFlag(FLAGS_churn_fraction);
  if (!(c.churn_fraction > 0 && c.churn_fraction < 1)) {
    Die("--churn_fraction", absl::InvalidArgumentError("must be in (0, 1)"));
  }
  c.output = absl::GetFlag(FLAGS_output);
  c.graph.max_degree = r.max_degree = absl::GetFlag(FLAGS_max_degree);
  c.graph.build_list_size = r.build_list_size = absl::GetFlag(FLAGS_build_list_size);
  c.graph.alpha = r.alpha = absl::GetFlag(FLAGS_alpha);
  const std::string code = absl::GetFlag(FLAGS_code);
  if (code != "sq8" && code != "none") {
    Die("--code", absl::InvalidArgumentError("must be sq8 or none"));
  }
  c.code = code == "sq8" ? shoal::VectorCode::kSq8 : shoal::VectorCode::kNone;
  r.code = code;
  c.search.k = r.k = std::max(1u, absl::GetFlag(FLAGS_k));
  c.search.list_size = r.default_list_size = std::max(c.search.k, absl::GetFlag(FLAGS_list_size));
  c.search.beam_width = r.beam_width = absl::GetFlag(FLAGS_beam_width);
  c.list_sizes = ParseListSizes(absl::GetFlag(FLAGS_list_sizes), 1);
  c.sweep_budget_s = absl::GetFlag(FLAGS_sweep_budget_s);
  const std::string disk_dir = absl::GetFlag(FLAGS_disk_mode_dir);
  const bool quick = data.spec.name == "small" && absl::GetFlag(FLAGS_base).empty();
  c.disk = DiskSettingsFromFlags(
      disk_dir.empty() ? "/var/tmp/shoal-bench-disk/" + data.spec.name : disk_dir, c.search.k,
      quick, args);
  c.filter = FilterSettingsFromFlags();
  if (c.disk.diskann_results.empty()) {
    c.disk.diskann_results = "/var/tmp/shoal-diskann/" + data.spec.name + "-diskann.json";
  }
  return c;
}

DatasetFiles FilesFromFlags() {
  DatasetFiles f;
  f.base = absl::GetFlag(FLAGS_base);
  f.query = absl::GetFlag(FLAGS_query);
  f.groundtruth = absl::GetFlag(FLAGS_groundtruth);
  f.max_base_rows = absl::GetFlag(FLAGS_max_base_rows);
  f.max_queries = absl::GetFlag(FLAGS_queries);
  if (f.query.empty()) Die("--base", absl::InvalidArgumentError("--base needs --query"));
  if (absl::GetFlag(FLAGS_dim) > 0 || absl::GetFlag(FLAGS_vectors) > 0) {
    Die("--base", absl::InvalidArgumentError(
                      "--dim and --vectors resize a synthetic --dataset; with --base, the "
                      "file sets the dim and --max_base_rows the count"));
  }
  return f;
}

Dataset LoadDataset(const DatasetFiles* files) {
  if (files != nullptr) {
    StatusLine(fmt::format("[data]   reading {} and {}", files->base, files->query));
    return ValueOrDie(ReadDataset(*files), "--base/--query");
  }
  DatasetSpec spec = ValueOrDie(DatasetSpecByName(absl::GetFlag(FLAGS_dataset)), "--dataset");
  if (absl::GetFlag(FLAGS_queries) > 0) spec.num_queries = absl::GetFlag(FLAGS_queries);
  // A resized set gets its own name: files kept by name (the disk phase's
  // database, DiskANN's results) must not be taken for the default set's.
  if (absl::GetFlag(FLAGS_dim) > 0 && absl::GetFlag(FLAGS_dim) != spec.dim) {
    spec.dim = absl::GetFlag(FLAGS_dim);
    spec.name += fmt::format("-d{}", spec.dim);
  }
  if (absl::GetFlag(FLAGS_vectors) > 0 && absl::GetFlag(FLAGS_vectors) != spec.num_vectors) {
    spec.num_vectors = absl::GetFlag(FLAGS_vectors);
    spec.name += fmt::format("-n{}", spec.num_vectors);
  }
  // Checked before anything is allocated: a typo must be an error, not
  // std::bad_alloc or the host's memory. The set may take half the RAM: the
  // databases (on /dev/shm) and the peers' indexes need the rest.
  if (spec.dim > 4096) {
    Die("--dim", absl::InvalidArgumentError(
                     fmt::format("{} dimensions; a collection takes 1..4096", spec.dim)));
  }
  const double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                     static_cast<double>(sysconf(_SC_PAGESIZE));
  const double bytes = (static_cast<double>(spec.num_vectors) + spec.num_queries) * spec.dim *
                       sizeof(float);
  if (ram > 0 && bytes > ram / 2) {
    Die("--vectors/--queries",
        absl::ResourceExhaustedError(fmt::format(
            "{} base and {} query vectors of {} floats take {:.1f} GB, more than half of "
            "this machine's {:.1f} GB of RAM",
            spec.num_vectors, spec.num_queries, spec.dim, bytes / 1e9, ram / 1e9)));
  }
  StatusLine(fmt::format("[data]   generating {}: {} x {}, {} queries, seed {}", spec.name,
                         spec.num_vectors, spec.dim, spec.num_queries,
                         absl::GetFlag(FLAGS_seed)));
  return GenerateDataset(spec, absl::GetFlag(FLAGS_seed));
}

// Writes FILE.tmp, then renames it over FILE, so a reader never sees half.
void WriteFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) Die("open " + tmp, absl::ErrnoToStatus(errno, tmp));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  if (std::fclose(f) != 0 || !wrote) {
    Die("write " + tmp, absl::ErrnoToStatus(wrote ? errno : write_errno, tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    Die("rename " + tmp, absl::ErrnoToStatus(errno, path));
  }
}

// Removes what the bench created; a scratch directory itself only if empty.
void CleanUp(const Config& c) {
  for (const Target& t : c.targets) {
    CheckOk(RemoveTree(t.DbDir()), "clean up");
    std::error_code ec;
    std::filesystem::remove(t.dir, ec);  // fails harmlessly when not empty
  }
  std::error_code ec;
  std::filesystem::remove(c.search_dir, ec);
}

int Main(const std::vector<std::string>& args) {
  const Stopwatch total;
  if (!absl::GetFlag(FLAGS_progress)) Progress::Disable();
  if (const std::string dir = absl::GetFlag(FLAGS_disk_child); !dir.empty()) {
    const uint32_t k = std::max(1u, absl::GetFlag(FLAGS_k));
    // The parent passes its settings as flags (they override its own).
    return DiskChildMain(DiskSettingsFromFlags(dir, k, false, args), k,
                         absl::GetFlag(FLAGS_threads));
  }
  const bool from_files = !absl::GetFlag(FLAGS_base).empty();
  const DatasetFiles files = from_files ? FilesFromFlags() : DatasetFiles{};
  const Dataset data = LoadDataset(from_files ? &files : nullptr);
  const Config c = ConfigFromFlags(data, args);
  Report report;
  report.config = c.run;
  const bool graph = c.HasPhase("build") || c.HasPhase("sweep") || c.compare;
  Truth truth;
  const std::string export_dir = absl::GetFlag(FLAGS_export_dir);
  if (!export_dir.empty() || c.HasPhase("search") || c.HasPhase("sweep") ||
      c.HasPhase("limits") || c.HasPhase("disk") || c.compare) {
    std::string how;
    truth = ValueOrDie(GroundTruth(data, from_files ? &files : nullptr, c.metric, c.search.k,
                                   c.run.threads, &report.search.ground_truth_seconds, &how),
                       "ground truth");
    report.config.ground_truth = how;
    StatusLine(fmt::format("[truth]  {} queries: {}", data.num_queries(), how));
  }
  if (!export_dir.empty()) {
    CheckOk(ExportDataset(data, truth, c.search.k, {c.run.metric, report.config.ground_truth},
                          export_dir),
            "--export_dir");
    StatusLine(fmt::format("[export] wrote {} x {} base rows, {} queries, top-{} ids to {}",
                           data.size(), data.dim(), data.num_queries(), c.search.k, export_dir));
    return 0;
  }
  if (c.HasPhase("ingest")) IngestPhase(c, data, report);
  if (c.HasPhase("raw")) RawPhase(c, data, report);
  if (c.HasPhase("group")) GroupCommitPhase(c, data, report);
  if (c.HasPhase("limits")) LimitsPhase(c, data, truth, report);
  if (c.HasPhase("search")) SearchPhase(c, data, truth, report);
  std::unique_ptr<AnnIndex> bulk;  // open only from GraphPhase to ComparePhase
  if (graph) bulk = GraphPhase(c, data, truth, report);
  if (c.compare) ComparePhase(c, data, truth, bulk.get(), report);
  bulk.reset();
  if (c.HasPhase("churn")) ChurnPhase(c, data, report);
  if (c.HasPhase("builds")) BuildRoundsPhase(c, data, report);
  if (c.HasPhase("disk")) DiskPhase(c, data, truth, report);
  if (c.HasPhase("filter")) FilterPhase(c, data, report);
  CleanUp(c);
  report.total_seconds = total.Seconds();
  PrintReport(report);
  if (!c.output.empty()) {
    WriteFile(c.output, ReportToJson(report));
    StatusLine(fmt::format("[output] wrote {}", c.output));
  }
  return 0;
}

// Abseil flag names are identifiers (--disk_dir); accept the dashed
// spelling (--disk-dir) too by rewriting dashes in the name part of every
// "--name[=value]" argument before "--".
std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    std::string& a = args[i];
    if (a.size() < 3 || a[0] != '-' || a[1] != '-') continue;
    std::replace(a.begin() + 2, a.begin() + std::min(a.find('='), a.size()), '-', '_');
  }
  return args;
}

}  // namespace
}  // namespace shoal_bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "ingestion, durability and search benchmark for shoal, with hnswlib and faiss "
      "side by side.\n"
      "  comprehensive_bench --dataset small|medium|large [--compare] [--output FILE.json]\n"
      "  comprehensive_bench --base FILE --query FILE [--groundtruth FILE] ...\n"
      "  comprehensive_bench --dataset medium --export_dir DIR   (files for external peers)\n"
      "  comprehensive_bench --dataset large --phases disk [--disk_mode_dir DIR]   "
      "(SegmentStorage::kDisk, searched in a child process; DiskANN side by side when "
      "scripts/diskann_peer.sh has run)\n"
      "  comprehensive_bench --dataset medium --phases filter [--output FILE.json]   "
      "(filtered search; tools/plot_bench.py --filter FILE.json plots QPS against "
      "selectivity)");
  std::vector<std::string> args = shoal_bench::NormalizeFlagNames(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  return shoal_bench::Main(args);
}

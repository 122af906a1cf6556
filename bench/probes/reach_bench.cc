// Copyright 2026 The shoal Authors.
//
// What the build's last step (every node found: graph/vamana_connect.cc)
// costs and buys. One segment of the data set is built --rounds times with
// the step and --rounds times without it, in turns (the same input, so the
// ratio of the medians is the step's cost on this machine at this moment),
// and each kind's last graph is measured:
//   - nodes no walk from the medoid reaches (segment/graph_reach.h);
//   - self-searches that miss: a search with k 1 at --list_size for each of
//     --self vectors' own values (spread over the set) that does not return
//     that vector first;
//   - recall@10 of the data set's queries at each of --list_sizes.
//
//   reach_bench --dataset embed
//   reach_bench --gaussian 100000 --dim 32            (issue 41's table)
//   reach_bench --gaussian 25000 --dim 32 --max_degree 16 --build_list_size 40
//
// Uses src/ internals (segment/segment.h, segment/graph_reach.h).
//
// Figures: docs/performance.md, "Every node found" (issue 41).

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/brute_force.h"
#include "common/dataset.h"
#include "segment/graph_reach.h"
#include "segment/segment.h"
#include "util/file_system.h"
#include "util/thread_pool.h"
#include "util/top_k.h"

ABSL_FLAG(std::string, dataset, "embed", "small, medium, large or embed (without --gaussian)");
ABSL_FLAG(uint64_t, gaussian, 0, "instead of --dataset: this many N(0, 1) vectors (L2)");
ABSL_FLAG(uint32_t, dim, 32, "with --gaussian: dimensions");
ABSL_FLAG(uint64_t, seed, 42, "data seed");
ABSL_FLAG(uint32_t, max_degree, 64, "GraphOptions::max_degree");
ABSL_FLAG(uint32_t, build_list_size, 100, "GraphOptions::build_list_size");
ABSL_FLAG(uint32_t, rounds, 3, "builds of each kind, in turns");
ABSL_FLAG(uint32_t, list_size, 100, "list size of the self-searches");
ABSL_FLAG(uint64_t, self, 0, "self-searches (0 = every vector)");
ABSL_FLAG(std::string, list_sizes, "10,20,40", "list sizes of the recall@10 queries");
ABSL_FLAG(uint32_t, threads, 0, "build threads (0 = all cores)");
ABSL_FLAG(std::string, dir, "/dev/shm", "where the segment files are written");

namespace {

using shoal::Metric;

struct Data {
  std::vector<uint64_t> ids;
  std::vector<float> base, queries;
  uint32_t dim = 0;
  Metric metric = Metric::kL2;
  size_t size() const { return ids.size(); }
};

Data Load() {
  Data d;
  if (const uint64_t n = absl::GetFlag(FLAGS_gaussian); n > 0) {
    d.dim = absl::GetFlag(FLAGS_dim);
    std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    d.base.resize(n * d.dim);
    for (float& x : d.base) x = gauss(rng);
    d.queries.resize(200 * size_t{d.dim});
    for (float& x : d.queries) x = gauss(rng);
  } else {
    absl::StatusOr<shoal_bench::DatasetSpec> spec =
        shoal_bench::DatasetSpecByName(absl::GetFlag(FLAGS_dataset));
    if (!spec.ok()) {
      std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
      std::exit(2);
    }
    shoal_bench::Dataset data = shoal_bench::GenerateDataset(*spec, absl::GetFlag(FLAGS_seed));
    d.dim = data.dim();
    d.metric = spec->metric == "cosine" ? Metric::kCosine : Metric::kL2;
    d.base = std::move(data.base);
    d.queries = std::move(data.queries);
  }
  d.ids.resize(d.base.size() / d.dim);
  for (size_t i = 0; i < d.ids.size(); ++i) d.ids[i] = i;
  return d;
}

struct Built {
  std::vector<double> seconds;
  double step_seconds = 0;  // of the last build
  uint64_t connected = 0;   // of the last build
  std::shared_ptr<shoal::Segment> segment;
};

void Build(const Data& d, bool connect, shoal::ThreadPool* pool, Built* out) {
  const std::string path = absl::GetFlag(FLAGS_dir) + "/reach_bench-" +
                           (connect ? "with" : "without") + ".vamana";
  shoal::SegmentContents c;
  c.dim = d.dim;
  c.metric = d.metric;
  c.ids = d.ids;
  c.sequences = d.ids;
  c.vectors = d.base.data();
  shoal::SegmentBuildOptions options;
  options.graph.max_degree = absl::GetFlag(FLAGS_max_degree);
  options.graph.build_list_size = absl::GetFlag(FLAGS_build_list_size);
  options.connect = connect;
  shoal::SegmentBuildStats stats;
  out->segment.reset();
  if (absl::Status s = shoal::BuildSegment(shoal::FileSystem::Default(), pool, path, c, options,
                                           &stats);
      !s.ok()) {
    std::fprintf(stderr, "build: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  out->seconds.push_back(stats.medoid_seconds + stats.insert_seconds);
  out->step_seconds = stats.connect_seconds;
  out->connected = stats.connected_nodes;
  absl::StatusOr<std::shared_ptr<shoal::Segment>> segment =
      shoal::Segment::Open(shoal::FileSystem::Default(), path, d.dim, d.metric);
  if (!segment.ok()) {
    std::fprintf(stderr, "open: %s\n", segment.status().ToString().c_str());
    std::exit(1);
  }
  out->segment = *segment;
  shoal::FileSystem::Default()->RemoveFile(path).IgnoreError();  // stays mapped
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

uint64_t SelfMisses(const Data& d, const shoal::Segment& segment) {
  shoal::SearchOptions options;
  options.k = 1;
  options.list_size = absl::GetFlag(FLAGS_list_size);
  const uint64_t n = d.size();
  const uint64_t count = absl::GetFlag(FLAGS_self) == 0 ? n : std::min(n, absl::GetFlag(FLAGS_self));
  uint64_t misses = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t row = i * n / count;
    shoal::TopK top(1);
    if (!segment.Search(d.base.data() + row * d.dim, options, {}, &top).ok()) std::exit(1);
    const std::vector<shoal::Neighbor> got = top.Take();
    misses += got.empty() || got[0].id != row;
  }
  return misses;
}

double Recall(const Data& d, const shoal::Segment& segment, uint32_t list_size,
              const std::vector<std::vector<shoal_bench::Candidate>>& truth) {
  shoal::SearchOptions options;
  options.k = 10;
  options.list_size = list_size;
  double found = 0;
  for (size_t q = 0; q < truth.size(); ++q) {
    shoal::TopK top(10);
    if (!segment.Search(d.queries.data() + q * d.dim, options, {}, &top).ok()) std::exit(1);
    for (const shoal::Neighbor& n : top.Take()) {
      for (const shoal_bench::Candidate& t : truth[q]) found += t.row == n.id;
    }
  }
  return found / (10.0 * static_cast<double>(truth.size()));
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const Data d = Load();
  const uint32_t threads = absl::GetFlag(FLAGS_threads);
  shoal::ThreadPool pool(threads == 0 ? std::thread::hardware_concurrency() : threads);
  std::printf("%zu x %u (%s), R %u, L %u, %u rounds in turns\n", d.size(), d.dim,
              d.metric == Metric::kCosine ? "cosine" : "l2", absl::GetFlag(FLAGS_max_degree),
              absl::GetFlag(FLAGS_build_list_size), absl::GetFlag(FLAGS_rounds));
  Built with, without;
  for (uint32_t r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
    Build(d, /*connect=*/false, &pool, &without);
    Build(d, /*connect=*/true, &pool, &with);
  }
  const double ratio = Median(with.seconds) / Median(without.seconds);
  std::printf("graph build s, median: without the step %.3f, with it %.3f (x%.3f); the step "
              "itself %.3f s, %llu nodes connected\n",
              Median(without.seconds), Median(with.seconds), ratio, with.step_seconds,
              static_cast<unsigned long long>(with.connected));

  const std::vector<std::string> parts = absl::StrSplit(absl::GetFlag(FLAGS_list_sizes), ',');
  std::vector<uint32_t> lists;
  for (const std::string& p : parts) {
    uint32_t l;
    if (absl::SimpleAtoi(p, &l)) lists.push_back(l);
  }
  const auto truth = shoal_bench::ExactKnnFloat(
      {d.base.data(), d.size(), d.dim}, {d.queries.data(), d.queries.size() / d.dim, d.dim},
      d.metric, 10, threads, nullptr);
  for (const auto* kind : {&without, &with}) {
    const shoal::Segment& segment = *kind->segment;
    absl::StatusOr<uint64_t> unreachable = shoal::segment::CountUnreachableNodes(segment);
    const uint64_t misses = SelfMisses(d, segment);
    const uint64_t self = absl::GetFlag(FLAGS_self) == 0
                              ? d.size()
                              : std::min<uint64_t>(d.size(), absl::GetFlag(FLAGS_self));
    std::printf("%-8s unreachable %llu; self-search misses at list %u: %llu of %llu (%.4f%%);"
                " recall@10",
                kind == &with ? "with" : "without",
                static_cast<unsigned long long>(unreachable.value_or(~0ull)),
                absl::GetFlag(FLAGS_list_size), static_cast<unsigned long long>(misses),
                static_cast<unsigned long long>(self), 100.0 * misses / self);
    for (uint32_t l : lists) std::printf(" L%u %.4f", l, Recall(d, segment, l, truth));
    std::printf("\n");
  }
  return 0;
}

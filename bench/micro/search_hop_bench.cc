// Copyright 2026 The shoal Authors.
//
// Beam search hop (src/segment/segment_search.cc): the cost of expanding one
// graph node, i.e. reading its neighbour list, skipping the neighbours
// already visited and computing the distance to the others, each then
// offered to the candidate list.
//
// The search has no per-hop function to call on its own, so this times
// whole Segment::Search calls on a built segment and divides by the hops
// they made. The per-query fixed cost (scratch reset, the medoid, offering
// the k results) is thereby spread over the hops; comparing list sizes shows
// how much it weighs (fewer hops per query at L = 16).
//
// The segment: 20K clustered 128-d vectors, L2, default graph options
// (R = 64, L = 100, alpha = 1.2), built once per run into /dev/shm (a few
// seconds, on two threads) when the first of these benchmarks runs. Its
// nodes take ~16 MiB: past L2, within this machine's L3, and warm after the
// first queries, so the figures are those of a hot segment, not of one paged
// in from disk.
//
// Counters: hop (time per hop), dist_per_s (distances computed per second),
// hops_per_query and dist_per_hop.
//
// BM_Sq8QueryReset times the other per-query cost of a segment's search:
// turning the query into its SQ8 weights (Sq8Query::Reset), once per segment
// searched, with the kernels Kernels() picks (SHOAL_FORCE_ISA=scalar for the
// portable ones).

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/bench_util.h"
#include "micro/micro_util.h"
#include "segment/segment.h"
#include "codes/sq8.h"
#include "util/file_system.h"
#include "util/thread_pool.h"
#include "util/top_k.h"

namespace shoal_bench {
namespace {

constexpr uint32_t kDim = 128;
constexpr size_t kNodes = 20000;
constexpr size_t kQueries = 256;
constexpr size_t kClusters = 64;

struct Graph {
  std::shared_ptr<shoal::Segment> segment;
  std::vector<float> queries;  // kQueries rows from the nodes' distribution
  const float* query(size_t i) const { return &queries[i * kDim]; }
};

Graph BuildGraph() {
  std::vector<float> vectors = ClusteredVectors(kNodes + kQueries, kDim, kClusters, 7);
  Graph graph;
  graph.queries.assign(vectors.begin() + kNodes * kDim, vectors.end());
  std::vector<uint64_t> ids(kNodes), sequences(kNodes);
  for (size_t i = 0; i < kNodes; ++i) {
    ids[i] = i;
    sequences[i] = i + 1;
  }
  shoal::SegmentContents contents;
  contents.dim = kDim;
  contents.metric = shoal::Metric::kL2;
  contents.ids = ids;
  contents.sequences = sequences;
  contents.vectors = vectors.data();

  shoal::FileSystem* fs = shoal::FileSystem::Default();
  ScratchDir dir("segment");
  const std::string path = shoal::JoinPath(dir.path(), "seg.vamana");
  shoal::ThreadPool pool(1);  // one worker and this thread
  CheckOk(shoal::BuildSegment(fs, &pool, path, contents, shoal::SegmentBuildOptions{}),
          "build segment");
  graph.segment = ValueOrDie(shoal::Segment::Open(fs, path, kDim, shoal::Metric::kL2),
                             "open segment");
  // The file's name goes with `dir`; the mapping keeps its pages.
  return graph;
}

const Graph& TheGraph() {
  static const Graph graph = BuildGraph();
  return graph;
}

void BM_SearchHop(benchmark::State& state) {
  const Graph& graph = TheGraph();
  shoal::SearchOptions options;
  options.k = 10;
  options.list_size = static_cast<uint32_t>(state.range(0));
  options.beam_width = static_cast<uint32_t>(state.range(1));
  const std::function<bool(uint64_t, uint64_t)> all_visible;

  // Hops and distances of each query, counted once untimed: a search is
  // deterministic, and the timed ones run without stats, which cost a
  // little per node visited.
  std::vector<shoal::SegmentSearchStats> stats(kQueries);
  for (size_t q = 0; q < kQueries; ++q) {
    shoal::TopK top(options.k);
    CheckOk(graph.segment->Search(graph.query(q), options, all_visible, &top, &stats[q]),
            "search");
  }

  uint64_t hops = 0, distances = 0;
  size_t q = 0;
  for (auto _ : state) {
    shoal::TopK top(options.k);
    const absl::Status s =
        graph.segment->Search(graph.query(q), options, all_visible, &top, nullptr);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(top);
    hops += stats[q].hops;
    distances += stats[q].distance_computations;
    q = q + 1 == kQueries ? 0 : q + 1;
  }
  using benchmark::Counter;
  state.counters["hop"] = Counter(static_cast<double>(hops), Counter::kIsRate | Counter::kInvert);
  state.counters["dist_per_s"] = Counter(static_cast<double>(distances), Counter::kIsRate);
  state.counters["hops_per_query"] =
      static_cast<double>(hops) / static_cast<double>(state.iterations());
  state.counters["dist_per_hop"] =
      hops == 0 ? 0 : static_cast<double>(distances) / static_cast<double>(hops);
}

BENCHMARK(BM_SearchHop)
    ->ArgNames({"L", "beam"})
    ->ArgsProduct({{16, 100}, {1, 4}})
    ->UseRealTime();

void BM_Sq8QueryReset(benchmark::State& state) {
  const uint32_t dim = static_cast<uint32_t>(state.range(0));
  std::mt19937 rng(7);
  std::normal_distribution<float> gauss;
  std::vector<float> rows(size_t{1000} * dim);
  for (float& x : rows) x = gauss(rng);
  const shoal::codes::Sq8 sq8 = shoal::codes::Sq8::Train(rows.data(), 1000, dim);
  // Queries taken in turn, so that no result can be reused.
  constexpr size_t kResetQueries = 64;
  std::vector<float> queries(kResetQueries * dim);
  for (float& x : queries) x = gauss(rng);
  shoal::codes::Sq8Query query;
  size_t q = 0;
  for (auto _ : state) {
    query.Reset(sq8, shoal::Metric::kL2, queries.data() + q * dim);
    benchmark::DoNotOptimize(query);
    q = q + 1 == kResetQueries ? 0 : q + 1;
  }
  state.SetLabel(shoal::Kernels().isa);
}

BENCHMARK(BM_Sq8QueryReset)->ArgName("dim")->Arg(128)->Arg(384)->Arg(768)->Arg(1536);

}  // namespace
}  // namespace shoal_bench

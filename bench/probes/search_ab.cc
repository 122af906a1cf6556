// Copyright 2026 The shoal Authors.
//
// Unfiltered search speed of one build against another, on the same
// database, in turns: run this binary and another build's copy of it
// alternately on one --dir (the first run bulk loads it). Prints QPS on one
// thread and recall@10 at each list size, so that a change to the search
// path can be held to "no slower" (issue 44: within 3%).
//
//   ./build/bench/search_ab --dataset embed --dir /dev/shm/ab --lists 10,20,40
//
// Figures: docs/performance.md ("Filtered search").

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "common/brute_force.h"
#include "common/dataset.h"
#include "shoal/db.h"

ABSL_FLAG(std::string, dataset, "embed", "small, medium, large or embed");
ABSL_FLAG(std::string, dir, "/dev/shm/shoal-search-ab", "the database (bulk loaded if absent)");
ABSL_FLAG(std::string, lists, "10,20,40", "list sizes");
ABSL_FLAG(double, seconds, 2.0, "time a list size");
ABSL_FLAG(size_t, queries, 1000, "queries");
ABSL_FLAG(uint64_t, one_graph_max_vectors, shoal::CompactionOptions{}.one_graph_max_vectors,
          "CompactionOptions::one_graph_max_vectors of a fresh bulk load");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<shoal_bench::DatasetSpec> spec =
      shoal_bench::DatasetSpecByName(absl::GetFlag(FLAGS_dataset));
  if (!spec.ok()) return 1;
  spec->num_queries = absl::GetFlag(FLAGS_queries);
  const shoal_bench::Dataset data = shoal_bench::GenerateDataset(*spec, 42);
  const uint32_t dim = data.dim(), k = 10;
  const size_t nq = data.num_queries();
  const shoal::Metric metric =
      spec->metric == "cosine" ? shoal::Metric::kCosine : shoal::Metric::kL2;
  shoal::Options o;
  o.default_collection.dim = dim;
  o.default_collection.metric = metric;
  o.default_collection.shard_count = 2;
  o.compaction.automatic = false;
  o.compaction.one_graph_max_vectors = absl::GetFlag(FLAGS_one_graph_max_vectors);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  const bool fresh = !std::filesystem::exists(dir);
  absl::StatusOr<std::unique_ptr<shoal::DB>> db = shoal::DB::Open(o, dir);
  if (!db.ok()) return 1;
  if (fresh) {
    const auto start = std::chrono::steady_clock::now();
    if (!(*db)->BulkLoad(data.ids, data.base).ok()) return 1;
    std::printf("bulk load: %.2f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const auto knn = shoal_bench::ExactKnnFloat(
      shoal_bench::MatrixView{data.base.data(), data.size(), dim},
      shoal_bench::MatrixView{data.queries.data(), nq, dim}, metric, k, 0, nullptr);
  const std::vector<std::string> lists = absl::StrSplit(absl::GetFlag(FLAGS_lists), ',');
  for (const std::string& l : lists) {
    shoal::SearchOptions so;
    so.k = k;
    so.list_size = static_cast<uint32_t>(std::stoul(l));
    size_t done = 0, hits = 0;
    const auto start = std::chrono::steady_clock::now();
    double seconds = 0;
    while (seconds < absl::GetFlag(FLAGS_seconds)) {
      for (size_t q = 0; q < nq; ++q, ++done) {
        absl::StatusOr<std::vector<shoal::Neighbor>> r = (*db)->Search(data.Query(q), so);
        if (!r.ok()) return 1;
        if (done < nq) {
          for (const shoal::Neighbor& nb : *r) {
            for (const auto& c : knn[q]) hits += data.ids[c.row] == nb.id;
          }
        }
      }
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::printf("L %s: %.0f QPS, recall@10 %.4f\n", l.c_str(), done / seconds,
                static_cast<double>(hits) / (nq * k));
  }
  return 0;
}

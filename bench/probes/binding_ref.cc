// Copyright 2026 The shoal Authors.
//
// The C++ side of bench/python/binding_overhead.py: the same calls the
// Python package makes, on the same files and database, so that the
// script can time both in turns and report what the binding costs
// (issue 45: search_batch within 5% of SearchBatch, put_batch within 10% of
// PutBatch, one search within 2 us of Search).
//
//   binding_ref --op put --base B.fbin --dir D [--batch N]
//       a fresh database at D; PutBatch of every row of B, N rows a call
//   binding_ref --op search --query Q.fbin --dir D [--k 10 --list 40]
//       the database at D; every query once with Search (one thread), then
//       all of them in one SearchBatch (all cores)
//
// Prints one JSON object: seconds per part.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "dataset/dataset_reader.h"
#include "shoal/db.h"
#include "shoal/file_system.h"

ABSL_FLAG(std::string, op, "search", "put or search");
ABSL_FLAG(std::string, base, "", "base vectors (.fbin), for --op put");
ABSL_FLAG(std::string, query, "", "queries (.fbin), for --op search");
ABSL_FLAG(std::string, dir, "", "the database");
ABSL_FLAG(std::string, metric, "l2", "l2, ip or cosine (a new database)");
ABSL_FLAG(size_t, batch, 0, "rows per PutBatch (0 = all in one call)");
ABSL_FLAG(size_t, memtable_mb, 1024,
          "Options::memtable_bytes in MiB: large enough that --op put times the writes, not "
          "the flushes and graph builds they would wait for");
ABSL_FLAG(uint32_t, k, 10, "neighbours");
ABSL_FLAG(uint32_t, list, 40, "SearchOptions::list_size");

namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "binding_ref: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string op = absl::GetFlag(FLAGS_op), dir = absl::GetFlag(FLAGS_dir);
  shoal::Options options;
  options.memtable_bytes = absl::GetFlag(FLAGS_memtable_mb) << 20;
  if (op == "put") {
    absl::StatusOr<shoal::Matrix> base =
        shoal::ReadVectors(shoal::FileSystem::Default(), absl::GetFlag(FLAGS_base));
    if (!base.ok()) return Fail(base.status());
    std::filesystem::remove_all(dir);
    const std::string metric = absl::GetFlag(FLAGS_metric);
    options.default_collection.dim = base->cols;
    options.default_collection.metric = metric == "cosine" ? shoal::Metric::kCosine
                                        : metric == "ip"   ? shoal::Metric::kInnerProduct
                                                           : shoal::Metric::kL2;
    auto db = shoal::DB::Open(options, dir);
    if (!db.ok()) return Fail(db.status());
    std::vector<uint64_t> ids(base->rows);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
    const size_t batch = absl::GetFlag(FLAGS_batch) == 0 ? ids.size() : absl::GetFlag(FLAGS_batch);
    const auto start = std::chrono::steady_clock::now();
    for (size_t first = 0; first < ids.size(); first += batch) {
      const size_t n = std::min(batch, ids.size() - first);
      absl::Status s = (*db)->PutBatch(std::span<const uint64_t>(ids.data() + first, n),
                                       std::span<const float>(base->data.data() + first * base->cols,
                                                              n * base->cols));
      if (!s.ok()) return Fail(s);
    }
    const double put = Since(start);
    if (absl::Status s = (*db)->Close(); !s.ok()) return Fail(s);
    std::printf("{\"op\": \"put\", \"rows\": %zu, \"put_seconds\": %.6f}\n", ids.size(), put);
    return 0;
  }
  absl::StatusOr<shoal::Matrix> queries =
      shoal::ReadVectors(shoal::FileSystem::Default(), absl::GetFlag(FLAGS_query));
  if (!queries.ok()) return Fail(queries.status());
  auto db = shoal::DB::Open(options, dir);
  if (!db.ok()) return Fail(db.status());
  shoal::SearchOptions search;
  search.k = absl::GetFlag(FLAGS_k);
  search.list_size = absl::GetFlag(FLAGS_list);
  const size_t dim = queries->cols, n = queries->rows;
  auto run_single = [&]() -> absl::StatusOr<double> {
    const auto start = std::chrono::steady_clock::now();
    for (size_t q = 0; q < n; ++q) {
      auto found = (*db)->Search(std::span<const float>(queries->data.data() + q * dim, dim),
                                 search);
      if (!found.ok()) return found.status();
    }
    return Since(start);
  };
  if (auto warm = run_single(); !warm.ok()) return Fail(warm.status());
  absl::StatusOr<double> single = run_single();
  if (!single.ok()) return Fail(single.status());
  const auto start = std::chrono::steady_clock::now();
  auto batch = (*db)->SearchBatch(queries->data, search);
  if (!batch.ok()) return Fail(batch.status());
  const double batch_seconds = Since(start);
  if (absl::Status s = (*db)->Close(); !s.ok()) return Fail(s);
  std::printf("{\"op\": \"search\", \"queries\": %zu, \"single_seconds\": %.6f, "
              "\"batch_seconds\": %.6f}\n", n, *single, batch_seconds);
  return 0;
}

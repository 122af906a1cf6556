// Copyright 2026 The shoal Authors.
//
// Beam vs pipelined search over one disk-resident segment (SegmentStorage::
// kDisk, SearchOptions::disk_search), on one thread: QPS, recall@10 against
// brute force, and block reads per query, for several beam widths and list
// sizes. The segment (clustered vectors, default graph options) is built
// once into --dir and reused by later runs with the same --n, --dim and
// --seed; put --dir on the disk to be measured (direct I/O is reported).
//
//   disk_search_bench --dir=/var/tmp/shoal-disk-bench --n=200000 --dim=128
//
// Rows "beam-pread" are beam search with io_uring off (its reads one pread
// at a time, as before ReadQueue existed).
//
// Figures: docs/performance-history.md, "Pipelined search over io_uring" (issue 20).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "distance/distance.h"
#include "disk/disk_segment_reader.h"
#include "segment/segment.h"
#include "util/file_system.h"
#include "util/thread_pool.h"
#include "util/top_k.h"
#include "util/uring_read_queue.h"

ABSL_FLAG(std::string, dir, "/var/tmp/shoal-disk-bench", "directory of the segment");
ABSL_FLAG(uint64_t, n, 200000, "vectors");
ABSL_FLAG(uint32_t, dim, 128, "dimensions");
ABSL_FLAG(uint64_t, queries, 300, "queries");
ABSL_FLAG(uint64_t, seed, 1, "data seed");
ABSL_FLAG(std::string, lists, "20,40,80,160", "list sizes L");
ABSL_FLAG(std::string, widths, "2,4,8", "beam widths W");
ABSL_FLAG(uint64_t, cache_bytes, 1 << 20, "node cache bytes");
ABSL_FLAG(uint32_t, build_threads, 2, "threads building the segment");
ABSL_FLAG(uint32_t, repeats, 1, "passes over the queries per row (the best is kept)");

namespace {

using shoal::DiskSearch;

[[noreturn]] void Die(const absl::Status& s, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

std::vector<uint32_t> ParseList(const std::string& text) {
  std::vector<uint32_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    uint32_t v;
    if (absl::SimpleAtoi(part, &v)) out.push_back(v);
  }
  return out;
}

std::vector<float> Clustered(size_t n, uint32_t dim, uint64_t seed) {
  std::mt19937_64 centre_rng(99), rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  constexpr size_t kCentres = 64;
  std::vector<float> centres(kCentres * dim);
  for (float& x : centres) x = 2.0f * gauss(centre_rng);
  std::vector<float> out(n * dim);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = rng() % kCentres;
    for (size_t j = 0; j < dim; ++j) out[i * dim + j] = centres[c * dim + j] + gauss(rng);
  }
  return out;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const size_t n = absl::GetFlag(FLAGS_n), nq = absl::GetFlag(FLAGS_queries);
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  const std::string dir = absl::GetFlag(FLAGS_dir);
  if (absl::Status s = fs->CreateDir(dir); !s.ok()) Die(s, "mkdir");
  const std::string path =
      shoal::JoinPath(dir, "seg-" + std::to_string(n) + "x" + std::to_string(dim) + "-" +
                               std::to_string(seed) + ".vamana");
  const std::vector<float> data = Clustered(n, dim, seed);
  const std::vector<float> queries = Clustered(nq, dim, seed + 1000);
  if (!fs->Exists(path)) {
    std::vector<uint64_t> ids(n), sequences(n);
    for (size_t i = 0; i < n; ++i) {
      ids[i] = i;
      sequences[i] = i + 1;
    }
    shoal::SegmentContents contents;
    contents.dim = dim;
    contents.metric = shoal::Metric::kL2;
    contents.ids = ids;
    contents.sequences = sequences;
    contents.vectors = data.data();
    shoal::ThreadPool pool(absl::GetFlag(FLAGS_build_threads));
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status s = shoal::BuildSegment(fs, &pool, path, contents, {}); !s.ok()) {
      Die(s, "build");
    }
    std::printf("built %s in %.1f s\n", path.c_str(), Seconds(start));
  }
  // Ground truth: the exact top 10.
  std::vector<std::set<uint64_t>> truth(nq);
  {
    const auto start = std::chrono::steady_clock::now();
    for (size_t q = 0; q < nq; ++q) {
      shoal::TopK top(10);
      for (size_t i = 0; i < n; ++i) {
        top.Push(i, shoal::Distance(shoal::Metric::kL2, &queries[q * dim], &data[i * dim], dim));
      }
      for (const shoal::Neighbor& nb : top.Take()) truth[q].insert(nb.id);
    }
    std::printf("ground truth: %.1f s\n", Seconds(start));
  }
  shoal::SegmentOpenOptions open_options;
  open_options.storage = shoal::SegmentStorage::kDisk;
  open_options.node_cache_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_cache_bytes));
  auto opened = shoal::Segment::Open(fs, path, dim, shoal::Metric::kL2, open_options);
  if (!opened.ok()) Die(opened.status(), "open");
  std::shared_ptr<shoal::Segment> segment = *opened;
  auto& reader = static_cast<shoal::disk::DiskSegmentReader&>(*segment);
  std::printf("%s: %zu vectors x %u, direct I/O %s, %zu cached nodes, io_uring %s\n",
              path.c_str(), n, dim, reader.direct_io() ? "yes" : "no", reader.cached_nodes(),
              shoal::IoUringBuilt() ? "built" : "not built");
  std::printf("%-11s %4s %4s %9s %9s %11s %11s %11s\n", "mode", "L", "W", "QPS", "recall@10",
              "reads/q", "io_wait_us", "compute_us");

  struct Mode {
    const char* name;
    DiskSearch search;
    bool uring;
  };
  const Mode modes[] = {{"beam-pread", DiskSearch::kBeam, false},
                        {"beam", DiskSearch::kBeam, true},
                        {"pipelined", DiskSearch::kPipelined, true}};
  for (uint32_t list : ParseList(absl::GetFlag(FLAGS_lists))) {
    for (uint32_t width : ParseList(absl::GetFlag(FLAGS_widths))) {
      for (const Mode& mode : modes) {
        shoal::SetIoUringEnabled(mode.uring);
        double best_qps = 0;
        size_t hits = 0;
        shoal::SegmentSearchStats stats;
        for (uint32_t rep = 0; rep < std::max(1u, absl::GetFlag(FLAGS_repeats)); ++rep) {
          shoal::SegmentSearchStats pass;
          size_t pass_hits = 0;
          shoal::SearchOptions options;
          options.k = 10;
          options.list_size = list;
          options.beam_width = width;
          options.disk_search = mode.search;
          const auto start = std::chrono::steady_clock::now();
          for (size_t q = 0; q < nq; ++q) {
            shoal::TopK top(10);
            if (absl::Status s = segment->Search(&queries[q * dim], options, {}, &top, &pass);
                !s.ok()) {
              Die(s, "search");
            }
            for (const shoal::Neighbor& nb : top.Take()) pass_hits += truth[q].count(nb.id);
          }
          const double qps = nq / Seconds(start);
          if (qps > best_qps) {
            best_qps = qps;
            hits = pass_hits;
            stats = pass;
          }
        }
        std::printf("%-11s %4u %4u %9.0f %9.4f %11.1f %11.1f %11.1f\n", mode.name, list, width,
                    best_qps, double(hits) / (10.0 * nq), double(stats.reads) / nq,
                    stats.io_wait_ns / 1e3 / nq, stats.compute_ns / 1e3 / nq);
        std::fflush(stdout);
      }
    }
  }
  shoal::SetIoUringEnabled(true);
  return 0;
}

// Copyright 2026 The shoal Authors.

#include "common/dataset_files.h"

#include <cstdint>
#include <filesystem>
#include <limits>

#include "absl/status/status.h"
#include "common/bench_util.h"
#include "fmt/core.h"
#include "common/ground_truth.h"
#include "common/progress.h"
#include "dataset/dataset_reader.h"
#include "dataset/dataset_writer.h"
#include "util/file_system.h"

namespace shoal_bench {
namespace {

bool EnoughTruth(const std::vector<std::vector<uint64_t>>& truth, size_t queries, uint32_t k) {
  if (truth.size() != queries) return false;
  for (const auto& row : truth) {
    if (row.size() < k) return false;
  }
  return true;
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

const char* MetricName(shoal::Metric m) {
  switch (m) {
    case shoal::Metric::kL2: return "l2";
    case shoal::Metric::kInnerProduct: return "ip";
    case shoal::Metric::kCosine: return "cosine";
  }
  return "?";
}

// Where computed ground truth for `files` is cached.
std::string CachePath(const DatasetFiles& files, size_t base_rows, shoal::Metric metric,
                      uint32_t k) {
  const std::string rows = files.max_base_rows > 0 ? fmt::format(".n{}", base_rows) : "";
  return fmt::format("{}.{}{}.{}.k{}.groundtruth.ivecs", files.query, BaseName(files.base), rows,
                     MetricName(metric), k);
}


uint64_t RowLimit(size_t max) { return max > 0 ? max : std::numeric_limits<uint64_t>::max(); }

std::vector<std::vector<uint64_t>> ToIds(const shoal::IntMatrix& m) {
  std::vector<std::vector<uint64_t>> out(m.rows);
  for (uint64_t i = 0; i < m.rows; ++i) {
    for (const int32_t id : m.row(i)) {
      if (id >= 0) out[i].push_back(static_cast<uint64_t>(id));
    }
  }
  return out;
}

shoal::IntMatrix FromIds(const std::vector<std::vector<uint64_t>>& ids, uint32_t k) {
  shoal::IntMatrix m;
  m.rows = ids.size();
  m.cols = k;
  m.data.assign(m.rows * k, -1);
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = 0; j < std::min<size_t>(k, ids[i].size()); ++j) {
      m.data[i * k + j] = static_cast<int32_t>(ids[i][j]);
    }
  }
  return m;
}

}  // namespace

absl::StatusOr<Dataset> ReadDataset(const DatasetFiles& files) {
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  absl::StatusOr<shoal::Matrix> base =
      shoal::ReadVectors(fs, files.base, RowLimit(files.max_base_rows));
  if (!base.ok()) return base.status();
  absl::StatusOr<shoal::Matrix> query =
      shoal::ReadVectors(fs, files.query, RowLimit(files.max_queries));
  if (!query.ok()) return query.status();
  if (base->rows == 0 || query->rows == 0 || base->cols != query->cols) {
    return absl::InvalidArgumentError(fmt::format(
        "{} holds {} x {} and {} holds {} x {}: want non-empty sets of one dim", files.base,
        base->rows, base->cols, files.query, query->rows, query->cols));
  }
  Dataset data;
  data.spec = DatasetSpec{BaseName(files.base), base->rows, base->cols, query->rows, 0};
  data.source = fmt::format("files {} and {}", files.base, files.query);
  data.ids.resize(base->rows);
  for (size_t i = 0; i < data.ids.size(); ++i) data.ids[i] = i;
  data.base = std::move(base->data);
  data.queries = std::move(query->data);
  // A ground-truth file names rows of the whole base set; with fewer rows
  // read it no longer applies.
  if (!files.groundtruth.empty() && files.max_base_rows == 0) {
    absl::StatusOr<shoal::IntMatrix> truth =
        shoal::ReadNeighbors(fs, files.groundtruth, query->rows);
    if (!truth.ok()) return truth.status();
    data.truth = ToIds(*truth);
    data.source += fmt::format(", ground truth {}", files.groundtruth);
  } else if (!files.groundtruth.empty()) {
    StatusLine(fmt::format("[data]   ignoring {}: --max_base_rows cut the base set",
                           files.groundtruth));
  }
  return data;
}

absl::StatusOr<std::vector<std::vector<uint64_t>>> GroundTruth(
    const Dataset& data, const DatasetFiles* files, shoal::Metric metric, uint32_t k,
    uint32_t threads, double* seconds, std::string* how) {
  const Stopwatch sw;
  if (EnoughTruth(data.truth, data.num_queries(), k)) {
    *how = "given with the data";
    *seconds = sw.Seconds();
    return data.truth;
  }
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  const std::string cache = files ? CachePath(*files, data.size(), metric, k) : "";
  if (!cache.empty() && std::filesystem::exists(cache)) {
    absl::StatusOr<shoal::IntMatrix> cached = shoal::ReadNeighbors(fs, cache);
    if (cached.ok() && EnoughTruth(ToIds(*cached), data.num_queries(), k)) {
      *how = "cached in " + cache;
      *seconds = sw.Seconds();
      return ToIds(*cached);
    }
    StatusLine(fmt::format("[truth]  ignoring {}: {}", cache,
                           cached.ok() ? "wrong shape" : cached.status().ToString()));
  }
  std::vector<std::vector<uint64_t>> truth = BruteForceKnn(data, metric, k, threads);
  *seconds = sw.Seconds();
  *how = fmt::format("brute force (float scan, double-precision rerank), {:.3f} s", *seconds);
  if (!cache.empty() && data.size() <= uint64_t{std::numeric_limits<int32_t>::max()}) {
    const absl::Status s = shoal::WriteNeighbors(fs, cache, FromIds(truth, k));
    *how += s.ok() ? ", cached in " + cache : ", not cached: " + s.ToString();
  }
  return truth;
}


}  // namespace shoal_bench

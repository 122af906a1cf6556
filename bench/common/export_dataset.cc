// Copyright 2026 The shoal Authors.

#include "common/export_dataset.h"

#include <filesystem>
#include <limits>

#include "common/json_writer.h"
#include "dataset/dataset_reader.h"
#include "dataset/dataset_writer.h"
#include "fmt/core.h"
#include "util/file_system.h"
#include "util/status_macros.h"

namespace shoal_bench {
namespace {

shoal::Matrix ToMatrix(const std::vector<float>& values, uint32_t dim) {
  shoal::Matrix m;
  m.cols = dim;
  m.rows = values.size() / dim;
  m.data = values;
  return m;
}

// The first k ids of every row. REQUIRES: rows hold >= k ids, each < 2^31.
shoal::IntMatrix ToIntMatrix(const std::vector<std::vector<uint64_t>>& truth, uint32_t k) {
  shoal::IntMatrix m;
  m.rows = truth.size();
  m.cols = k;
  m.data.reserve(m.rows * k);
  for (const auto& row : truth) {
    for (uint32_t j = 0; j < k; ++j) m.data.push_back(static_cast<int32_t>(row[j]));
  }
  return m;
}

absl::Status CheckTruth(const std::vector<std::vector<uint64_t>>& truth, size_t queries,
                        uint32_t k) {
  if (truth.size() != queries) {
    return absl::InvalidArgumentError(
        fmt::format("ground truth has {} rows for {} queries", truth.size(), queries));
  }
  for (size_t i = 0; i < truth.size(); ++i) {
    if (truth[i].size() < k) {
      return absl::InvalidArgumentError(
          fmt::format("ground truth row {} has {} ids, want {}", i, truth[i].size(), k));
    }
    for (uint32_t j = 0; j < k; ++j) {
      if (truth[i][j] > uint64_t{std::numeric_limits<int32_t>::max()}) {
        return absl::InvalidArgumentError(
            fmt::format("ground truth id {} does not fit int32", truth[i][j]));
      }
    }
  }
  return absl::OkStatus();
}

std::string DescriptionJson(const Dataset& data, uint32_t k, const ExportInfo& info) {
  JsonWriter w;
  w.BeginObject();
  w.Field("name", data.spec.name);
  w.Field("source", data.source);
  w.Field("metric", info.metric);
  w.Field("num_vectors", uint64_t{data.size()});
  w.Field("dim", data.dim());
  w.Field("num_queries", uint64_t{data.num_queries()});
  w.Field("k", k);
  w.Field("ground_truth", info.ground_truth);
  w.Field("groundtruth_layout", "q:u32 k:u32 int32 ids[q*k], no distances");
  w.EndObject();
  return w.str();
}

}  // namespace

absl::Status ExportDataset(const Dataset& data, const std::vector<std::vector<uint64_t>>& truth,
                           uint32_t k, const ExportInfo& info, const std::string& dir) {
  SHOAL_RETURN_IF_ERROR(CheckTruth(truth, data.num_queries(), k));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return shoal::ErrnoStatus(ec.value(), "create_directories", dir);
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  SHOAL_RETURN_IF_ERROR(shoal::WriteVectors(fs, shoal::JoinPath(dir, "base.fbin"),
                                            ToMatrix(data.base, data.dim())));
  SHOAL_RETURN_IF_ERROR(ExportQueries(data, truth, k, dir));
  return shoal::WriteFileAtomic(fs, shoal::JoinPath(dir, "dataset.json"),
                                DescriptionJson(data, k, info));
}

absl::Status ExportQueries(const Dataset& data, const std::vector<std::vector<uint64_t>>& truth,
                           uint32_t k, const std::string& dir) {
  SHOAL_RETURN_IF_ERROR(CheckTruth(truth, data.num_queries(), k));
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  SHOAL_RETURN_IF_ERROR(shoal::WriteVectors(fs, shoal::JoinPath(dir, "query.fbin"),
                                            ToMatrix(data.queries, data.dim())));
  return shoal::WriteNeighbors(fs, shoal::JoinPath(dir, "groundtruth.ibin"),
                               ToIntMatrix(truth, k));
}

absl::StatusOr<ExportedQueries> ReadExportedQueries(const std::string& dir) {
  shoal::FileSystem* fs = shoal::FileSystem::Default();
  SHOAL_ASSIGN_OR_RETURN(shoal::Matrix queries,
                         shoal::ReadVectors(fs, shoal::JoinPath(dir, "query.fbin")));
  SHOAL_ASSIGN_OR_RETURN(shoal::IntMatrix ids,
                         shoal::ReadNeighbors(fs, shoal::JoinPath(dir, "groundtruth.ibin")));
  if (ids.rows != queries.rows) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: {} queries but {} rows of ground truth", dir, queries.rows, ids.rows));
  }
  ExportedQueries out;
  out.dim = queries.cols;
  out.queries = std::move(queries.data);
  out.truth.resize(ids.rows);
  for (uint64_t i = 0; i < ids.rows; ++i) {
    for (const int32_t id : ids.row(i)) out.truth[i].push_back(static_cast<uint64_t>(id));
  }
  return out;
}

}  // namespace shoal_bench

// Copyright 2026 The shoal Authors.
//
// comprehensive_bench --export_dir DIR: the data set a run uses (synthetic
// or read with --base), and its exact neighbours, written as files that a
// peer run outside this binary reads (bench/peers/diskann_disk_peer.py), so that
// both sides search the same vectors and are scored against the same truth.
//
//   DIR/base.fbin         n:uint32 dim:uint32 float32[n * dim]; row i is id i
//   DIR/query.fbin        the queries, same layout
//   DIR/groundtruth.ibin  q:uint32 k:uint32 int32[q * k]: row i holds query
//                         i's k nearest base ids, nearest first (ties by id)
//   DIR/dataset.json      name, source, metric, sizes, k, how the truth was got
//
// All little-endian (dataset_format.h). groundtruth.ibin carries ids only:
// DiskANN's own truth files (compute_groundtruth) append q * k float32
// distances after the ids, so its tools do not read this file, and shoal's
// readers would refuse one of those. Ids fit int32 because a .fbin holds
// fewer than 2^32 rows and the reader refuses larger ids.

#ifndef SHOAL_BENCH_COMMON_EXPORT_DATASET_H_
#define SHOAL_BENCH_COMMON_EXPORT_DATASET_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/dataset.h"

namespace shoal_bench {

struct ExportInfo {
  std::string metric;        // "l2", "ip" or "cosine"
  std::string ground_truth;  // how the truth was obtained
};

// Creates `dir` when missing and writes the four files above into it, each
// atomically (old or new content after a crash, never a prefix). truth[i]
// holds at least k ids for every query. InvalidArgument when it does not, or
// when an id or the size does not fit the formats; the I/O error otherwise.
[[nodiscard]] absl::Status ExportDataset(const Dataset& data,
                                         const std::vector<std::vector<uint64_t>>& truth,
                                         uint32_t k, const ExportInfo& info,
                                         const std::string& dir);

// The query.fbin and groundtruth.ibin of the above alone, into an existing
// `dir` (the disk phase hands them to its child process this way).
[[nodiscard]] absl::Status ExportQueries(const Dataset& data,
                                         const std::vector<std::vector<uint64_t>>& truth,
                                         uint32_t k, const std::string& dir);

// What ExportQueries wrote: the queries (row-major, `dim` floats each) and
// their exact neighbour ids. DataLoss or InvalidArgument for a damaged file,
// and InvalidArgument when the two disagree on the number of queries.
struct ExportedQueries {
  uint32_t dim = 0;
  std::vector<float> queries;
  std::vector<std::vector<uint64_t>> truth;
  size_t size() const { return truth.size(); }
  std::span<const float> Query(size_t i) const { return {queries.data() + i * dim, dim}; }
};
[[nodiscard]] absl::StatusOr<ExportedQueries> ReadExportedQueries(const std::string& dir);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_EXPORT_DATASET_H_

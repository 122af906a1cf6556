// Copyright 2026 The shoal Authors.
//
// Data sets read from files (--base FILE --query FILE [--groundtruth FILE]):
// .fvecs/.bvecs/.fbin/.u8bin/.npy vectors and .ivecs/.ibin/.npy neighbour
// ids, through the readers in src/dataset/ (dataset_reader.h). Base row i
// gets id i, which is what ground-truth files name.
//
// Without --groundtruth, the exact neighbours are computed (ground_truth.h)
// and cached next to the query file as
//   <query>.<base file name>.<metric>.k<k>.groundtruth.ivecs
// so that the next run on the same files reads them instead.

#ifndef SHOAL_BENCH_COMMON_DATASET_FILES_H_
#define SHOAL_BENCH_COMMON_DATASET_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/dataset.h"
#include "shoal/options.h"

namespace shoal_bench {

struct DatasetFiles {
  std::string base;
  std::string query;
  std::string groundtruth;  // may be empty
  size_t max_base_rows = 0;   // 0 = all
  size_t max_queries = 0;     // 0 = all
};

// Reads the vectors (and the ground truth, if named) into a Dataset.
// spec.name is the base file's name; num_clusters is 0.
absl::StatusOr<Dataset> ReadDataset(const DatasetFiles& files);

// The exact k nearest ids of every query of `data` under `metric`: data.truth
// when it has at least k per query, else the cache file of `files` when it
// exists, else computed on `threads` threads and written to the cache.
// `files` may be null (synthetic data: computed, never cached).
absl::StatusOr<std::vector<std::vector<uint64_t>>> GroundTruth(
    const Dataset& data, const DatasetFiles* files, shoal::Metric metric, uint32_t k,
    uint32_t threads, double* seconds, std::string* how);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_COMMON_DATASET_FILES_H_

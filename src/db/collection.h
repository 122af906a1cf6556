// Copyright 2026 The shoal Authors.
//
// One named collection: its shards, routing by id, validation of input, and
// the fan-out and merge of searches. Thread-safe.

#ifndef SHOAL_SRC_DB_COLLECTION_H_
#define SHOAL_SRC_DB_COLLECTION_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "shard/shard.h"
#include "shoal/db.h"
#include "util/background_worker.h"
#include "util/file_system.h"
#include "util/thread_pool.h"

namespace shoal {

class Collection {
 public:
  // Opens (creating when absent) the collection stored in `dir`, recovering
  // every shard in parallel on `pool`. REQUIRES: options validated and
  // shard_count resolved.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Collection>> Open(
      FileSystem* fs, ThreadPool* pool, BackgroundWorker* prefaulter,
      const std::string& dir, std::string name, const CollectionOptions& options,
      const Options& db_options);

  const std::string& name() const { return name_; }
  const CollectionOptions& options() const { return options_; }
  const std::string& dir() const { return dir_; }

  [[nodiscard]] absl::Status Put(uint64_t id, std::span<const float> vector);
  [[nodiscard]] absl::Status PutBatch(std::span<const uint64_t> ids,
                                      std::span<const float> vectors);
  [[nodiscard]] absl::Status Delete(uint64_t id);
  [[nodiscard]] absl::StatusOr<std::vector<float>> Get(uint64_t id) const;
  [[nodiscard]] absl::StatusOr<std::vector<Neighbor>> Search(
      std::span<const float> query, const SearchOptions& options) const;
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<Neighbor>>> SearchBatch(
      std::span<const float> queries, const SearchOptions& options) const;

  // Makes every shard's log durable.
  [[nodiscard]] absl::Status SyncWal();
  // Closes every shard; later writes return FailedPrecondition.
  [[nodiscard]] absl::Status Close();

  size_t live_count() const;

 private:
  Collection(ThreadPool* pool, std::string dir, std::string name,
             const CollectionOptions& options)
      : pool_(pool), dir_(std::move(dir)), name_(std::move(name)), options_(options) {}

  // The query as searched: validated, and normalized for kCosine.
  absl::Status PrepareQuery(std::span<const float> query, std::vector<float>* out) const;
  // Exact top-k over every shard, on this thread.
  std::vector<Neighbor> SearchShards(const float* query, uint32_t k) const;

  ThreadPool* const pool_;
  const std::string dir_;
  const std::string name_;
  const CollectionOptions options_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_DB_COLLECTION_H_

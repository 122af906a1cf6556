// Copyright 2026 The shoal Authors.
//
// Looking inside a database: statistics of an open DB, and a check of every
// checksum of a closed one. Used by the `shoal` command-line tool.

#ifndef SHOAL_SRC_DB_INSPECT_H_
#define SHOAL_SRC_DB_INSPECT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "shard/shard_report.h"
#include "shoal/db.h"
#include "util/file_system.h"

namespace shoal {

struct CollectionReport {
  std::string name;
  CollectionOptions options;
  std::vector<ShardReport> shards;
};

// Statistics of every collection of `db` (a DB returned by DB::Open).
absl::StatusOr<std::vector<CollectionReport>> CollectStats(DB& db);

struct VerifyProblem {
  std::string path;
  std::string what;  // the status message: says where (offset) and what
  bool fatal = true; // false: a torn log tail, which recovery drops by design,
                     // or a graph with unreachable nodes (nothing is lost)
};

struct VerifyReport {
  uint64_t files_checked = 0;
  uint64_t bytes_checked = 0;
  std::vector<VerifyProblem> problems;
  bool ok() const {
    for (const VerifyProblem& p : problems) {
      if (p.fatal) return false;
    }
    return true;
  }
};

// Checks every checksum of the database at `path`: the manifest, every log
// file (every record), every segment (every sector, the id table, header and
// footer), and reports (not fatal) each segment whose graph leaves nodes
// unreachable from its medoid. Takes the directory's lock (FailedPrecondition when it is in use)
// and changes nothing. An error status means the check itself could not run.
absl::StatusOr<VerifyReport> VerifyDatabase(FileSystem* fs, const std::string& path);

}  // namespace shoal

#endif  // SHOAL_SRC_DB_INSPECT_H_

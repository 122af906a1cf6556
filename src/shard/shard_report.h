// Copyright 2026 The shoal Authors.
//
// A shard's statistics, for the inspection tools (`shoal stats`).

#ifndef SHOAL_SRC_SHARD_SHARD_REPORT_H_
#define SHOAL_SRC_SHARD_SHARD_REPORT_H_

#include <cstdint>

namespace shoal {

struct ShardReport {
  uint32_t index = 0;
  uint64_t memtable_bytes = 0;    // active + frozen memtables
  uint64_t frozen_memtables = 0;
  uint64_t segments = 0;
  uint64_t segment_vectors = 0;   // vectors stored in segments (all versions)
  uint64_t deleted = 0;           // tombstones in memtables and segments
  uint64_t wal_files = 0;
  uint64_t wal_bytes = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_SHARD_SHARD_REPORT_H_

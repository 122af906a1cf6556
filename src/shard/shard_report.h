// Copyright 2026 The shoal Authors.
//
// A shard's statistics, for the inspection tools (`shoal stats`).

#ifndef SHOAL_SRC_SHARD_SHARD_REPORT_H_
#define SHOAL_SRC_SHARD_SHARD_REPORT_H_

#include <cstdint>
#include <vector>

namespace shoal {

struct ShardReport {
  uint32_t index = 0;
  uint64_t memtable_bytes = 0;    // active + frozen memtables
  uint64_t frozen_memtables = 0;
  uint64_t segments = 0;
  // The numbers of the shared segments among them (one graph for several
  // shards, in the collection's directory; other shards name them too).
  std::vector<uint64_t> shared_segments;
  uint64_t segment_vectors = 0;   // vectors stored in segments (all versions)
  uint64_t deleted = 0;           // tombstones in memtables and segments
  // Vectors stored in memtables and segments (every version), and those
  // that are the newest version of their id (what a search can return).
  // stored - live are dead: deleted or overwritten, still taking space.
  uint64_t stored_vectors = 0;
  uint64_t live_vectors = 0;
  // stored / live (1 when nothing is dead; 0 when nothing is stored).
  double SpaceAmplification() const {
    return live_vectors == 0 ? 0.0 : static_cast<double>(stored_vectors) / live_vectors;
  }
  // dead / stored.
  double DeadFraction() const {
    return stored_vectors == 0
               ? 0.0
               : static_cast<double>(stored_vectors - live_vectors) / stored_vectors;
  }
  // Bytes of the segments' record regions (Segment::record_bytes): labels
  // with their postings, attributes with their summaries, payloads with
  // their index. A shared segment counts in shard 0's report only.
  uint64_t segment_label_bytes = 0;
  uint64_t segment_attribute_bytes = 0;
  uint64_t segment_payload_bytes = 0;
  uint64_t wal_files = 0;
  uint64_t wal_bytes = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_SHARD_SHARD_REPORT_H_

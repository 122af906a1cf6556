// Copyright 2026 The shoal Authors.
//
// A disk-resident segment search's scratch (DiskSegmentReader::Search, both
// walks): kept per thread in a thread_local (ScratchLease), so that a query
// allocates nothing once its thread has made a search this large (lists,
// visited sets and buffers grow to what a search uses, not to the segment).
// Not thread-safe.

#ifndef SHOAL_SRC_DISK_DISK_SEARCH_SCRATCH_H_
#define SHOAL_SRC_DISK_DISK_SEARCH_SCRATCH_H_

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/candidate_list.h"
#include "graph/hashed_visited_set.h"
#include "codes/residual_sq4.h"
#include "codes/sq8.h"
#include "shoal/file_system.h"
#include "util/aligned_buffer.h"

namespace shoal::disk {

struct DiskSearchScratch {
  // An expanded node with its exact distance and its entry.
  struct Ranked {
    float distance;
    uint32_t node;
    uint64_t id;
    uint64_t sequence;
  };
  static constexpr uint32_t kCached = 0xFFFFFFFFu;
  static constexpr uint32_t kNoBlock = 0xFFFFFFFFu;

  // A pipelined search's read in flight: one block, into its own part of
  // `buffer`, and the listed nodes waiting for it (several when they share
  // the block).
  struct Slot {
    uint32_t block = kNoBlock;  // kNoBlock: free
    std::vector<uint32_t> nodes;
  };

  graph::CandidateList list;
  // Hashed, not a mark per node: a thread's scratch then stays small
  // whatever the segment's size (hashed_visited_set.h).
  graph::HashedVisitedSet visited;   // nodes whose code distance was taken
  // Nodes taken by the walk, expanded as block mates, or reranked.
  graph::HashedVisitedSet expanded;
  codes::Sq8Query sq8;  // the query against SQ8 codes,
  codes::ResidualSq4Query residual;  // or against 4-bit codes (DiskSegmentReader::four_bit_codes)
  std::vector<Ranked> rerank;
  std::vector<std::pair<float, uint32_t>> groups;  // 4-bit codes: (group term, group)
  AlignedBuffer buffer;  // blocks being read (both walks)
  // Beam search:
  std::vector<uint32_t> beam;        // this hop's nodes
  std::vector<const char*> records;  // their records (cache or buffer)
  std::vector<uint32_t> slot;        // their block's index in `blocks`, or kCached
  std::vector<uint32_t> blocks;      // blocks read this hop
  // Pipelined search:
  std::vector<Slot> slots;  // beam_width of them, by ReadQueue tag
  std::vector<ReadQueue::Completion> done;
  bool in_use = false;
};

inline uint64_t MonotonicNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace shoal::disk

#endif  // SHOAL_SRC_DISK_DISK_SEARCH_SCRATCH_H_

// Copyright 2026 The shoal Authors.
//
// The node cache of a disk-resident segment: whole node records (full
// vector, id, sequence, neighbour list) pinned in RAM for the segment's
// lifetime, so that the first hops of every search read nothing from the
// file (DiskANN's cached BFS levels).
//
// Which nodes: breadth-first from the nodes where walks start (the medoid,
// then the entry points or the groups' nodes: a walk's first expansion is
// always one of them), all of them first (as many as fit, spread evenly
// over the list when they do not all fit), then their neighbours, level by
// level, until the next record would pass the byte budget. Records come
// from blocks that passed their checks (segment_checks.h); once in RAM they
// are trusted.
//
// Thread-safe: immutable after Build.

#ifndef SHOAL_SRC_DISK_NODE_CACHE_H_
#define SHOAL_SRC_DISK_NODE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "segment/segment_format.h"

namespace shoal::disk {

class NodeCache {
 public:
  // Reads the checked record of `node` (layout.node_bytes bytes) into `out`.
  using ReadRecordFn = std::function<absl::Status(uint32_t node, char* out)>;

  // Pins the records breadth-first from `seeds` (kNoNode and repeats
  // skipped; spread evenly over them when more than fit) while they fit in
  // `budget_bytes`. The first error of `read` stops the fill and is
  // returned; the cache then holds the records read before it (each whole,
  // as `read` gave it), and the caller decides whether the error matters
  // (DiskSegmentReader::Open: damage does, a failed read does not).
  // REQUIRES: every seed other than kNoNode < the segment's node count.
  absl::Status Build(const segment::NodeLayout& layout, std::span<const uint32_t> seeds,
                     size_t budget_bytes, const ReadRecordFn& read);

  // The pinned record of `node`, or null.
  const char* Find(uint32_t node) const {
    auto it = slot_.find(node);
    return it == slot_.end() ? nullptr : records_.data() + size_t{it->second} * node_bytes_;
  }
  size_t node_count() const { return slot_.size(); }
  size_t bytes() const { return records_.size(); }

 private:
  size_t node_bytes_ = 0;
  std::vector<char> records_;                     // node_bytes_ per pinned node
  absl::flat_hash_map<uint32_t, uint32_t> slot_;  // node -> index in records_
};

}  // namespace shoal::disk

#endif  // SHOAL_SRC_DISK_NODE_CACHE_H_

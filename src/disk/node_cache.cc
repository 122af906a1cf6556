// Copyright 2026 The shoal Authors.

#include "disk/node_cache.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "util/coding.h"
#include "util/status_macros.h"

namespace shoal::disk {

absl::Status NodeCache::Build(const segment::NodeLayout& layout, std::span<const uint32_t> seeds,
                              size_t budget_bytes, const ReadRecordFn& read) {
  node_bytes_ = layout.node_bytes;
  const size_t capacity = budget_bytes / layout.node_bytes;
  if (capacity == 0) return absl::OkStatus();
  // Records are appended in BFS order; a node is queued once (slot_ holds
  // every queued node, its slot assigned when queued).
  std::vector<uint32_t> starts;
  for (const uint32_t seed : seeds) {
    if (seed != segment::kNoNode) starts.push_back(seed);
  }
  // More starts than room: `capacity` of them spread evenly over the list
  // (the entry points follow the node order, a locality order), not the
  // first ones.
  const size_t take = std::min(starts.size(), capacity);
  std::deque<uint32_t> queue;
  for (size_t i = 0; i < take; ++i) {
    const uint32_t node = starts[i * starts.size() / take];
    if (slot_.try_emplace(node, static_cast<uint32_t>(slot_.size())).second) {
      queue.push_back(node);
    }
  }
  records_.reserve(capacity * node_bytes_);
  while (!queue.empty()) {
    const uint32_t node = queue.front();
    queue.pop_front();
    const size_t at = records_.size();
    records_.resize(at + node_bytes_);
    if (absl::Status s = read(node, records_.data() + at); !s.ok()) {
      // Slots follow the queue order, so the nodes read are those below
      // this one's slot.
      records_.resize(at);
      const uint32_t read_count = static_cast<uint32_t>(at / node_bytes_);
      absl::erase_if(slot_, [&](const auto& entry) { return entry.second >= read_count; });
      return s;
    }
    // Checked: degree <= R and every neighbour < vector_count.
    const char* record = records_.data() + at;
    const uint32_t degree = DecodeFixed32(record + layout.degree_offset());
    for (uint32_t k = 0; k < degree && slot_.size() < capacity; ++k) {
      const uint32_t v = DecodeFixed32(record + layout.neighbors_offset() + 4 * k);
      if (slot_.try_emplace(v, static_cast<uint32_t>(slot_.size())).second) queue.push_back(v);
    }
  }
  return absl::OkStatus();
}

}  // namespace shoal::disk

// Copyright 2026 The shoal Authors.
//
// The builder's working copy of the points and their adjacency lists, one
// 64-byte-aligned row per node:
//
//   vector f32[dim] | version u32 | count u32 | ids u32[capacity] | distances f32[capacity]
//
// Keeping a node's list right after its vector (as hnswlib does) matters:
// the build is bound by memory latency, and a search expands nodes whose
// vectors it has just read, so their lists are then a cache line or two away
// instead of in an unrelated array. Rows are stored in the locality order
// (locality_order.h), so neighbours' rows also tend to share pages.
//
// The rows live in transparent huge pages where the kernel allows
// (madvise(MADV_HUGEPAGE)): every hop of a search lands on an unrelated row,
// and with 4 KiB pages nearly each one also missed the TLB (a 100K x 128
// build touches ~30K pages; the TLB holds ~2K) — huge pages measured ~25%
// faster builds.
//
// Thread-safety: vectors are immutable; a node's version word (a seqlock,
// see VamanaBuilder) guards its count, ids and distances.

#ifndef SHOAL_SRC_GRAPH_NODE_STORE_H_
#define SHOAL_SRC_GRAPH_NODE_STORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>

#include "util/thread_pool.h"

namespace shoal::graph {

class NodeStore {
 public:
  // Copies row order[i] of `vectors` (row-major, dim floats per row) to node
  // i, for i < order.size(); every list starts empty with room for
  // `capacity` entries.
  NodeStore(const float* vectors, std::span<const uint32_t> order, uint32_t dim,
            uint32_t capacity, ThreadPool* pool);
  ~NodeStore();
  NodeStore(const NodeStore&) = delete;
  NodeStore& operator=(const NodeStore&) = delete;

  size_t size() const { return n_; }
  uint32_t dim() const { return dim_; }
  uint32_t capacity() const { return capacity_; }
  // Words (4 bytes) from one row to the next.
  size_t stride() const { return stride_; }

  const float* vector(uint32_t node) const {
    return reinterpret_cast<const float*>(row(node));
  }
  // The list's words: version, count, ids, distances.
  std::atomic_ref<uint32_t> version(uint32_t node) {
    return std::atomic_ref<uint32_t>(row(node)[dim_]);
  }
  uint32_t& count(uint32_t node) { return row(node)[dim_ + 1]; }
  uint32_t count(uint32_t node) const { return row(node)[dim_ + 1]; }
  uint32_t* ids(uint32_t node) { return row(node) + dim_ + 2; }
  const uint32_t* ids(uint32_t node) const { return row(node) + dim_ + 2; }
  float* distances(uint32_t node) {
    return reinterpret_cast<float*>(row(node) + dim_ + 2 + capacity_);
  }
  // The start of the list (version and count), for prefetching.
  const void* list(uint32_t node) const { return row(node) + dim_; }

 private:
  uint32_t* row(uint32_t node) const { return words_ + size_t{node} * stride_; }

  // 2 MiB: the row array is allocated in whole (transparent) huge pages.
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr std::align_val_t kAlignment{kHugePage};
  const size_t n_;
  const uint32_t dim_;
  const uint32_t capacity_;
  const size_t stride_;
  const size_t bytes_;  // allocated: n_ * stride_ words rounded up to kHugePage
  uint32_t* words_;     // aligned to kAlignment
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_NODE_STORE_H_

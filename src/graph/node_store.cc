// Copyright 2026 The shoal Authors.

#include "graph/node_store.h"

#include <algorithm>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace shoal::graph {
namespace {

constexpr size_t kWordsPerLine = 16;
constexpr size_t kCopyChunk = 4096;  // rows per parallel task

}  // namespace

NodeStore::NodeStore(const float* vectors, std::span<const uint32_t> order, uint32_t dim,
                     uint32_t capacity, ThreadPool* pool)
    : n_(order.size()),
      dim_(dim),
      capacity_(capacity),
      stride_((size_t{dim} + 2 + 2 * size_t{capacity} + kWordsPerLine - 1) / kWordsPerLine *
              kWordsPerLine),
      bytes_((std::max<size_t>(1, n_ * stride_ * sizeof(uint32_t)) + kHugePage - 1) /
             kHugePage * kHugePage),
      words_(static_cast<uint32_t*>(::operator new[](bytes_, kAlignment))) {
#if defined(__linux__)
  // Before first touch, so the pages are faulted in huge. Advice only: on
  // failure (THP disabled) we simply get small pages.
  madvise(words_, bytes_, MADV_HUGEPAGE);
#endif
  auto copy = [&](size_t chunk) {
    for (size_t i = chunk * kCopyChunk; i < std::min(n_, (chunk + 1) * kCopyChunk); ++i) {
      uint32_t* r = row(static_cast<uint32_t>(i));
      std::memcpy(r, vectors + size_t{order[i]} * dim, size_t{dim} * sizeof(float));
      r[dim] = 0;      // version
      r[dim + 1] = 0;  // count
    }
  };
  const size_t chunks = (n_ + kCopyChunk - 1) / kCopyChunk;
  if (pool == nullptr) {
    for (size_t c = 0; c < chunks; ++c) copy(c);
  } else {
    pool->ParallelFor(chunks, copy);
  }
}

NodeStore::~NodeStore() { ::operator delete[](words_, kAlignment); }

}  // namespace shoal::graph

// Copyright 2026 The shoal Authors.

#include "memtable/arena.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace shoal {

void Arena::FreeDeleter::operator()(float* p) const { std::free(p); }

Arena::Arena(size_t row_floats, size_t block_bytes)
    : row_floats_(row_floats),
      rows_per_block_(std::max<size_t>(1, block_bytes / (row_floats * sizeof(float)))) {}

void Arena::AddBlock(bool touch) {
  size_t bytes = rows_per_block_ * row_floats_ * sizeof(float);
  bytes = (bytes + 63) & ~size_t{63};  // aligned_alloc wants a multiple of the alignment
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();  // like operator new: out of memory
  if (touch) std::memset(p, 0, bytes);
  blocks_.emplace_back(static_cast<float*>(p));
}

uint32_t Arena::Append(const float* row_data) {
  if (rows_ == blocks_.size() * rows_per_block_) AddBlock(false);
  const uint32_t index = static_cast<uint32_t>(rows_++);
  std::memcpy(row(index), row_data, row_floats_ * sizeof(float));
  return index;
}

void Arena::Preallocate(size_t rows) {
  while (blocks_.size() * rows_per_block_ < rows) AddBlock(true);
}

}  // namespace shoal

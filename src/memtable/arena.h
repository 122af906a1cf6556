// Copyright 2026 The shoal Authors.
//
// Fixed-size rows (one vector each) in large, 64-byte-aligned blocks. Rows
// never move once written, and rows of one block are contiguous, so a scan
// can hand a whole block to a batch distance kernel. Not thread-safe.

#ifndef SHOAL_SRC_MEMTABLE_ARENA_H_
#define SHOAL_SRC_MEMTABLE_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace shoal {

class Arena {
 public:
  // Rows of `row_floats` floats in blocks of about `block_bytes` (at least
  // one row per block).
  Arena(size_t row_floats, size_t block_bytes);

  // Appends a row; returns its index.
  uint32_t Append(const float* row);
  float* row(uint32_t index) {
    return blocks_[index / rows_per_block_].get() + (index % rows_per_block_) * row_floats_;
  }
  const float* row(uint32_t index) const {
    return blocks_[index / rows_per_block_].get() + (index % rows_per_block_) * row_floats_;
  }
  // Allocates (and touches) blocks until `rows` rows fit without allocating.
  void Preallocate(size_t rows);

  size_t rows() const { return rows_; }
  size_t rows_per_block() const { return rows_per_block_; }
  size_t block_count() const { return blocks_.size(); }
  // First row of block b.
  const float* block(size_t b) const { return blocks_[b].get(); }
  size_t MemoryUsage() const { return blocks_.size() * rows_per_block_ * row_floats_ * sizeof(float); }

 private:
  struct FreeDeleter {
    void operator()(float* p) const;
  };
  void AddBlock(bool touch);

  const size_t row_floats_;
  const size_t rows_per_block_;
  size_t rows_ = 0;
  std::vector<std::unique_ptr<float[], FreeDeleter>> blocks_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_MEMTABLE_ARENA_H_

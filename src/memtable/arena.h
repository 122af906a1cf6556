// Copyright 2026 The shoal Authors.
//
// Fixed-size rows (one vector each) in large, 64-byte-aligned blocks. Rows
// never move once written, and rows appended one after another in a block
// are contiguous, so a scan can hand runs of them to a batch distance
// kernel. Not thread-safe.

#ifndef SHOAL_SRC_MEMTABLE_ARENA_H_
#define SHOAL_SRC_MEMTABLE_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "util/background_worker.h"
#include "util/mutex.h"

namespace shoal {

class Arena {
 public:
  // Rows of `row_floats` floats in blocks of about `block_bytes` (at least
  // one row per block). With a `prefaulter`, the next block is allocated and
  // touched on that thread while the current one fills.
  Arena(size_t row_floats, size_t block_bytes, BackgroundWorker* prefaulter = nullptr);

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

  size_t MemoryUsage() const { return blocks_.size() * rows_per_block_ * row_floats_ * sizeof(float); }

 private:
  struct FreeDeleter {
    void operator()(float* p) const;
  };
  // A block made ready in the background. Shared with the task that fills
  // it, so the arena may go away while the task runs.
  struct Spare {
    Mutex mu;
    float* block ABSL_GUARDED_BY(mu) = nullptr;
    bool pending ABSL_GUARDED_BY(mu) = false;
    ~Spare();
  };
  void AddBlock(bool touch);
  static float* AllocateBlock(size_t bytes, bool touch);
  size_t block_bytes() const;
  void PrepareSpare();

  const size_t row_floats_;
  const size_t rows_per_block_;
  size_t rows_ = 0;
  std::vector<std::unique_ptr<float[], FreeDeleter>> blocks_;
  BackgroundWorker* const prefaulter_;
  std::shared_ptr<Spare> spare_;
};

// Byte strings of any length (a memtable's record extras), copied into
// blocks of kBlockBytes (a longer string gets a block of its own). Copies
// never move. Not thread-safe.
class ByteArena {
 public:
  static constexpr size_t kBlockBytes = size_t{64} << 10;

  // Copies `bytes`; returns the copy (empty for empty bytes).
  std::string_view Copy(std::string_view bytes);
  // Bytes of the blocks allocated.
  size_t MemoryUsage() const { return allocated_; }

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;  // free space in the last block of kBlockBytes
  size_t left_ = 0;
  size_t allocated_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_MEMTABLE_ARENA_H_

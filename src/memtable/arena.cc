// Copyright 2026 The shoal Authors.

#include "memtable/arena.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace shoal {

void Arena::FreeDeleter::operator()(float* p) const { std::free(p); }

Arena::Spare::~Spare() {
  MutexLock lock(&mu);
  std::free(block);
}

Arena::Arena(size_t row_floats, size_t block_bytes, BackgroundWorker* prefaulter)
    : row_floats_(row_floats),
      rows_per_block_(std::max<size_t>(1, block_bytes / (row_floats * sizeof(float)))),
      prefaulter_(prefaulter),
      spare_(prefaulter != nullptr ? std::make_shared<Spare>() : nullptr) {}

size_t Arena::block_bytes() const {
  // aligned_alloc wants a multiple of the alignment.
  return (rows_per_block_ * row_floats_ * sizeof(float) + 63) & ~size_t{63};
}

float* Arena::AllocateBlock(size_t bytes, bool touch) {
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();  // like operator new: out of memory
  if (touch) std::memset(p, 0, bytes);
  return static_cast<float*>(p);
}

void Arena::PrepareSpare() {
  {
    MutexLock lock(&spare_->mu);
    if (spare_->pending || spare_->block != nullptr) return;
    spare_->pending = true;
  }
  prefaulter_->Schedule([spare = spare_, bytes = block_bytes()] {
    float* block = AllocateBlock(bytes, /*touch=*/true);
    MutexLock lock(&spare->mu);
    spare->block = block;
    spare->pending = false;
  });
}

void Arena::AddBlock(bool touch) {
  float* block = nullptr;
  if (spare_ != nullptr) {
    MutexLock lock(&spare_->mu);
    std::swap(block, spare_->block);
  }
  if (block == nullptr) block = AllocateBlock(block_bytes(), touch);
  blocks_.emplace_back(block);
  if (spare_ != nullptr) PrepareSpare();
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

std::string_view ByteArena::Copy(std::string_view bytes) {
  if (bytes.empty()) return {};
  char* out;
  if (bytes.size() > kBlockBytes / 4) {
    // A long string alone: the current block's free space stays for short ones.
    blocks_.emplace_back(new char[bytes.size()]);
    allocated_ += bytes.size();
    out = blocks_.back().get();
  } else {
    if (left_ < bytes.size()) {
      blocks_.emplace_back(new char[kBlockBytes]);
      allocated_ += kBlockBytes;
      next_ = blocks_.back().get();
      left_ = kBlockBytes;
    }
    out = next_;
    next_ += bytes.size();
    left_ -= bytes.size();
  }
  std::memcpy(out, bytes.data(), bytes.size());
  return std::string_view(out, bytes.size());
}

}  // namespace shoal

// Copyright 2026 The shoal Authors.
//
// A heap buffer aligned for direct I/O (posix_memalign to kAlignment), that
// grows on demand and keeps its bytes when it does not grow. Not
// thread-safe; one per reader thread, reused.

#ifndef SHOAL_SRC_UTIL_ALIGNED_BUFFER_H_
#define SHOAL_SRC_UTIL_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace shoal {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 4096;

  // At least `bytes` bytes at an address aligned to kAlignment. The content
  // is unspecified after a call that grows the buffer.
  char* Reserve(size_t bytes) {
    if (bytes > capacity_) {
      const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
      void* p = nullptr;
      if (posix_memalign(&p, kAlignment, rounded) != 0) throw std::bad_alloc();
      data_.reset(static_cast<char*>(p));
      capacity_ = rounded;
    }
    return data_.get();
  }
  char* data() const { return data_.get(); }
  size_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t capacity_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_ALIGNED_BUFFER_H_

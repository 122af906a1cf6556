// Copyright 2026 The shoal Authors.
//
// ReadQueue implementations (include/shoal/file_system.h):
//   - SyncReadQueue, RandomAccessFile::NewReadQueue's default: each read is
//     done with RandomAccessFile::Read in Submit, and Wait hands back what
//     Submit did. Any file has one; results are those of Read.
//   - the POSIX file system's io_uring queue (util/uring_read_queue.h).

#ifndef SHOAL_SRC_UTIL_READ_QUEUE_H_
#define SHOAL_SRC_UTIL_READ_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/file_system.h"

namespace shoal {

class SyncReadQueue final : public ReadQueue {
 public:
  // `file` is not owned and must outlive the queue.
  SyncReadQueue(const RandomAccessFile* file, size_t depth)
      : file_(file), depth_(depth < 1 ? 1 : depth) {}

  size_t depth() const override { return depth_; }
  size_t in_flight() const override { return done_.size(); }
  void Submit(uint64_t offset, size_t n, char* scratch, uint64_t tag) override {
    done_.push_back({tag, file_->Read(offset, n, scratch)});
  }
  void Wait(std::vector<Completion>* out) override {
    for (Completion& c : done_) out->push_back(std::move(c));
    done_.clear();
  }

 private:
  const RandomAccessFile* const file_;
  const size_t depth_;
  std::vector<Completion> done_;  // read, not yet returned by Wait
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_READ_QUEUE_H_

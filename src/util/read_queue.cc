// Copyright 2026 The shoal Authors.

#include "util/read_queue.h"

#include <memory>

namespace shoal {

std::unique_ptr<ReadQueue> RandomAccessFile::NewReadQueue(size_t depth) const {
  return std::make_unique<SyncReadQueue>(this, depth);
}

}  // namespace shoal

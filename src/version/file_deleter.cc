// Copyright 2026 The shoal Authors.

#include "version/file_deleter.h"

#include <utility>

namespace shoal {

void FileDeleter::Remove(const std::string& path) {
  {
    MutexLock lock(&mu_);
    if (holds_ > 0) {
      deferred_.push_back(path);
      return;
    }
  }
  // Outside the lock: the decision is what orders this removal before a
  // later hold's cut; the unlink itself may run after it.
  (void)fs_->RemoveFile(path);
}

void FileDeleter::Hold() {
  MutexLock lock(&mu_);
  ++holds_;
}

void FileDeleter::Release() {
  std::vector<std::string> due;
  {
    MutexLock lock(&mu_);
    if (--holds_ > 0) return;
    due = std::move(deferred_);
    deferred_.clear();
    released_.SignalAll();
  }
  for (const std::string& path : due) (void)fs_->RemoveFile(path);
}

void FileDeleter::WaitUntilNoHold() {
  MutexLock lock(&mu_);
  while (holds_ > 0) released_.Wait(&mu_);
}

void RemoveObsoleteFile(FileSystem* fs, FileDeleter* deleter, const std::string& path) {
  if (deleter != nullptr) {
    deleter->Remove(path);
  } else {
    (void)fs->RemoveFile(path);
  }
}

}  // namespace shoal

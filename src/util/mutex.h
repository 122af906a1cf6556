// Copyright 2026 The shoal Authors.
//
// The engine's locks: a reader-writer mutex and a condition variable with
// Clang thread-safety annotations (GUARDED_BY etc. work on them).
//
// Why not absl::Mutex: Debian's abseil is a prebuilt library. Its Mutex is
// invisible to ThreadSanitizer (which then reports every guarded access as a
// race), and its debug-build deadlock detector costs a hash lookup per lock on
// the write path. These wrap the C++ standard library's pthread-based types,
// which TSan understands and which cost ~20 ns uncontended.

#ifndef SHOAL_SRC_UTIL_MUTEX_H_
#define SHOAL_SRC_UTIL_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <shared_mutex>

#include "absl/base/thread_annotations.h"

namespace shoal {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // Takes the lock when it is free; never waits (may fail spuriously).
  // REQUIRES: not held by this thread.
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) { return mu_.try_lock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  friend class CondVar;
  std::shared_mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(Mutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->ReaderLock();
  }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Waits on a Mutex held exclusively.
class CondVar {
 public:
  // Atomically releases *mu, waits for a signal (or a spurious wake-up), and
  // reacquires *mu. REQUIRES: *mu held exclusively.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::shared_mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, for at most `timeout`.
  template <typename Rep, typename Period>
  void WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::shared_mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait_for(lock, timeout);
    lock.release();
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_MUTEX_H_

// Copyright 2026 The shoal Authors.
//
// The POSIX file system's ReadQueue (include/shoal/file_system.h): reads
// submitted to an io_uring ring (liburing), so that several are in flight
// while the caller works.
//
// Rings: one per thread (thread_local), made at the thread's first queue
// and kept until the thread exits: making one costs syscalls and locked
// memory, so never per query. Nothing is registered with a ring (each read
// names its file descriptor), so files may close while rings live; a queue
// only must not outlive its file. A queue borrows its thread's ring for its
// lifetime and drains it before it gives it back, so the next queue finds
// no stale completion. A second queue on the same thread at once (a search
// nested in another search's callback) gets null, and so does a queue in a
// child after fork on a thread whose ring the parent made: the caller reads
// synchronously instead.
//
// A read the kernel did not complete in full (an error, a short read,
// EINVAL from O_DIRECT) is redone with the file's Read, whose status, naming
// the file and the offset, is the completion's: the same bytes and errors
// as Read, always.
//
// Fallback: without liburing at build time, when io_uring is disabled
// (SetIoUringEnabled, or SHOAL_DISABLE_IO_URING=1 in the environment), or
// when the kernel refuses a ring (too old, seccomp, io_uring_disabled; said
// once on stderr, and no thread tries again), NewUringReadQueue gives null.

#ifndef SHOAL_SRC_UTIL_URING_READ_QUEUE_H_
#define SHOAL_SRC_UTIL_URING_READ_QUEUE_H_

#include <cstddef>
#include <memory>

#include "shoal/file_system.h"

namespace shoal {

// A queue of up to `depth` reads of `file` (not owned; must outlive the
// queue) on the calling thread's ring. Reads whose offset, length and
// buffer are multiples of 4096 use `direct_fd` when it is >= 0, others
// `buffered_fd`, as the POSIX Read does. Null when io_uring is unavailable
// (see above). REQUIRES: used by the calling thread only.
std::unique_ptr<ReadQueue> NewUringReadQueue(const RandomAccessFile* file, int buffered_fd,
                                             int direct_fd, size_t depth);

// Whether NewUringReadQueue may use io_uring: true unless the environment
// sets SHOAL_DISABLE_IO_URING=1 or a caller (tests, benchmarks) sets false.
void SetIoUringEnabled(bool enabled);
bool IoUringEnabled();

// Whether `queue` reads with io_uring (NewUringReadQueue made it).
bool IsUringReadQueue(const ReadQueue& queue);
// Whether shoal was built with liburing (SHOAL_HAVE_LIBURING).
bool IoUringBuilt();

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_URING_READ_QUEUE_H_

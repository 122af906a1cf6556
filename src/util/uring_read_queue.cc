// Copyright 2026 The shoal Authors.

#include "util/uring_read_queue.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef SHOAL_HAVE_LIBURING
#include <liburing.h>
#include <unistd.h>
#endif

namespace shoal {
namespace {

// -1: not decided yet (the environment decides on first use).
std::atomic<int> g_enabled{-1};

}  // namespace

void SetIoUringEnabled(bool enabled) { g_enabled.store(enabled ? 1 : 0); }

bool IoUringEnabled() {
  int e = g_enabled.load(std::memory_order_relaxed);
  if (e < 0) {
    const char* env = std::getenv("SHOAL_DISABLE_IO_URING");
    const int from_env = env != nullptr && std::strcmp(env, "1") == 0 ? 0 : 1;
    g_enabled.compare_exchange_strong(e, from_env);
    e = g_enabled.load();
  }
  return e == 1;
}

#ifndef SHOAL_HAVE_LIBURING

std::unique_ptr<ReadQueue> NewUringReadQueue(const RandomAccessFile*, int, int, size_t) {
  return nullptr;
}
bool IsUringReadQueue(const ReadQueue&) { return false; }
bool IoUringBuilt() { return false; }

#else  // SHOAL_HAVE_LIBURING

namespace {

constexpr uint64_t kDirectAlignment = 4096;
constexpr unsigned kMaxDepth = 256;
constexpr unsigned kMinRingEntries = 32;

// Set when the kernel refused a ring: no thread tries again.
std::atomic<bool> g_refused{false};

// One submitted read.
struct PendingRead {
  uint64_t offset;
  size_t n;
  char* scratch;
  uint64_t tag;
};

// A thread's ring, and the bookkeeping of the queue that borrows it.
struct ThreadRing {
  io_uring ring{};
  unsigned entries = 0;  // 0: no ring yet
  pid_t owner = 0;       // the process that made it (a forked child may not use it)
  bool in_use = false;   // a queue holds it
  std::vector<PendingRead> reads;  // by slot (the SQE's user_data)
  std::vector<uint32_t> free_slots;

  ~ThreadRing() {
    if (entries > 0) io_uring_queue_exit(&ring);
  }

  // Makes the ring hold at least `depth` entries; false when the kernel
  // refuses. A thread's first refusal turns io_uring off for the process
  // (said once); a refused growth keeps the smaller ring working.
  bool Ensure(unsigned depth) {
    if (entries >= depth) return true;
    unsigned want = kMinRingEntries;
    while (want < depth) want *= 2;
    io_uring_params params{};
#if defined(IORING_SETUP_COOP_TASKRUN) && defined(IORING_SETUP_SINGLE_ISSUER)
    // One thread submits and reaps: no interrupts to run completions.
    params.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER;
#endif
    io_uring fresh{};
    int r = io_uring_queue_init_params(want, &fresh, &params);
    if (r == -EINVAL) {  // a kernel before 6.0 does not know the flags
      params = io_uring_params{};
      r = io_uring_queue_init_params(want, &fresh, &params);
    }
    if (r < 0 && entries > 0) return false;  // keep the ring there is
    if (r < 0) {
      if (!g_refused.exchange(true)) {
        std::fprintf(stderr,
                     "shoal: io_uring_queue_init: %s; reading node blocks with pread, one at "
                     "a time (same results)\n",
                     std::strerror(-r));
      }
      return false;
    }
    if (entries > 0) io_uring_queue_exit(&ring);
    ring = fresh;
    entries = want;
    owner = getpid();
    return true;
  }
};

thread_local ThreadRing tls_ring;

class UringReadQueue final : public ReadQueue {
 public:
  UringReadQueue(ThreadRing* ring, const RandomAccessFile* file, int buffered_fd, int direct_fd,
                 unsigned depth)
      : r_(ring), file_(file), buffered_fd_(buffered_fd), direct_fd_(direct_fd), depth_(depth) {
    r_->in_use = true;
    r_->reads.resize(depth);
    r_->free_slots.clear();
    for (uint32_t i = depth; i > 0; --i) r_->free_slots.push_back(i - 1);
  }
  ~UringReadQueue() override {
    // The kernel may still write into buffers of reads in flight: wait for
    // every one before the caller may reuse them (or the ring's next queue
    // sees their completions).
    std::vector<Completion> ignored;
    while (in_flight_ > 0) Reap(&ignored, /*redo_failed=*/false);
    r_->in_use = false;
  }

  size_t depth() const override { return depth_; }
  size_t in_flight() const override { return in_flight_; }

  void Submit(uint64_t offset, size_t n, char* scratch, uint64_t tag) override {
    const uint32_t slot = r_->free_slots.back();
    r_->free_slots.pop_back();
    r_->reads[slot] = PendingRead{offset, n, scratch, tag};
    const bool aligned =
        ((offset | n | reinterpret_cast<uintptr_t>(scratch)) & (kDirectAlignment - 1)) == 0;
    const int fd = direct_fd_ >= 0 && aligned ? direct_fd_ : buffered_fd_;
    // Never null: at most depth_ <= entries reads are in flight, and each
    // is submitted at once.
    io_uring_sqe* sqe = io_uring_get_sqe(&r_->ring);
    io_uring_prep_read(sqe, fd, scratch, static_cast<unsigned>(n), offset);
    sqe->user_data = slot;
    ++in_flight_;
    int r;
    do {
      r = io_uring_submit(&r_->ring);
    } while (r == -EINTR || r == -EAGAIN || r == -EBUSY);
    // Another error leaves the read in the submission queue: Wait's
    // io_uring_submit_and_wait submits it again.
  }

  void Wait(std::vector<Completion>* out) override { Reap(out, /*redo_failed=*/true); }

 private:
  // Waits for at least one completion and takes all that are there. With
  // `redo_failed`, a read not done in full is redone with file_->Read.
  void Reap(std::vector<Completion>* out, bool redo_failed) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(&r_->ring, &cqe) != 0) {
      int r;
      while ((r = io_uring_submit_and_wait(&r_->ring, 1)) < 0) {
        if (r != -EINTR && r != -EAGAIN && r != -EBUSY) {
          // Cannot submit: wait for what the kernel has (never abandon a
          // buffer it may write into).
          while (io_uring_wait_cqe(&r_->ring, &cqe) == -EINTR) {
          }
          break;
        }
      }
    }
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(&r_->ring, head, cqe) {
      ++seen;
      const uint32_t slot = static_cast<uint32_t>(cqe->user_data);
      const PendingRead read = r_->reads[slot];
      r_->free_slots.push_back(slot);
      --in_flight_;
      absl::Status status;
      if (cqe->res != static_cast<int>(read.n) && redo_failed) {
        // Errors, short reads, O_DIRECT refused: Read says what it is.
        status = file_->Read(read.offset, read.n, read.scratch);
      }
      out->push_back({read.tag, std::move(status)});
    }
    io_uring_cq_advance(&r_->ring, seen);
  }

  ThreadRing* const r_;
  const RandomAccessFile* const file_;
  const int buffered_fd_;
  const int direct_fd_;
  const unsigned depth_;
  size_t in_flight_ = 0;
};

}  // namespace

std::unique_ptr<ReadQueue> NewUringReadQueue(const RandomAccessFile* file, int buffered_fd,
                                             int direct_fd, size_t depth) {
  if (!IoUringEnabled() || g_refused.load(std::memory_order_relaxed)) return nullptr;
  ThreadRing* ring = &tls_ring;
  if (ring->in_use) return nullptr;
  // After fork the child's copy of the thread's ring belongs to the parent.
  if (ring->entries > 0 && ring->owner != getpid()) return nullptr;
  const unsigned d = static_cast<unsigned>(depth < 1 ? 1 : depth > kMaxDepth ? kMaxDepth : depth);
  if (!ring->Ensure(d)) return nullptr;
  return std::make_unique<UringReadQueue>(ring, file, buffered_fd, direct_fd, d);
}

bool IsUringReadQueue(const ReadQueue& queue) {
  return dynamic_cast<const UringReadQueue*>(&queue) != nullptr;
}
bool IoUringBuilt() { return true; }

#endif  // SHOAL_HAVE_LIBURING

}  // namespace shoal

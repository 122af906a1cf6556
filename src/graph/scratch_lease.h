// Copyright 2026 The shoal Authors.
//
// A search's scratch buffers: the calling thread's own (kept between
// searches, so that a search allocates nothing once warm), or a fresh one
// when a search on this thread already holds them (a `visible` callback
// that searches again).

#ifndef SHOAL_SRC_GRAPH_SCRATCH_LEASE_H_
#define SHOAL_SRC_GRAPH_SCRATCH_LEASE_H_

#include <memory>

namespace shoal::graph {

// Scratch: default-constructible, with a `bool in_use` member.
template <class Scratch>
class ScratchLease {
 public:
  // `thread_scratch`: this thread's (thread_local) instance.
  explicit ScratchLease(Scratch* thread_scratch) : s_(thread_scratch) {
    if (s_->in_use) {
      own_ = std::make_unique<Scratch>();
      s_ = own_.get();
    }
    s_->in_use = true;
  }
  ~ScratchLease() { s_->in_use = false; }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Scratch* get() const { return s_; }

 private:
  std::unique_ptr<Scratch> own_;
  Scratch* s_;
};

}  // namespace shoal::graph

#endif  // SHOAL_SRC_GRAPH_SCRATCH_LEASE_H_

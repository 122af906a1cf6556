// Copyright 2026 The shoal Authors.
//
// A byte budget shared by the parts of a DB that hold RAM for as long as
// they live (Options::memory_budget_bytes: the codes and node caches of
// disk-resident segments). Parts reserve before they allocate and release
// when they go; a Reservation releases its bytes when destroyed, and keeps
// the budget alive until then (a segment may outlive its DB in a search
// that still holds it).
//
// Thread-safe. Always held by a shared_ptr (Create).

#ifndef SHOAL_SRC_UTIL_MEMORY_BUDGET_H_
#define SHOAL_SRC_UTIL_MEMORY_BUDGET_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

namespace shoal {

class MemoryBudget : public std::enable_shared_from_this<MemoryBudget> {
 public:
  // limit 0: no limit (every reservation succeeds).
  static std::shared_ptr<MemoryBudget> Create(size_t limit) {
    return std::shared_ptr<MemoryBudget>(new MemoryBudget(limit));
  }
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& o) noexcept
        : budget_(std::move(o.budget_)), bytes_(std::exchange(o.bytes_, 0)) {}
    Reservation& operator=(Reservation&& o) noexcept {
      if (this != &o) {
        Release();
        budget_ = std::move(o.budget_);
        bytes_ = std::exchange(o.bytes_, 0);
      }
      return *this;
    }
    ~Reservation() { Release(); }
    size_t bytes() const { return bytes_; }
    // Adds another reservation's bytes (of the same budget) to this one.
    void Merge(Reservation&& o) {
      if (budget_ == nullptr) budget_ = o.budget_;
      bytes_ += std::exchange(o.bytes_, 0);
      o.budget_.reset();
    }

   private:
    friend class MemoryBudget;
    Reservation(std::shared_ptr<MemoryBudget> budget, size_t bytes)
        : budget_(std::move(budget)), bytes_(bytes) {}
    void Release() {
      if (budget_ != nullptr && bytes_ > 0) budget_->used_.fetch_sub(bytes_);
      budget_.reset();
      bytes_ = 0;
    }
    std::shared_ptr<MemoryBudget> budget_;
    size_t bytes_ = 0;
  };

  // Reserves `bytes` if they fit what is left; otherwise reserves nothing
  // and returns false.
  bool TryReserve(size_t bytes, Reservation* out) {
    size_t used = used_.load();
    do {
      if (limit_ != 0 && (bytes > limit_ || used > limit_ - bytes)) return false;
    } while (!used_.compare_exchange_weak(used, used + bytes));
    *out = Reservation(shared_from_this(), bytes);
    return true;
  }
  // Reserves `bytes` whether or not they fit (for what a part cannot do
  // without); the budget then stays exceeded until they are released.
  Reservation ReserveAnyway(size_t bytes) {
    used_.fetch_add(bytes);
    return Reservation(shared_from_this(), bytes);
  }
  // Bytes still free (0 when exceeded; SIZE_MAX-like when unlimited).
  size_t available() const {
    if (limit_ == 0) return ~size_t{0};
    const size_t used = used_.load();
    return used >= limit_ ? 0 : limit_ - used;
  }
  size_t used() const { return used_.load(); }
  size_t limit() const { return limit_; }

 private:
  explicit MemoryBudget(size_t limit) : limit_(limit) {}

  const size_t limit_;
  std::atomic<size_t> used_{0};
};

}  // namespace shoal

#endif  // SHOAL_SRC_UTIL_MEMORY_BUDGET_H_
